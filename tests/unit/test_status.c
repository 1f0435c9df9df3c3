/* The one status table (entities/ent_status.c): every status has a name and
 * its three codes, every error an AMQP condition, and the surfaces agree on
 * the ones the SDKs and tests depend on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "ent_status.h"

static void test_every_row_is_filled(void **state)
{
    (void)state;
    for (int st = 0; st < SB_STATUS_COUNT; st++) {
        assert_non_null(sb_status_name((sb_status)st));
        assert_true(sb_status_mgmt_code((sb_status)st) >= 200);
        assert_true(sb_status_http_code((sb_status)st) >= 200);
        assert_true(sb_status_cbs_code((sb_status)st) >= 200);
        if (st >= SB_ERR_ARGUMENT)
            assert_non_null(sb_status_condition((sb_status)st));
    }
}

static void test_codes(void **state)
{
    (void)state;
    assert_int_equal(sb_status_cbs_code(SB_OK), 202); /* .NET and Java take 200 or 202 from $cbs */
    assert_int_equal(sb_status_mgmt_code(SB_OK), 200);
    assert_int_equal(sb_status_cbs_code(SB_ERR_UNAUTHORIZED), 401);
    assert_int_equal(sb_status_http_code(SB_ERR_SERVER_BUSY), 503);
    assert_int_equal(sb_status_http_code(SB_ERR_METHOD_NOT_ALLOWED), 405);
    assert_int_equal(sb_status_http_code(SB_CREATED), 201); /* a PUT of the management API that made the entity */
    assert_int_equal(sb_status_http_code(SB_ERR_MESSAGE_SIZE_EXCEEDED), 413);
    assert_int_equal(sb_status_http_code(SB_ERR_FORBIDDEN), 403); /* the dashboard's read-only mode */
    assert_string_equal(sb_status_condition(SB_ERR_SESSION_LOCK_LOST), "com.microsoft:session-lock-lost");
    /* out of range reads as internal */
    assert_int_equal(sb_status_http_code((sb_status)SB_STATUS_COUNT), 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_is_filled),
        cmocka_unit_test(test_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
