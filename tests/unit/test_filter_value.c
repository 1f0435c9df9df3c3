/* Text forms of filter values: doubles as C# prints them, timestamps,
 * timespans and guids, and their parsers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ent_filter.h"

typedef struct double_case {
    double d;
    const char *text;
} double_case;

static const double_case double_cases[] = {
    {0.0, "0"},           {1.0, "1"},           {-1.0, "-1"},         {2.5, "2.5"},
    {0.1, "0.1"},         {1.0 / 3, "0.3333333333333333"},           {100.0, "100"},
    {1e14, "100000000000000"},                  {1e15, "1E+15"},      {1.5e20, "1.5E+20"},
    {1e-4, "0.0001"},     {1e-5, "1E-05"},      {-2.5e-7, "-2.5E-07"}, {123.456, "123.456"},
    {1e308, "1E+308"},    {5e-324, "5E-324"},   {9007199254740993.0, "9007199254740992"},
    {123456789012345678.0, "1.2345678901234568E+17"}, {-60.0, "-60"},
};

static void test_format_double(void **state)
{
    (void)state;
    char buf[64];
    for (size_t i = 0; i < sizeof double_cases / sizeof double_cases[0]; i++) {
        ent_fv_format_double(double_cases[i].d, buf, sizeof buf);
        if (strcmp(buf, double_cases[i].text) != 0)
            fail_msg("row %zu: got %s want %s", i, buf, double_cases[i].text);
    }
    ent_fv_format_double(NAN, buf, sizeof buf);
    assert_string_equal(buf, "NaN");
    ent_fv_format_double(-INFINITY, buf, sizeof buf);
    assert_string_equal(buf, "-Infinity");
    ent_fv_format_double(INFINITY, buf, sizeof buf);
    assert_string_equal(buf, "Infinity");
    /* snprintf contract: the needed length comes back even when cut. */
    assert_int_equal(ent_fv_format_double(123.456, buf, 4), 7);
    assert_string_equal(buf, "123");
}

static void test_time(void **state)
{
    (void)state;
    char buf[64];
    int64_t ms;
    ent_fv_format_time(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    ent_fv_format_time(INT64_C(1704067200123), buf, sizeof buf);
    assert_string_equal(buf, "2024-01-01T00:00:00.123Z");
    ent_fv_format_time(-1, buf, sizeof buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
    ent_fv_format_time(INT64_C(951782400000), buf, sizeof buf); /* leap day 2000 */
    assert_string_equal(buf, "2000-02-29T00:00:00.000Z");

    const char *good[] = {"2024-01-01T00:00:00Z", "2024-01-01T00:00:00", "2024-01-01 00:00:00.000Z",
                          "2024-01-01T01:00:00+01:00", "2023-12-31T23:00:00-01:00", "2024-01-01t00:00:00.0000000z"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(ent_fv_parse_time(good[i], strlen(good[i]), &ms), 0);
        assert_int_equal(ms, INT64_C(1704067200000));
    }
    assert_int_equal(ent_fv_parse_time("2024-01-01T00:00:00.5Z", 22, &ms), 0);
    assert_int_equal(ms, INT64_C(1704067200500));
    assert_int_equal(ent_fv_parse_time("2000-02-29T00:00:00Z", 20, &ms), 0);
    const char *bad[] = {"",
                         "2024-01-01",
                         "2024-13-01T00:00:00Z",
                         "2024-02-30T00:00:00Z",
                         "2023-02-29T00:00:00Z",
                         "2024-01-01T24:00:00Z",
                         "2024-01-01T00:00:00.Z",
                         "2024-01-01T00:00:00Zjunk",
                         "2024-01-01T00:00:00+0100",
                         "24-01-01T00:00:00Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (ent_fv_parse_time(bad[i], strlen(bad[i]), &ms) == 0)
            fail_msg("\"%s\" parsed", bad[i]);
}

static void test_duration(void **state)
{
    (void)state;
    char buf[64];
    ent_fv_format_duration(0, buf, sizeof buf);
    assert_string_equal(buf, "00:00:00");
    ent_fv_format_duration(60000, buf, sizeof buf);
    assert_string_equal(buf, "00:01:00");
    ent_fv_format_duration(1500, buf, sizeof buf);
    assert_string_equal(buf, "00:00:01.5000000");
    ent_fv_format_duration(-(INT64_C(86400000) * 2 + 3723004), buf, sizeof buf);
    assert_string_equal(buf, "-2.01:02:03.0040000");
    ent_fv_format_duration(INT64_MIN, buf, sizeof buf);
    assert_non_null(strchr(buf, '-'));
}

static void test_uuid(void **state)
{
    (void)state;
    unsigned char u[16], w[16];
    char buf[64];
    const char *s = "a1b2c3d4-0000-4000-8000-00000000000f";
    assert_int_equal(ent_fv_parse_uuid(s, strlen(s), u), 0);
    assert_int_equal(ent_fv_format_uuid(u, buf, sizeof buf), ENT_FV_UUID_TEXT_LEN);
    assert_string_equal(buf, s);
    assert_int_equal(u[0], 0xa1);
    assert_int_equal(u[15], 0x0f);
    assert_int_equal(ent_fv_parse_uuid("{A1B2C3D4-0000-4000-8000-00000000000F}", 38, w), 0);
    assert_memory_equal(u, w, 16);
    assert_int_equal(ent_fv_parse_uuid("a1b2c3d4000040008000 00000000000f", 33, w), -1);
    assert_int_equal(ent_fv_parse_uuid("a1b2c3d400004000800000000000000f", 32, w), 0);
    assert_memory_equal(u, w, 16);
    assert_int_equal(ent_fv_parse_uuid("a1b2c3d4-0000-4000-8000_00000000000f", 36, w), -1);
    assert_int_equal(ent_fv_parse_uuid("g1b2c3d4-0000-4000-8000-00000000000f", 36, w), -1);
    assert_int_equal(ent_fv_parse_uuid("", 0, w), -1);
}

static void test_type_names(void **state)
{
    (void)state;
    assert_string_equal(ent_fv_type_name(ENT_FV_NULL), "null");
    assert_string_equal(ent_fv_type_name(ENT_FV_INT), "int64");
    assert_string_equal(ent_fv_type_name(ENT_FV_TIME), "timestamp");
    assert_string_equal(ent_fv_type_name(ENT_FV_DURATION), "timespan");
    assert_string_equal(ent_fv_type_name(ENT_FV_UUID), "guid");
    assert_string_equal(ent_fv_type_name((ent_fv_type)99), "?");
    ent_filter_value v = ent_fv_cstr(NULL);
    assert_int_equal(v.type, ENT_FV_STRING);
    assert_int_equal(v.u.s.len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_double), cmocka_unit_test(test_time),       cmocka_unit_test(test_duration),
        cmocka_unit_test(test_uuid),          cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
