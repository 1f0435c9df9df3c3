/* Which names a snapshot may have (entities/ent_snapshot.h), and the clocks'
 * one way back, per namespace. */
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

/* One clock per namespace: moving one moves no other; 0 is the default's;
 * only moved clocks are kept, in id order. */
static void test_clocks_per_namespace(void **state)
{
    (void)state;
    ent_clock_reset_all();
    const int32_t *ids;
    const int64_t *offsets;
    assert_int_equal(ent_clock_moved(&ids, &offsets), 0);
    assert_int_equal(ent_clock_advance_in(7, 60000), 0);
    assert_int_equal(ent_clock_advance_in(3, 1000), 0);
    assert_int_equal(ent_clock_advance_in(7, 5000), 0);
    assert_int_equal(ent_clock_offset_ms_in(7), 65000);
    assert_int_equal(ent_clock_offset_ms_in(3), 1000);
    assert_int_equal(ent_clock_offset_ms_in(5), 0);
    assert_int_equal(ent_clock_offset_ms(), 0);
    assert_int_equal(ent_clock_offset_ms_in(0), 0);
    assert_int_equal(ent_clock_advance_in(0, 9000), 0); /* 0: the default namespace */
    assert_int_equal(ent_clock_offset_ms(), 9000);
    assert_int_equal(ent_clock_offset_ms_in(1), 9000);
    int64_t d = ent_clock_now_ms_in(7) - ent_clock_now_ms_in(5);
    assert_true(d >= 64000 && d <= 66000);
    assert_int_equal(ent_clock_moved(&ids, &offsets), 3);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], 3);
    assert_int_equal(ids[2], 7);
    assert_int_equal(offsets[2], 65000);
    assert_int_equal(ent_clock_advance_in(3, -1), -1);
    assert_int_equal(ent_clock_set_offset_in(3, 0), 0); /* back to real time: no longer kept */
    assert_int_equal(ent_clock_moved(&ids, &offsets), 2);
    assert_int_equal(ids[1], 7);
    for (int32_t ns = 100; ns > 10; ns--) /* grows past its first room, stays sorted */
        assert_int_equal(ent_clock_set_offset_in(ns, ns), 0);
    size_t n = ent_clock_moved(&ids, &offsets);
    assert_int_equal(n, 92);
    for (size_t i = 1; i < n; i++)
        assert_true(ids[i - 1] < ids[i]);
    assert_int_equal(ent_clock_offset_ms_in(50), 50);
    ent_clock_reset_all();
    assert_int_equal(ent_clock_offset_ms_in(7), 0);
    assert_int_equal(ent_clock_offset_ms(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_names),
        cmocka_unit_test(test_clock_set_offset),
        cmocka_unit_test(test_clocks_per_namespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
