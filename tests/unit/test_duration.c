/* ISO-8601 durations: parsing, formatting, MaxValue, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ent_duration.h"

static int64_t parse_ok(const char *text)
{
    int64_t ms = -12345;
    char err[160] = "";
    int rc = ent_duration_parse(text, &ms, err, sizeof err);
    if (rc != 0)
        fail_msg("\"%s\" should parse, got: %s", text, err);
    return ms;
}

static void expect_error(const char *text, const char *fragment)
{
    int64_t ms = 777;
    char err[160] = "";
    assert_int_equal(ent_duration_parse(text, &ms, err, sizeof err), -1);
    assert_int_equal(ms, 777); /* untouched */
    if (!strstr(err, fragment))
        fail_msg("\"%s\": error \"%s\" lacks \"%s\"", text ? text : "(null)", err, fragment);
}

static void test_simple_units(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("PT1M"), 60000);
    assert_int_equal(parse_ok("PT5S"), 5000);
    assert_int_equal(parse_ok("PT1H"), 3600000);
    assert_int_equal(parse_ok("P14D"), 14 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(parse_ok("P1W"), 7 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(parse_ok("PT0S"), 0);
    assert_int_equal(parse_ok("P0D"), 0);
    assert_int_equal(parse_ok("PT20S"), 20000);
    assert_int_equal(parse_ok("PT10M"), 600000);
}

static void test_combined(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("P1DT2H"), ENT_DURATION_MS_PER_DAY + 2 * 3600000);
    assert_int_equal(parse_ok("PT1H30M"), 5400000);
    assert_int_equal(parse_ok("PT1H30M15S"), 5415000);
    assert_int_equal(parse_ok("P1DT1H1M1S"), ENT_DURATION_MS_PER_DAY + 3661000);
    assert_int_equal(parse_ok("P2W3D"), 17 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(parse_ok("PT90M"), 5400000); /* components need not be normalised */
    assert_int_equal(parse_ok("PT3600S"), 3600000);
}

static void test_fractions(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("PT0.5S"), 500);
    assert_int_equal(parse_ok("PT1.25S"), 1250);
    assert_int_equal(parse_ok("PT0.001S"), 1);
    assert_int_equal(parse_ok("PT0.0009S"), 0);      /* below a millisecond: truncated */
    assert_int_equal(parse_ok("PT1.9999999S"), 1999);
    assert_int_equal(parse_ok("PT0,5S"), 500);       /* ISO allows a comma */
    assert_int_equal(parse_ok("PT1M0.100S"), 60100);
}

static void test_years_months_approximated(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("P1Y"), 365 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(parse_ok("P1M"), 30 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(parse_ok("P1Y2M3D"), (365 + 60 + 3) * ENT_DURATION_MS_PER_DAY);
    /* M before T is months, after T minutes. */
    assert_int_equal(parse_ok("P1MT1M"), 30 * ENT_DURATION_MS_PER_DAY + 60000);
}

static void test_lenient_spelling(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("pt1m"), 60000);
    assert_int_equal(parse_ok("p1dt2h"), ENT_DURATION_MS_PER_DAY + 7200000);
    assert_int_equal(parse_ok("  PT1M  "), 60000);
}

static void test_max_value_is_unlimited(void **state)
{
    (void)state;
    assert_true(parse_ok("P10675199DT2H48M5.4775807S") == ENT_DURATION_UNLIMITED);
    assert_true(parse_ok(ENT_DURATION_MAXVALUE_TEXT) == ENT_DURATION_UNLIMITED);
    /* Anything at or above it, or overflowing, is unlimited too. */
    assert_true(parse_ok("P10675199DT2H48M5.477S") == ENT_DURATION_UNLIMITED);
    assert_true(parse_ok("P10675200D") == ENT_DURATION_UNLIMITED);
    assert_true(parse_ok("P99999999999999999999999D") == ENT_DURATION_UNLIMITED);
    assert_true(parse_ok("P999999999999Y") == ENT_DURATION_UNLIMITED);
    /* Just below is a real duration. */
    int64_t below = parse_ok("P10675199DT2H48M5.476S");
    assert_true(below == ENT_DURATION_MAXVALUE_MS - 1);
    assert_true(below != ENT_DURATION_UNLIMITED);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_error("", "empty");
    expect_error(NULL, "empty");
    expect_error("-PT1S", "negative");
    expect_error("  -P1D", "negative");
    expect_error("1M", "starts with 'P'");
    expect_error("T1M", "starts with 'P'");
    expect_error("00:01:00", "starts with 'P'");
    expect_error("P", "at least one component");
    expect_error("PT", "'T' must be followed");
    expect_error("P1DT", "'T' must be followed");
    expect_error("PT5", "followed by a designator");
    expect_error("P1H", "belongs after 'T'");
    expect_error("P1S", "belongs after 'T'");
    expect_error("PT1D", "not a duration designator");
    expect_error("PT1X", "not a duration designator");
    expect_error("PT1S1M", "out of order");
    expect_error("PT1M1M", "repeated");
    expect_error("P1D1Y", "out of order");
    expect_error("P0.5D", "only allowed on seconds");
    expect_error("PT1.5M", "only allowed on seconds");
    expect_error("PT1.S", "followed by digits");
    expect_error("PTM", "expected a number");
    expect_error("P-1D", "signs are not allowed");
    expect_error("PT+1S", "signs are not allowed");
    expect_error("PT1M x", "after the duration");
    expect_error("PT1M garbage", "after the duration");
    expect_error("abc", "starts with 'P'");
}

static void expect_format(int64_t ms, const char *want)
{
    char buf[ENT_DURATION_TEXT_MAX];
    assert_string_equal(ent_duration_format(ms, buf, sizeof buf), want);
}

static void test_format(void **state)
{
    (void)state;
    expect_format(0, "PT0S");
    expect_format(500, "PT0.5S");
    expect_format(1, "PT0.001S");
    expect_format(1250, "PT1.25S");
    expect_format(5000, "PT5S");
    expect_format(60000, "PT1M");
    expect_format(3600000, "PT1H");
    expect_format(5400000, "PT1H30M");
    expect_format(3601000, "PT1H1S");
    expect_format(14 * ENT_DURATION_MS_PER_DAY, "P14D");
    expect_format(ENT_DURATION_MS_PER_DAY + 7200000, "P1DT2H");
    expect_format(ENT_DURATION_MS_PER_DAY + 500, "P1DT0.5S");
    expect_format(365 * ENT_DURATION_MS_PER_DAY, "P365D");
    expect_format(-1000, "-PT1S");
    expect_format(ENT_DURATION_UNLIMITED, "P10675199DT2H48M5.4775807S");
    expect_format(ENT_DURATION_MAXVALUE_MS, ENT_DURATION_MAXVALUE_TEXT);
    expect_format(ENT_DURATION_MAXVALUE_MS - 1, "P10675199DT2H48M5.476S");
}

static void test_format_small_buffer(void **state)
{
    (void)state;
    char buf[5];
    assert_string_equal(ent_duration_format(ENT_DURATION_MS_PER_DAY + 7200000, buf, sizeof buf), "P1DT");
    assert_null(ent_duration_format(1, NULL, 0));
}

static void test_round_trip(void **state)
{
    (void)state;
    const int64_t values[] = {0, 1, 999, 1000, 5000, 59999, 60000, 300000, 600000, 3600000, 86399999,
                              ENT_DURATION_MS_PER_DAY, 7 * ENT_DURATION_MS_PER_DAY, 123456789012,
                              ENT_DURATION_UNLIMITED};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char buf[ENT_DURATION_TEXT_MAX];
        ent_duration_format(values[i], buf, sizeof buf);
        assert_true(parse_ok(buf) == values[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_units),
        cmocka_unit_test(test_combined),
        cmocka_unit_test(test_fractions),
        cmocka_unit_test(test_years_months_approximated),
        cmocka_unit_test(test_lenient_spelling),
        cmocka_unit_test(test_max_value_is_unlimited),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_small_buffer),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
