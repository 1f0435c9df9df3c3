/* What must follow a committed settlement (entities/ent_settle.h): the one
 * rule a link's disposition, $management update-disposition and a
 * transaction's commit all carry out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ent_settle.h"
#include "store_queue.h"

static void expect_after(ent_settle_kind kind, bool redeliver, bool dead_lettered)
{
    ent_settle_after a = ent_settle_after_commit(kind);
    assert_int_equal(a.redeliver, redeliver);
    assert_int_equal(a.dead_lettered, dead_lettered);
}

static void test_each_outcome(void **state)
{
    (void)state;
    expect_after(ENT_SETTLE_COMPLETE, false, false);
    expect_after(ENT_SETTLE_DEFER, false, false);
    /* back where it was: its receivers look from the start again */
    expect_after(ENT_SETTLE_RELEASE, true, false);
    /* back, or dead-lettered when it was the last delivery MaxDeliveryCount allows */
    expect_after(ENT_SETTLE_ABANDON, true, true);
    /* where dead letters go (a forward topic routes it at once) */
    expect_after(ENT_SETTLE_DEADLETTER, false, true);
}

static void test_store_kinds_are_the_same_codes(void **state)
{
    (void)state;
    /* the store passes its kinds through as these (and STMT_SETTLE_SET reads the numbers) */
    assert_int_equal(STORE_SETTLE_COMPLETE, 0);
    assert_int_equal(STORE_SETTLE_ABANDON, 1);
    assert_int_equal(STORE_SETTLE_DEADLETTER, 2);
    assert_int_equal(STORE_SETTLE_DEFER, 3);
    assert_int_equal(STORE_SETTLE_RELEASE, 4);
}

static void test_outcomes_and_statuses(void **state)
{
    (void)state;
    assert_int_equal(ent_settle_kind_of_outcome(ENT_OUTCOME_ACCEPTED, false), ENT_SETTLE_COMPLETE);
    assert_int_equal(ent_settle_kind_of_outcome(ENT_OUTCOME_REJECTED, false), ENT_SETTLE_DEADLETTER);
    assert_int_equal(ent_settle_kind_of_outcome(ENT_OUTCOME_RELEASED, false), ENT_SETTLE_RELEASE);
    assert_int_equal(ent_settle_kind_of_outcome(ENT_OUTCOME_MODIFIED, false), ENT_SETTLE_ABANDON);
    assert_int_equal(ent_settle_kind_of_outcome(ENT_OUTCOME_MODIFIED, true), ENT_SETTLE_DEFER);
    ent_settle_kind k;
    assert_int_equal(ent_settle_kind_of_status("suspended", &k), 0);
    assert_int_equal(k, ENT_SETTLE_DEADLETTER);
    assert_int_equal(ent_settle_kind_of_status("defered", &k), 0); /* as the SDKs spell it */
    assert_int_equal(k, ENT_SETTLE_DEFER);
    assert_int_equal(ent_settle_kind_of_status("Completed", &k), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_outcome),
        cmocka_unit_test(test_store_kinds_are_the_same_codes),
        cmocka_unit_test(test_outcomes_and_statuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
