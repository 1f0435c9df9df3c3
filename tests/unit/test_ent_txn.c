/* Transaction rules (entities/ent_txn.h): the 100-operation limit (a batch
 * counts per message), the 2-minute timeout, a refused operation dooming the
 * transaction, and what a discharge does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_txn.h"

#define T0 INT64_C(1700000000000)

static void test_operations_up_to_the_limit(void **state)
{
    (void)state;
    ent_txn_state t = {.declared_ms = T0};
    char err[256] = "";
    for (int i = 0; i < ENT_TXN_MAX_OPS; i++)
        assert_int_equal(ent_txn_admit(&t, 1, T0 + i, err, sizeof err), SB_OK);
    assert_int_equal(t.ops, ENT_TXN_MAX_OPS);
    assert_int_equal(ent_txn_admit(&t, 1, T0, err, sizeof err), SB_ERR_QUOTA_EXCEEDED);
    assert_non_null(strstr(err, "100"));
    /* doomed: nothing more joins, and the discharge cannot commit */
    assert_int_equal(ent_txn_admit(&t, 1, T0, err, sizeof err), SB_ERR_QUOTA_EXCEEDED);
    assert_non_null(strstr(err, "rolled back"));
    assert_int_equal(ent_txn_discharge(&t, false, T0, err, sizeof err), SB_ERR_QUOTA_EXCEEDED);
    /* a rollback is always allowed */
    assert_int_equal(ent_txn_discharge(&t, true, T0, err, sizeof err), SB_NO_CONTENT);
}

static void test_a_batch_counts_per_message(void **state)
{
    (void)state;
    ent_txn_state t = {.declared_ms = T0};
    char err[256];
    assert_int_equal(ent_txn_admit(&t, 60, T0, err, sizeof err), SB_OK);
    assert_int_equal(ent_txn_admit(&t, 41, T0, err, sizeof err), SB_ERR_QUOTA_EXCEEDED);
    assert_int_equal(t.ops, 60);
    ent_txn_state u = {.declared_ms = T0};
    assert_int_equal(ent_txn_admit(&u, 100, T0, err, sizeof err), SB_OK);
    assert_int_equal(ent_txn_discharge(&u, false, T0, err, sizeof err), SB_OK);
}

static void test_the_timeout(void **state)
{
    (void)state;
    ent_txn_state t = {.declared_ms = T0};
    char err[256];
    assert_int_equal(ent_txn_admit(&t, 1, T0 + ENT_TXN_TIMEOUT_MS, err, sizeof err), SB_OK);
    assert_int_equal(ent_txn_discharge(&t, false, T0 + ENT_TXN_TIMEOUT_MS, err, sizeof err), SB_OK);
    assert_int_equal(ent_txn_discharge(&t, false, T0 + ENT_TXN_TIMEOUT_MS + 1, err, sizeof err), SB_ERR_TIMEOUT);
    assert_non_null(strstr(err, "120 seconds"));
    assert_int_equal(ent_txn_admit(&t, 1, T0 + ENT_TXN_TIMEOUT_MS + 1, err, sizeof err), SB_ERR_TIMEOUT);
    assert_int_equal(t.doomed, SB_ERR_TIMEOUT);
    assert_int_equal(ent_txn_discharge(&t, true, T0 + ENT_TXN_TIMEOUT_MS + 1, err, sizeof err), SB_NO_CONTENT);
}

static void test_operations_that_join(void **state)
{
    (void)state;
    assert_true(ent_txn_operation_joins("com.microsoft:update-disposition"));
    assert_true(ent_txn_operation_joins("com.microsoft:schedule-message"));
    assert_false(ent_txn_operation_joins("com.microsoft:peek-message"));
    assert_false(ent_txn_operation_joins("com.microsoft:renew-lock"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operations_up_to_the_limit),
        cmocka_unit_test(test_a_batch_counts_per_message),
        cmocka_unit_test(test_the_timeout),
        cmocka_unit_test(test_operations_that_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
