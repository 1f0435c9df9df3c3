/* Which names a snapshot may have and which namespace a reset or snapshot
 * request may name (entities/ent_snapshot.h), and the clock's one way back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ent_clock.h"
#include "ent_snapshot.h"

static void expect_name(const char *name, sb_status want, const char *fragment)
{
    char why[256] = "";
    sb_status st = ent_snapshot_name_check(name, why, sizeof why);
    if (st != want)
        fail_msg("'%s': expected %s, got %s (%s)", name ? name : "(null)", sb_status_name(want), sb_status_name(st),
                 why);
    if (fragment && !strstr(why, fragment))
        fail_msg("'%s': the reason \"%s\" lacks \"%s\"", name ? name : "(null)", why, fragment);
}

static void test_snapshot_names(void **state)
{
    (void)state;
    expect_name("base", SB_OK, NULL);
    expect_name("Before-Test_1.2", SB_OK, NULL);
    expect_name("0", SB_OK, NULL);
    char longest[ENT_SNAPSHOT_NAME_MAX + 2];
    memset(longest, 'n', ENT_SNAPSHOT_NAME_MAX);
    longest[ENT_SNAPSHOT_NAME_MAX] = 0;
    expect_name(longest, SB_OK, NULL);
    longest[ENT_SNAPSHOT_NAME_MAX] = 'n';
    longest[ENT_SNAPSHOT_NAME_MAX + 1] = 0;
    expect_name(longest, SB_ERR_ARGUMENT, "65 characters long; the most is 64");
    expect_name("", SB_ERR_ARGUMENT, "needs a name");
    expect_name(NULL, SB_ERR_ARGUMENT, "needs a name");
    expect_name("a/b", SB_ERR_ARGUMENT, "holds '/' at position 2");
    expect_name("bad name", SB_ERR_ARGUMENT, "holds ' ' at position 4");
    expect_name("$declared", SB_ERR_ARGUMENT, "holds '$' at position 1"); /* the emulator's own */
    expect_name("caf\xc3\xa9", SB_ERR_ARGUMENT, "at position 4");
    expect_name("-x", SB_ERR_ARGUMENT, "must start with a letter or a digit");
    expect_name(".", SB_ERR_ARGUMENT, "must start with a letter or a digit");
    expect_name("..", SB_ERR_ARGUMENT, "must start with a letter or a digit");
    expect_name("_x", SB_ERR_ARGUMENT, "must start with a letter or a digit");
    /* every ASCII character, alone after a letter */
    for (int c = 1; c < 128; c++) {
        char name[3] = {'a', (char)c, 0};
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-';
        char why[256];
        assert_int_equal(ent_snapshot_name_check(name, why, sizeof why), ok ? SB_OK : SB_ERR_ARGUMENT);
    }
}

static void test_namespaces(void **state)
{
    (void)state;
    char why[512] = "";
    /* none, "default", the Config.json name and sbemulatorns, in any case */
    assert_int_equal(ent_namespace_check(NULL, "orders-ns", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_check("", "orders-ns", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_check("default", "orders-ns", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_check("DEFAULT", "orders-ns", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_check("Orders-NS", "orders-ns", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_check("sbemulatorns", "orders-ns", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_check("SbEmulatorNs", NULL, why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_check("sbemulatorns", "", why, sizeof why), SB_OK);
    /* any other: not found, saying there are no others yet */
    assert_int_equal(ent_namespace_check("other", "orders-ns", why, sizeof why), SB_ERR_NOT_FOUND);
    assert_non_null(strstr(why, "The namespace 'other' does not exist"));
    assert_non_null(strstr(why, "namespaces other than the default one ('orders-ns', also called 'default') do not "
                                "exist yet"));
    assert_int_equal(ent_namespace_check("other", NULL, why, sizeof why), SB_ERR_NOT_FOUND);
    assert_non_null(strstr(why, "('sbemulatorns', also called 'default')"));
}

static void test_clock_set_offset(void **state)
{
    (void)state;
    assert_int_equal(ent_clock_advance(3600000), 0);
    assert_int_equal(ent_clock_offset_ms(), 3600000);
    assert_int_equal(ent_clock_set_offset(0), 0); /* a reset: back to real time */
    assert_int_equal(ent_clock_offset_ms(), 0);
    int64_t skew = ent_clock_now_ms() - ent_clock_wall_ms();
    assert_true(skew >= 0 && skew < 1000);
    assert_int_equal(ent_clock_set_offset(7200000), 0); /* a restore: the snapshot's */
    assert_int_equal(ent_clock_offset_ms(), 7200000);
    assert_int_equal(ent_clock_set_offset(-1), -1);
    assert_int_equal(ent_clock_offset_ms(), 7200000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_names),
        cmocka_unit_test(test_namespaces),
        cmocka_unit_test(test_clock_set_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
