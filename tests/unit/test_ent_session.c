/* Session rules (entities/ent_session.h): which receivers may attach with or
 * without a session filter, which sends a session entity takes, which
 * subscriptions hold a topic's copy, how long a next-available receiver waits,
 * what a receiver gets once the store answered its session lock, and the .NET
 * ticks of a Unix time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_cache.h"
#include "ent_session.h"

static ent_entity ent(ent_kind kind, const char *name, bool requires_session)
{
    ent_entity e;
    memset(&e, 0, sizeof e);
    e.id = 1;
    e.kind = kind;
    e.default_ttl_ms = -1;
    e.requires_session = requires_session;
    snprintf(e.name, sizeof e.name, "%s", name);
    snprintf(e.status, sizeof e.status, "Active");
    return e;
}

/* A buffer whose untouched state is recognisable: SB_OK must leave it alone. */
#define UNTOUCHED "untouched"

static sb_status recv_check(const ent_entity *e, bool dead_letter, bool has_filter, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", UNTOUCHED);
    return ent_session_receiver_check(e, dead_letter, has_filter, err, errlen);
}

/* ---- ent_session_receiver_check: all eight combinations ---- */

static void test_receiver_plain_entity_no_filter_ok(void **state)
{
    (void)state;
    ent_entity q = ent(ENT_KIND_QUEUE, "plain", false);
    char err[512];
    assert_int_equal(recv_check(&q, false, false, err, sizeof err), SB_OK);
    assert_string_equal(err, UNTOUCHED);
}

static void test_receiver_plain_entity_with_filter_refused(void **state)
{
    (void)state;
    ent_entity q = ent(ENT_KIND_QUEUE, "plain", false);
    char err[512];
    assert_int_equal(recv_check(&q, false, true, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_string_equal(err, "It is not possible for an entity that does not require sessions to create a sessionful "
                             "message receiver (RequiresSession is false). Entity: 'plain'.");
}

static void test_receiver_session_entity_with_filter_ok(void **state)
{
    (void)state;
    ent_entity q = ent(ENT_KIND_QUEUE, "sq", true);
    char err[512];
    assert_int_equal(recv_check(&q, false, true, err, sizeof err), SB_OK);
    assert_string_equal(err, UNTOUCHED);
}

static void test_receiver_session_entity_no_filter_refused(void **state)
{
    (void)state;
    ent_entity q = ent(ENT_KIND_QUEUE, "sq", true);
    char err[512];
    assert_int_equal(recv_check(&q, false, false, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_string_equal(err, "It is not possible for an entity that requires sessions to create a non-sessionful "
                             "message receiver. Entity: 'sq'.");
}

/* A dead-letter subqueue has no sessions, whatever its entity requires. */
static void test_receiver_dead_letter_no_filter_ok_either_way(void **state)
{
    (void)state;
    char err[512];
    ent_entity plain = ent(ENT_KIND_QUEUE, "plain", false);
    assert_int_equal(recv_check(&plain, true, false, err, sizeof err), SB_OK);
    assert_string_equal(err, UNTOUCHED);
    ent_entity sq = ent(ENT_KIND_QUEUE, "sq", true);
    assert_int_equal(recv_check(&sq, true, false, err, sizeof err), SB_OK);
    assert_string_equal(err, UNTOUCHED);
}

static void test_receiver_dead_letter_with_filter_refused_either_way(void **state)
{
    (void)state;
    char err[512];
    ent_entity sq = ent(ENT_KIND_QUEUE, "sq", true);
    assert_int_equal(recv_check(&sq, true, true, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_string_equal(err, "The dead-letter queue of 'sq' has no sessions: receive from it without a session.");
    ent_entity plain = ent(ENT_KIND_QUEUE, "plain", false);
    assert_int_equal(recv_check(&plain, true, true, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_string_equal(err, "The dead-letter queue of 'plain' has no sessions: receive from it without a session.");
}

/* A subscription is checked by its own flag and named by its full path. */
static void test_receiver_subscription(void **state)
{
    (void)state;
    char err[512];
    ent_entity s = ent(ENT_KIND_SUBSCRIPTION, "t/Subscriptions/sess", true);
    assert_int_equal(recv_check(&s, false, true, err, sizeof err), SB_OK);
    assert_int_equal(recv_check(&s, false, false, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_non_null(strstr(err, "requires sessions"));
    assert_non_null(strstr(err, "Entity: 't/Subscriptions/sess'."));
    ent_entity p = ent(ENT_KIND_SUBSCRIPTION, "t/Subscriptions/all", false);
    assert_int_equal(recv_check(&p, false, false, err, sizeof err), SB_OK);
    assert_int_equal(recv_check(&p, false, true, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_non_null(strstr(err, "Entity: 't/Subscriptions/all'."));
}

/* A short buffer gets a truncated, terminated text; the status is unchanged. */
static void test_receiver_error_truncated(void **state)
{
    (void)state;
    ent_entity q = ent(ENT_KIND_QUEUE, "sq", true);
    char err[16];
    memset(err, 'x', sizeof err);
    assert_int_equal(ent_session_receiver_check(&q, false, false, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_int_equal(strlen(err), sizeof err - 1);
    assert_string_equal(err, "It is not possi");
}

/* ---- ent_session_send_check ---- */

static void test_send_check(void **state)
{
    (void)state;
    char err[512];
    snprintf(err, sizeof err, "%s", UNTOUCHED);
    assert_int_equal(ent_session_send_check(false, "plain", false, err, sizeof err), SB_OK);
    assert_int_equal(ent_session_send_check(false, "plain", true, err, sizeof err), SB_OK);
    assert_int_equal(ent_session_send_check(true, "sq", true, err, sizeof err), SB_OK);
    assert_string_equal(err, UNTOUCHED);
    assert_int_equal(ent_session_send_check(true, "sq", false, err, sizeof err), SB_ERR_NOT_ALLOWED);
    assert_string_equal(err, "The SessionId was not set on a message, and it cannot be sent to the entity. Entities "
                             "that have session support enabled can only receive messages that have the SessionId "
                             "set to a valid value. Entity: 'sq'.");
}

/* ---- ent_session_holds ---- */

static void test_holds(void **state)
{
    (void)state;
    ent_entity sess = ent(ENT_KIND_SUBSCRIPTION, "t/Subscriptions/sess", true);
    ent_entity all = ent(ENT_KIND_SUBSCRIPTION, "t/Subscriptions/all", false);
    assert_true(ent_session_holds(&sess, true));
    assert_false(ent_session_holds(&sess, false));
    assert_true(ent_session_holds(&all, true));
    assert_true(ent_session_holds(&all, false));
}

/* ---- ent_session_accept_timeout_ms ---- */

static void test_accept_timeout(void **state)
{
    (void)state;
    assert_int_equal(ENT_SESSION_ACCEPT_TIMEOUT_DEFAULT_MS, 65000);
    assert_int_equal(ent_session_accept_timeout_ms(0), 65000);
    assert_int_equal(ent_session_accept_timeout_ms(-1), 65000);
    assert_int_equal(ent_session_accept_timeout_ms(INT64_MIN), 65000);
    assert_int_equal(ent_session_accept_timeout_ms(1), 1);
    assert_int_equal(ent_session_accept_timeout_ms(5000), 5000);
    assert_int_equal(ent_session_accept_timeout_ms(3600000), 3600000);
}

static void test_lock_live_and_settle_failure(void **state)
{
    (void)state;
    assert_true(ent_session_lock_live(true, 2000, 1999));
    assert_false(ent_session_lock_live(true, 2000, 2000));
    assert_false(ent_session_lock_live(false, 2000, 1000));
    assert_int_equal(ent_session_settle_failure(SB_ERR_LOCK_LOST, true, false), SB_ERR_SESSION_LOCK_LOST);
    assert_int_equal(ent_session_settle_failure(SB_ERR_LOCK_LOST, true, true), SB_ERR_LOCK_LOST);
    assert_int_equal(ent_session_settle_failure(SB_ERR_LOCK_LOST, false, false), SB_ERR_LOCK_LOST);
    assert_int_equal(ent_session_settle_failure(SB_ERR_INTERNAL, true, false), SB_ERR_INTERNAL);
}

static void test_requires_session_fixed(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(ent_session_requires_session_fixed("subscription", "t/Subscriptions/s", true, err, sizeof err),
                     SB_ERR_ARGUMENT);
    assert_string_equal(err, "subscription \"t/Subscriptions/s\": RequiresSession cannot be changed on an existing "
                             "subscription (it is true); delete the subscription and create it again to change it.");
}

/* ---- ent_session_lock_outcome ---- */

static sb_status refusal;
static char lock_err[256];

static ent_session_lock_verdict outcome(sb_status st, const char *named_sid, bool with_claim, size_t claimed)
{
    return ent_session_lock_outcome(st, named_sid, with_claim, claimed, &refusal, lock_err, sizeof lock_err);
}

/* A next-available peek-lock receiver whose lock claimed nothing does not
 * get the session (another receiver emptied it after the pick's snapshot):
 * it lets it go and waits. A named one, or one whose lock claims nothing
 * with it (receive-and-delete), gets it, empty or not. */
static void test_lock_outcome_given_or_empty(void **state)
{
    (void)state;
    refusal = SB_OK;
    lock_err[0] = '\0';
    assert_int_equal(outcome(SB_OK, NULL, true, 3), ENT_SESSION_LOCK_GIVEN);
    assert_int_equal(outcome(SB_OK, NULL, true, 0), ENT_SESSION_LOCK_EMPTY);
    assert_int_equal(outcome(SB_OK, NULL, false, 0), ENT_SESSION_LOCK_GIVEN);
    assert_int_equal(outcome(SB_OK, "s1", true, 0), ENT_SESSION_LOCK_GIVEN);
    assert_int_equal(outcome(SB_OK, "s1", false, 0), ENT_SESSION_LOCK_GIVEN);
    assert_int_equal(refusal, SB_OK); /* untouched unless refused */
    assert_string_equal(lock_err, "");
}

/* No free session: the next-available receiver waits; one that named its
 * session is refused with Service Bus's text; a store failure refuses
 * either, with its own status. */
static void test_lock_outcome_wait_or_refused(void **state)
{
    (void)state;
    refusal = SB_OK;
    assert_int_equal(outcome(SB_ERR_SESSION_CANNOT_BE_LOCKED, NULL, true, 0), ENT_SESSION_LOCK_WAIT);
    assert_int_equal(refusal, SB_OK);
    assert_int_equal(outcome(SB_ERR_SESSION_CANNOT_BE_LOCKED, "s1", true, 0), ENT_SESSION_LOCK_REFUSED);
    assert_int_equal(refusal, SB_ERR_SESSION_CANNOT_BE_LOCKED);
    assert_string_equal(lock_err,
                        "The requested session 's1' cannot be accepted. It may be locked by another receiver.");
    assert_int_equal(outcome(SB_ERR_INTERNAL, NULL, false, 0), ENT_SESSION_LOCK_REFUSED);
    assert_int_equal(refusal, SB_ERR_INTERNAL);
    assert_string_equal(lock_err, "The emulator's store could not lock the session; retry.");
    assert_int_equal(outcome(SB_ERR_SERVER_BUSY, "s1", true, 0), ENT_SESSION_LOCK_REFUSED);
    assert_int_equal(refusal, SB_ERR_SERVER_BUSY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_live_and_settle_failure),
        cmocka_unit_test(test_receiver_plain_entity_no_filter_ok),
        cmocka_unit_test(test_receiver_plain_entity_with_filter_refused),
        cmocka_unit_test(test_receiver_session_entity_with_filter_ok),
        cmocka_unit_test(test_receiver_session_entity_no_filter_refused),
        cmocka_unit_test(test_receiver_dead_letter_no_filter_ok_either_way),
        cmocka_unit_test(test_receiver_dead_letter_with_filter_refused_either_way),
        cmocka_unit_test(test_receiver_subscription),
        cmocka_unit_test(test_receiver_error_truncated),
        cmocka_unit_test(test_send_check),
        cmocka_unit_test(test_holds),
        cmocka_unit_test(test_accept_timeout),
        cmocka_unit_test(test_requires_session_fixed),
        cmocka_unit_test(test_lock_outcome_given_or_empty),
        cmocka_unit_test(test_lock_outcome_wait_or_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
