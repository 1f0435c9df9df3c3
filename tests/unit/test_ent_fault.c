/* Faults on demand, the decision (entities/ent_fault.c): a rule's keys and
 * their refusals, the whole-rule checks (each naming why), entity globs, the
 * seeded draws, and which rule fires for an operation now. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ent_fault.h"

#define NS "sbemulatorns"

/* Sets each "key", value pair (strings; a value starting with '#' is an
 * integer, '%' a double) and answers the first refusal's status. */
static sb_status build(ent_fault_rule *r, char *err, size_t errlen, const char *name, ...)
{
    ent_fault_rule_init(r, name);
    va_list ap;
    va_start(ap, name);
    const char *key;
    sb_status st = SB_OK;
    while (st == SB_OK && (key = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);
        ent_value value = v[0] == '#' ? ent_value_int(strtoll(v + 1, NULL, 10))
                          : v[0] == '%' ? ent_value_double(strtod(v + 1, NULL))
                                        : ent_value_string(v);
        st = ent_fault_set(r, key, value, err, errlen);
    }
    va_end(ap);
    if (st == SB_OK)
        st = ent_fault_validate(r, NS, err, errlen);
    return st;
}

/* Expects the rule to be refused with a reason containing why. */
#define REFUSED(why, ...)                                                                                              \
    do {                                                                                                               \
        ent_fault_rule r_;                                                                                             \
        char err_[ENT_FAULT_ERR_MAX] = "";                                                                             \
        sb_status st_ = build(&r_, err_, sizeof err_, __VA_ARGS__, NULL);                                              \
        assert_int_not_equal(st_, SB_OK);                                                                              \
        if (!strstr(err_, why))                                                                                        \
            fail_msg("expected a refusal containing \"%s\", got \"%s\"", why, err_);                                   \
    } while (0)

static void test_status_names_through_the_one_table(void **state)
{
    (void)state;
    assert_int_equal(sb_status_from_name("com.microsoft:server-busy"), SB_ERR_SERVER_BUSY);
    assert_int_equal(sb_status_from_name("server-busy"), SB_ERR_SERVER_BUSY);
    assert_int_equal(sb_status_from_name("COM.MICROSOFT:TIMEOUT"), SB_ERR_TIMEOUT);
    assert_int_equal(sb_status_from_name("amqp:resource-limit-exceeded"), SB_ERR_QUOTA_EXCEEDED);
    assert_int_equal(sb_status_from_name("quota-exceeded"), SB_ERR_QUOTA_EXCEEDED);
    assert_int_equal(sb_status_from_name("com.microsoft:message-lock-lost"), SB_ERR_LOCK_LOST);
    assert_int_equal(sb_status_from_name("com.microsoft:session-lock-lost"), SB_ERR_SESSION_LOCK_LOST);
    assert_int_equal(sb_status_from_name("com.microsoft:entity-disabled"), SB_ERR_ENTITY_DISABLED);
    assert_int_equal(sb_status_from_name("amqp:not-allowed"), SB_ERR_NOT_ALLOWED); /* the first row of two */
    assert_int_equal(sb_status_from_name("amqp:connection:forced"), SB_ERR_CONNECTION_FORCED);
    /* successes have no condition: never an error to inject */
    assert_int_equal(sb_status_from_name("ok"), SB_OK);
    assert_int_equal(sb_status_from_name("created"), SB_OK);
    assert_int_equal(sb_status_from_name("com.microsoft:no-such-thing"), SB_OK);
    assert_int_equal(sb_status_from_name(NULL), SB_OK);
    /* every error status is found by its condition or its name */
    for (int st = SB_ERR_ARGUMENT; st < SB_STATUS_COUNT; st++)
        assert_int_equal(sb_status_from_name(sb_status_name((sb_status)st)), st);
}

static void test_a_valid_rule_of_each_effect(void **state)
{
    (void)state;
    ent_fault_rule r;
    char err[ENT_FAULT_ERR_MAX] = "";
    assert_int_equal(build(&r, err, sizeof err, "busy", "operation", "send", "effect", "error", "error",
                           "com.microsoft:server-busy", "times", "#2", NULL),
                     SB_OK);
    assert_int_equal(r.op, ENT_FAULT_SEND);
    assert_int_equal(r.effect, ENT_FAULT_ERROR);
    assert_int_equal(r.error, SB_ERR_SERVER_BUSY);
    assert_int_equal(r.times, 2);
    assert_int_equal(r.remaining, 2);
    assert_string_equal(r.entity, "*");
    assert_int_equal(build(&r, err, sizeof err, "slow", "namespace", "default", "entity", "orders*", "operation",
                           "Receive", "effect", "delay", "delayMs", "#250", NULL),
                     SB_OK);
    assert_int_equal(r.delay_ms, 250);
    assert_int_equal(build(&r, err, sizeof err, "hang", "namespace", "SBEMULATORNS", "operation",
                           "com.microsoft:peek-message", "effect", "never", NULL),
                     SB_OK);
    assert_int_equal(r.op, ENT_FAULT_MANAGEMENT);
    assert_string_equal(r.management, "com.microsoft:peek-message");
    assert_string_equal(ent_fault_operation_text(&r), "com.microsoft:peek-message");
    assert_int_equal(build(&r, err, sizeof err, "drop", "operation", "receive", "effect", "detach", "error",
                           "amqp:resource-limit-exceeded", "description", "gone", NULL),
                     SB_OK);
    assert_int_equal(build(&r, err, sizeof err, "cut", "operation", "connect", "effect", "close", "error",
                           "server-busy", "probability", "%0.5", "seed", "#42", "until", "2030-01-01T00:00:00Z", NULL),
                     SB_OK);
    assert_int_equal(r.seed, 42);
    assert_true(r.until_ms > 0);
    assert_int_equal(build(&r, err, sizeof err, "lost", "operation", "receive", "effect", "lose-lock", "afterMs", "#0",
                           NULL),
                     SB_OK);
    assert_int_equal(r.after_ms, 0);
    assert_int_equal(build(&r, err, sizeof err, "cbs", "entity", "q1", "operation", "cbs", "effect", "error", "error",
                           "amqp:unauthorized-access", NULL),
                     SB_OK);
}

static void test_unknown_names_are_refused_with_why(void **state)
{
    (void)state;
    REFUSED("unknown operation 'publish'", "x", "operation", "publish", "effect", "never");
    REFUSED("unknown operation 'com.microsoft:frobnicate'", "x", "operation", "com.microsoft:frobnicate", "effect",
            "never");
    REFUSED("unknown effect 'explode'", "x", "operation", "send", "effect", "explode");
    REFUSED("unknown error 'com.microsoft:bogus'", "x", "operation", "send", "effect", "error", "error",
            "com.microsoft:bogus");
    REFUSED("com.microsoft:server-busy", "x", "operation", "send", "effect", "error", "error", "ok");
    REFUSED("The namespace name 'a.b' holds '.' at position 2", "x", "namespace", "a.b", "operation", "send",
            "effect", "never");
    REFUSED("unknown key \"color\"", "x", "color", "red");
    /* malformed globs */
    REFUSED("has '[' at position 4", "x", "entity", "ord[e]rs", "operation", "send", "effect", "never");
    REFUSED("has ' ' at position 3", "x", "entity", "my queue", "operation", "send", "effect", "never");
    REFUSED("empty path segment", "x", "entity", "t//s", "operation", "send", "effect", "never");
    REFUSED("empty path segment", "x", "entity", "/q", "operation", "send", "effect", "never");
    REFUSED("\"entity\" must not be empty", "x", "entity", "", "operation", "send", "effect", "never");
    /* counts and numbers */
    REFUSED("\"times\" must be from 1", "x", "operation", "send", "effect", "never", "times", "#-1");
    REFUSED("\"times\" must be from 1", "x", "operation", "send", "effect", "never", "times", "#0");
    REFUSED("\"times\" must be a whole number, not a string", "x", "operation", "send", "effect", "never", "times",
            "two");
    REFUSED("\"delayMs\" must be from 1", "x", "operation", "send", "effect", "delay", "delayMs", "#-5");
    REFUSED("\"afterMs\" must be from 0", "x", "operation", "receive", "effect", "lose-lock", "afterMs", "#-1");
    REFUSED("\"seed\" must be from 0", "x", "operation", "send", "effect", "never", "seed", "#-3");
    REFUSED("\"probability\" must be above 0 and at most 1", "x", "operation", "send", "effect", "never",
            "probability", "%1.5");
    REFUSED("\"probability\" must be above 0 and at most 1", "x", "operation", "send", "effect", "never",
            "probability", "#0");
    REFUSED("not an ISO-8601 time", "x", "operation", "send", "effect", "never", "until", "tomorrow");
    /* names */
    REFUSED("may hold letters, digits", "bad name", "operation", "send", "effect", "never");
    REFUSED("1 to 64 characters", "", "operation", "send", "effect", "never");
}

static void test_what_each_effect_needs(void **state)
{
    (void)state;
    REFUSED("needs an \"operation\"", "x", "effect", "never");
    REFUSED("needs an \"effect\"", "x", "operation", "send");
    REFUSED("the effect error needs an \"error\"", "x", "operation", "send", "effect", "error");
    REFUSED("the effect close needs an \"error\"", "x", "operation", "send", "effect", "close");
    REFUSED("\"error\" applies only to the effects error, detach and close", "x", "operation", "send", "effect",
            "never", "error", "server-busy");
    REFUSED("\"description\" applies only", "x", "operation", "send", "effect", "delay", "delayMs", "#5",
            "description", "slow");
    REFUSED("the effect delay needs \"delayMs\"", "x", "operation", "send", "effect", "delay");
    REFUSED("\"delayMs\" applies only to the effect delay", "x", "operation", "send", "effect", "never", "delayMs",
            "#5");
    REFUSED("the effect lose-lock needs \"afterMs\"", "x", "operation", "receive", "effect", "lose-lock");
    REFUSED("lose-lock applies only to the operation receive", "x", "operation", "complete", "effect", "lose-lock",
            "afterMs", "#5");
    REFUSED("\"afterMs\" applies only to the effect lose-lock", "x", "operation", "receive", "effect", "never",
            "afterMs", "#5");
    REFUSED("the operation connect has none: use close", "x", "operation", "connect", "effect", "detach", "error",
            "server-busy");
    REFUSED("the operation connect has no entity", "x", "entity", "q1", "operation", "connect", "effect", "never");
}

static void test_globs(void **state)
{
    (void)state;
    assert_true(ent_fault_glob_match("*", ""));
    assert_true(ent_fault_glob_match("*", "orders"));
    assert_true(ent_fault_glob_match("orders*", "Orders-EU"));
    assert_true(ent_fault_glob_match("ORDERS", "orders"));
    assert_false(ent_fault_glob_match("orders", "orders/$DeadLetterQueue"));
    assert_true(ent_fault_glob_match("orders*", "orders/$deadletterqueue"));
    assert_true(ent_fault_glob_match("topic1/Subscriptions/*", "topic1/subscriptions/s1"));
    assert_false(ent_fault_glob_match("topic1/Subscriptions/*", "topic2/subscriptions/s1"));
    assert_true(ent_fault_glob_match("q?", "q1"));
    assert_false(ent_fault_glob_match("q?", "q"));
    assert_false(ent_fault_glob_match("q?", "q12"));
    assert_true(ent_fault_glob_match("*a*b*c", "xxaxxbxxbxc"));
    assert_false(ent_fault_glob_match("*a*b*c", "xxaxxbxxbx"));
    assert_true(ent_fault_glob_match("a**", "a"));
    char err[ENT_FAULT_ERR_MAX];
    assert_int_equal(ent_fault_glob_check("t1/Subscriptions/s?/$DeadLetterQueue", err, sizeof err), SB_OK);
    assert_int_equal(ent_fault_glob_check("q/", err, sizeof err), SB_ERR_ARGUMENT);
}

static void test_draws_repeat_for_a_seed(void **state)
{
    (void)state;
    bool a[64], b[64];
    int same = 0, fired = 0;
    for (int i = 0; i < 64; i++) {
        a[i] = ent_fault_draw(7, (uint64_t)i, 0.5);
        b[i] = ent_fault_draw(8, (uint64_t)i, 0.5);
        assert_int_equal(ent_fault_draw(7, (uint64_t)i, 0.5), a[i]);
        same += a[i] == b[i];
        fired += a[i];
    }
    assert_true(same < 64); /* another seed, another pattern */
    assert_true(fired > 10 && fired < 54);
    /* the rate is the probability */
    int hits = 0;
    for (int i = 0; i < 100000; i++)
        hits += ent_fault_draw(12345, (uint64_t)i, 0.3);
    assert_true(hits > 29000 && hits < 31000);
    assert_true(ent_fault_draw(1, 5, 1.0));
}

static ent_fault_rule rule_of(const char *name, ...)
{
    ent_fault_rule r;
    char err[ENT_FAULT_ERR_MAX] = "";
    ent_fault_rule_init(&r, name);
    va_list ap;
    va_start(ap, name);
    const char *key;
    while ((key = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);
        ent_value value = v[0] == '#' ? ent_value_int(strtoll(v + 1, NULL, 10))
                          : v[0] == '%' ? ent_value_double(strtod(v + 1, NULL))
                                        : ent_value_string(v);
        if (ent_fault_set(&r, key, value, err, sizeof err) != SB_OK)
            fail_msg("%s", err);
    }
    va_end(ap);
    if (ent_fault_validate(&r, NS, err, sizeof err) != SB_OK)
        fail_msg("%s", err);
    return r;
}

static void test_which_rule_fires(void **state)
{
    (void)state;
    ent_fault_rule rules[4] = {
        rule_of("a-busy", "entity", "orders*", "operation", "send", "effect", "error", "error", "server-busy", NULL),
        rule_of("b-peek", "operation", "com.microsoft:peek-message", "effect", "never", NULL),
        rule_of("c-renew", "entity", "q1", "operation", "renew-lock", "effect", "error", "error", "lock-lost", NULL),
        rule_of("d-mgmt", "entity", "q2", "operation", "management", "effect", "delay", "delayMs", "#10", NULL),
    };
    ent_fault_list list = {4, rules};
    ent_fault_point send_orders = {ENT_FAULT_SEND, "Orders-1", NULL, NULL, NULL, 0};
    ent_fault_point send_other = {ENT_FAULT_SEND, "invoices", NULL, NULL, NULL, 0};
    ent_fault_point receive_orders = {ENT_FAULT_RECEIVE, "orders", NULL, NULL, NULL, 0};
    assert_ptr_equal(ent_fault_decide(&list, &send_orders, 0), &rules[0]);
    assert_null(ent_fault_decide(&list, &send_other, 0));
    assert_null(ent_fault_decide(&list, &receive_orders, 0));
    ent_fault_point peek = {ENT_FAULT_MANAGEMENT, "q9", "com.microsoft:peek-message", NULL, NULL, 0};
    ent_fault_point renew_q1 = {ENT_FAULT_MANAGEMENT, "q1", "com.microsoft:renew-lock", NULL, NULL, 0};
    ent_fault_point schedule_q1 = {ENT_FAULT_MANAGEMENT, "q1", "com.microsoft:schedule-message", NULL, NULL, 0};
    ent_fault_point schedule_q2 = {ENT_FAULT_MANAGEMENT, "q2", "com.microsoft:schedule-message", NULL, NULL, 0};
    assert_ptr_equal(ent_fault_decide(&list, &peek, 0), &rules[1]);
    assert_ptr_equal(ent_fault_decide(&list, &renew_q1, 0), &rules[2]);
    assert_null(ent_fault_decide(&list, &schedule_q1, 0));
    assert_ptr_equal(ent_fault_decide(&list, &schedule_q2, 0), &rules[3]);
    /* used up: no longer matches */
    rules[0].remaining = 0;
    assert_null(ent_fault_decide(&list, &send_orders, 0));
    rules[0].remaining = -1;
    /* past its until: no longer matches */
    rules[0].until_ms = 1000;
    assert_ptr_equal(ent_fault_decide(&list, &send_orders, 999), &rules[0]);
    assert_null(ent_fault_decide(&list, &send_orders, 1000));
}

/* A rule matches operations of its own namespace only: one that names the
 * default (by any of its names, or none) the default's, another the one it
 * names, in any letter case; a namespace no one has made yet is a name a
 * rule may give. */
static void test_namespaces(void **state)
{
    (void)state;
    ent_fault_rule rules[3] = {
        rule_of("a-default", "namespace", "default", "entity", "q", "operation", "send", "effect", "never", NULL),
        rule_of("b-suite", "namespace", "Suite-A", "entity", "q", "operation", "send", "effect", "never", NULL),
        rule_of("c-none", "entity", "r", "operation", "send", "effect", "never", NULL),
    };
    ent_fault_list list = {3, rules};
    ent_fault_point in_default = {ENT_FAULT_SEND, "q", NULL, NULL, NS, 1};
    ent_fault_point in_default_named = {ENT_FAULT_SEND, "q", NULL, "", NS, 1};
    ent_fault_point in_suite = {ENT_FAULT_SEND, "q", NULL, "suite-a", NS, 7};
    ent_fault_point in_other = {ENT_FAULT_SEND, "q", NULL, "other", NS, 8};
    ent_fault_point r_in_suite = {ENT_FAULT_SEND, "r", NULL, "suite-a", NS, 7};
    ent_fault_point r_in_default = {ENT_FAULT_SEND, "r", NULL, NULL, NS, 1};
    assert_ptr_equal(ent_fault_decide(&list, &in_default, 0), &rules[0]);
    assert_ptr_equal(ent_fault_decide(&list, &in_default_named, 0), &rules[0]);
    assert_ptr_equal(ent_fault_decide(&list, &in_suite, 0), &rules[1]);
    assert_null(ent_fault_decide(&list, &in_other, 0));
    assert_null(ent_fault_decide(&list, &r_in_suite, 0)); /* c-none is the default namespace's */
    assert_ptr_equal(ent_fault_decide(&list, &r_in_default, 0), &rules[2]);
    char err[256];
    ent_fault_rule r;
    assert_int_equal(build(&r, err, sizeof err, "later", "namespace", "not-made-yet", "operation", "send", "effect",
                           "never", NULL),
                     SB_OK);
}

static void test_first_rule_by_order_and_connect_points(void **state)
{
    (void)state;
    ent_fault_rule rules[2] = {
        rule_of("a", "operation", "connect", "effect", "close", "error", "server-busy", NULL),
        rule_of("b", "operation", "connect", "effect", "never", NULL),
    };
    ent_fault_list list = {2, rules};
    ent_fault_point connect = {ENT_FAULT_CONNECT, "", NULL, NULL, NULL, 0};
    assert_ptr_equal(ent_fault_decide(&list, &connect, 0), &rules[0]);
    rules[0].remaining = 0;
    assert_ptr_equal(ent_fault_decide(&list, &connect, 0), &rules[1]);
    ent_fault_list none = {0, NULL};
    assert_null(ent_fault_decide(&none, &connect, 0));
}

static void test_a_seeded_rule_repeats_its_pattern(void **state)
{
    (void)state;
    ent_fault_rule r = rule_of("p", "operation", "send", "effect", "error", "error", "server-busy", "probability",
                               "%0.5", "seed", "#99", NULL);
    ent_fault_list list = {1, &r};
    ent_fault_point send = {ENT_FAULT_SEND, "q", NULL, NULL, NULL, 0};
    bool first[20], again[20];
    int fired = 0;
    for (int i = 0; i < 20; i++)
        fired += first[i] = ent_fault_decide(&list, &send, 0) != NULL;
    assert_int_equal(r.draws, 20);
    r.draws = 0; /* the rule put again: a new generation draws from the start */
    for (int i = 0; i < 20; i++)
        again[i] = ent_fault_decide(&list, &send, 0) != NULL;
    assert_memory_equal(first, again, sizeof first);
    assert_true(fired > 0 && fired < 20);
    /* a point the rule does not match draws nothing */
    ent_fault_point other = {ENT_FAULT_RECEIVE, "q", NULL, NULL, NULL, 0};
    ent_fault_decide(&list, &other, 0);
    assert_int_equal(r.draws, 20);
}

static void test_settlements(void **state)
{
    (void)state;
    assert_int_equal(ent_fault_op_of_settle(ENT_SETTLE_COMPLETE), ENT_FAULT_COMPLETE);
    assert_int_equal(ent_fault_op_of_settle(ENT_SETTLE_ABANDON), ENT_FAULT_ABANDON);
    assert_int_equal(ent_fault_op_of_settle(ENT_SETTLE_RELEASE), ENT_FAULT_ABANDON);
    assert_int_equal(ent_fault_op_of_settle(ENT_SETTLE_DEFER), ENT_FAULT_DEFER);
    assert_int_equal(ent_fault_op_of_settle(ENT_SETTLE_DEADLETTER), ENT_FAULT_DEAD_LETTER);
}

static void test_describe(void **state)
{
    (void)state;
    char out[ENT_FAULT_DESCRIPTION_SIZE];
    ent_fault_rule r = rule_of("busy", "entity", "q*", "operation", "send", "effect", "error", "error", "server-busy",
                               NULL);
    ent_fault_describe(&r, out, sizeof out);
    assert_string_equal(out, "Injected by sbemu fault rule 'busy' (send on 'q*').");
    r = rule_of("busy", "operation", "send", "effect", "error", "error", "server-busy", "description", "Try later.",
                NULL);
    ent_fault_describe(&r, out, sizeof out);
    assert_string_equal(out, "Try later.");
}

static void test_null_unsets(void **state)
{
    (void)state;
    ent_fault_rule r;
    char err[ENT_FAULT_ERR_MAX];
    ent_fault_rule_init(&r, "n");
    assert_int_equal(ent_fault_set(&r, "times", ent_value_int(3), err, sizeof err), SB_OK);
    assert_int_equal(ent_fault_set(&r, "times", ent_value_null(), err, sizeof err), SB_OK);
    assert_int_equal(r.times, -1);
    assert_int_equal(r.remaining, -1);
    assert_int_equal(ent_fault_set(&r, "ENTITY", ent_value_string("x"), err, sizeof err), SB_OK);
    assert_int_equal(ent_fault_set(&r, "entity", ent_value_null(), err, sizeof err), SB_OK);
    assert_string_equal(r.entity, "*");
    assert_int_equal(ent_fault_set(&r, "name", ent_value_null(), err, sizeof err), SB_ERR_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names_through_the_one_table),
        cmocka_unit_test(test_a_valid_rule_of_each_effect),
        cmocka_unit_test(test_unknown_names_are_refused_with_why),
        cmocka_unit_test(test_what_each_effect_needs),
        cmocka_unit_test(test_globs),
        cmocka_unit_test(test_draws_repeat_for_a_seed),
        cmocka_unit_test(test_which_rule_fires),
        cmocka_unit_test(test_first_rule_by_order_and_connect_points),
        cmocka_unit_test(test_namespaces),
        cmocka_unit_test(test_a_seeded_rule_repeats_its_pattern),
        cmocka_unit_test(test_settlements),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_null_unsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
