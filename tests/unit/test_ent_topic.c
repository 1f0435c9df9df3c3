/* Topic routing (entities/ent_topic.h): which subscriptions get a copy of a
 * message, how rules with and without actions make copies, what a failing
 * filter does, and the TTL a copy lives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_cache.h"
#include "ent_topic.h"

static ent_entity ent(int64_t id, ent_kind kind, int64_t topic_id, const char *name)
{
    ent_entity e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.kind = kind;
    e.topic_id = topic_id;
    e.default_ttl_ms = -1;
    e.dead_lettering_on_filter_exceptions = true;
    snprintf(e.name, sizeof e.name, "%s", name);
    snprintf(e.status, sizeof e.status, "Active");
    return e;
}

static ent_rule_def sql_rule(int64_t sub, const char *name, const char *sql, const char *action)
{
    ent_rule_def d;
    memset(&d, 0, sizeof d);
    d.subscription_id = sub;
    d.name = name;
    d.filter_type = "Sql";
    d.sql_expression = sql;
    d.action_expression = action;
    return d;
}

static ent_rule_def typed_rule(int64_t sub, const char *name, const char *type)
{
    ent_rule_def d;
    memset(&d, 0, sizeof d);
    d.subscription_id = sub;
    d.name = name;
    d.filter_type = type;
    return d;
}

/* Topic 1 with subscriptions:
 *   10 all     $Default (true)
 *   11 red     color = 'red'; and a second rule color = 'red' OR size > 3 (both without action: one copy)
 *   12 tagged  two action rules matching red, one true rule without action
 *   13 broken  qty * 2 > 5 (fails on a string qty), dead-letters on filter errors
 *   14 quiet   the same filter, does not dead-letter
 *   15 off     Disabled, true filter
 *   16 none    no rules at all
 * and a queue 2 that is not a topic. */
static ent_cache *fixture(void)
{
    ent_entity list[] = {
        ent(1, ENT_KIND_TOPIC, 0, "t"),
        ent(2, ENT_KIND_QUEUE, 0, "q"),
        ent(10, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/all"),
        ent(11, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/red"),
        ent(12, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/tagged"),
        ent(13, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/broken"),
        ent(14, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/quiet"),
        ent(15, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/off"),
        ent(16, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/none"),
    };
    list[6].dead_lettering_on_filter_exceptions = false;
    snprintf(list[7].status, sizeof list[7].status, "Disabled");
    ent_rule_def rules[] = {
        typed_rule(10, "$Default", "True"),
        sql_rule(11, "r1", "color = 'red'", NULL),
        sql_rule(11, "r2", "color = 'red' OR size > 3", NULL),
        sql_rule(12, "a1", "color = 'red'", "SET tag = 'one'"),
        sql_rule(12, "a2", "color = 'red'", "SET tag = 'two'"),
        typed_rule(12, "plain", "True"),
        sql_rule(13, "b", "qty * 2 > 5", NULL),
        sql_rule(14, "b", "qty * 2 > 5", NULL),
        typed_rule(15, "$Default", "True"),
        typed_rule(99, "orphan", "True"), /* of no subscription: ignored */
    };
    ent_cache *c = ent_cache_new();
    assert_non_null(c);
    assert_int_equal(ent_cache_replace(c, list, sizeof list / sizeof list[0], rules, sizeof rules / sizeof rules[0]), 0);
    return c;
}

static size_t route(ent_cache *c, ent_filter_kvmsg *m, ent_topic_copies *out)
{
    ent_filter_msg view = ent_filter_kvmsg_view(m);
    out->n = 0;
    assert_int_equal(ent_topic_route(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t"), &view, out), 0);
    return out->n;
}

/* How many copies of the last route went to subscription id, and how many of those were dead letters. */
static int copies_to(const ent_topic_copies *l, int64_t id, int *dead)
{
    int n = 0;
    *dead = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].subscription->id == id) {
            n++;
            *dead += l->v[i].dead_letter;
        }
    return n;
}

static void test_subscriptions_and_rules_are_cached(void **state)
{
    (void)state;
    ent_cache *c = fixture();
    size_t n;
    const ent_entity *const *subs = ent_cache_subscriptions(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "T"), &n);
    assert_int_equal(n, 7);
    assert_string_equal(subs[0]->name, "t/Subscriptions/all"); /* by name */
    const ent_filter_rule *rules = ent_cache_rules(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/subscriptions/TAGGED"), &n);
    assert_int_equal(n, 3);
    assert_string_equal(rules[0].name, "a1"); /* in the order they came */
    assert_non_null(rules[0].action);
    assert_null(rules[2].action);
    assert_null(ent_cache_rules(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/Subscriptions/none"), &n));
    assert_int_equal(n, 0);
    /* a queue has neither */
    assert_null(ent_cache_subscriptions(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "q"), &n));
    assert_null(ent_cache_rules(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "q"), &n));
    ent_cache_free(c);
}

static void test_red_message(void **state)
{
    (void)state;
    ent_cache *c = fixture();
    ent_filter_kvmsg m;
    ent_filter_kvmsg_init(&m);
    ent_filter_value red = ent_fv_cstr("red"), qty = ent_fv_int(9);
    ent_filter_kvmsg_set_user(&m, "color", 5, &red);
    ent_filter_kvmsg_set_user(&m, "qty", 3, &qty);
    ent_topic_copies l = {0};
    route(c, &m, &l);
    int dead;
    assert_int_equal(copies_to(&l, 10, &dead), 1);
    /* two rules without action match: still one copy */
    assert_int_equal(copies_to(&l, 11, &dead), 1);
    /* each action rule its own copy, plus one for the rules without action */
    assert_int_equal(copies_to(&l, 12, &dead), 3);
    int actions = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].subscription->id == 12 && l.v[i].rule)
            actions++;
    assert_int_equal(actions, 2);
    assert_int_equal(copies_to(&l, 13, &dead), 1);
    assert_int_equal(dead, 0);
    assert_int_equal(copies_to(&l, 14, &dead), 1);
    /* Disabled takes nothing; no rules, nothing */
    assert_int_equal(copies_to(&l, 15, &dead), 0);
    assert_int_equal(copies_to(&l, 16, &dead), 0);
    assert_int_equal(l.n, 7);
    ent_topic_copies_free(&l);
    ent_filter_kvmsg_free(&m);
    ent_cache_free(c);
}

static void test_failing_filter_dead_letters_or_skips(void **state)
{
    (void)state;
    ent_cache *c = fixture();
    ent_filter_kvmsg m;
    ent_filter_kvmsg_init(&m);
    ent_filter_value qty = ent_fv_cstr("many"); /* string * int: an evaluation error */
    ent_filter_kvmsg_set_user(&m, "qty", 3, &qty);
    ent_topic_copies l = {0};
    route(c, &m, &l);
    int dead;
    assert_int_equal(copies_to(&l, 13, &dead), 1);
    assert_int_equal(dead, 1);
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].subscription->id == 13) {
            assert_null(l.v[i].rule);
            assert_non_null(strstr(l.v[i].error, "rule 'b'"));
        }
    assert_int_equal(copies_to(&l, 14, &dead), 0); /* skipped */
    assert_int_equal(copies_to(&l, 10, &dead), 1);
    assert_int_equal(copies_to(&l, 11, &dead), 0); /* color missing: unknown, no match */
    assert_int_equal(copies_to(&l, 12, &dead), 1); /* only its true rule */
    ent_topic_copies_free(&l);
    ent_filter_kvmsg_free(&m);
    ent_cache_free(c);
}

static void test_unset_label_is_no_match_not_an_error(void **state)
{
    (void)state;
    ent_entity list[] = {ent(1, ENT_KIND_TOPIC, 0, "t"), ent(10, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/s")};
    ent_rule_def rules[] = {sql_rule(10, "l", "sys.Label = 'x'", NULL)};
    ent_cache *c = ent_cache_new();
    assert_int_equal(ent_cache_replace(c, list, 2, rules, 1), 0);
    ent_filter_kvmsg m;
    ent_filter_kvmsg_init(&m);
    ent_topic_copies l = {0};
    assert_int_equal(route(c, &m, &l), 0); /* no copy, and no dead letter */
    ent_filter_value x = ent_fv_cstr("x");
    ent_filter_kvmsg_set_sys(&m, ENT_SYS_LABEL, &x);
    assert_int_equal(route(c, &m, &l), 1);
    assert_false(l.v[0].dead_letter);
    ent_topic_copies_free(&l);
    ent_filter_kvmsg_free(&m);
    ent_cache_free(c);
}

static void test_bad_rule_matches_nothing(void **state)
{
    (void)state;
    ent_entity list[] = {ent(1, ENT_KIND_TOPIC, 0, "t"), ent(10, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/s")};
    /* what only plain SQL can insert: a filter that does not parse, a type without its filter */
    ent_rule_def rules[] = {sql_rule(10, "bad", "color = = 'x'", NULL), typed_rule(10, "odd", "Sql"),
                            sql_rule(10, "badaction", "1=1", "SET = 3")};
    ent_cache *c = ent_cache_new();
    assert_int_equal(ent_cache_replace(c, list, 2, rules, 3), 0);
    size_t n;
    assert_non_null(ent_cache_rules(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/Subscriptions/s"), &n));
    assert_int_equal(n, 3);
    ent_filter_kvmsg m;
    ent_filter_kvmsg_init(&m);
    ent_topic_copies l = {0};
    assert_int_equal(route(c, &m, &l), 0);
    ent_topic_copies_free(&l);
    ent_filter_kvmsg_free(&m);
    ent_cache_free(c);
}

static void test_correlation_rule(void **state)
{
    (void)state;
    ent_entity list[] = {ent(1, ENT_KIND_TOPIC, 0, "t"), ent(10, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/s")};
    ent_filter_prop props[] = {{"region", ent_fv_cstr("eu")}};
    ent_rule_def d;
    memset(&d, 0, sizeof d);
    d.subscription_id = 10;
    d.name = "c";
    d.filter_type = "Correlation";
    d.correlation.label = "order";
    d.correlation.properties = props;
    d.correlation.nproperties = 1;
    ent_cache *c = ent_cache_new();
    assert_int_equal(ent_cache_replace(c, list, 2, &d, 1), 0);
    ent_filter_kvmsg m;
    ent_filter_kvmsg_init(&m);
    ent_topic_copies l = {0};
    ent_filter_value label = ent_fv_cstr("order"), eu = ent_fv_cstr("eu");
    ent_filter_kvmsg_set_sys(&m, ENT_SYS_LABEL, &label);
    assert_int_equal(route(c, &m, &l), 0); /* the property is missing */
    ent_filter_kvmsg_set_user(&m, "region", 6, &eu);
    assert_int_equal(route(c, &m, &l), 1);
    ent_topic_copies_free(&l);
    ent_filter_kvmsg_free(&m);
    ent_cache_free(c);
}

static void test_copy_ttl_is_the_smallest(void **state)
{
    (void)state;
    ent_entity t = ent(1, ENT_KIND_TOPIC, 0, "t"), s = ent(10, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/s");
    t.default_ttl_ms = 60000;
    s.default_ttl_ms = 120000;
    assert_int_equal(ent_topic_copy_ttl_ms(-1, &t, &s), 60000); /* the topic's lower default wins */
    assert_int_equal(ent_topic_copy_ttl_ms(5000, &t, &s), 5000);
    s.default_ttl_ms = 30000;
    assert_int_equal(ent_topic_copy_ttl_ms(-1, &t, &s), 30000);
    t.default_ttl_ms = s.default_ttl_ms = -1;
    assert_int_equal(ent_topic_copy_ttl_ms(-1, &t, &s), -1);
}

/* A copy's fate: where it lands, how long it lives, what rests in a topic. */
static void test_copy_fate(void **state)
{
    (void)state;
    ent_entity list[] = {
        ent(1, ENT_KIND_TOPIC, 0, "t"),
        ent(2, ENT_KIND_QUEUE, 0, "q"),
        ent(3, ENT_KIND_TOPIC, 0, "t2"),
        ent(4, ENT_KIND_QUEUE, 0, "off"),
        ent(10, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/plain"),
        ent(11, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/toq"),
        ent(12, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/tot2"),
        ent(13, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/tooff"),
    };
    list[1].default_ttl_ms = 2000; /* q caps what is forwarded to it */
    snprintf(list[3].status, sizeof list[3].status, "SendDisabled");
    snprintf(list[5].forward_to, sizeof list[5].forward_to, "q");
    snprintf(list[6].forward_to, sizeof list[6].forward_to, "t2");
    snprintf(list[7].forward_to, sizeof list[7].forward_to, "off");
    ent_cache *c = ent_cache_new();
    assert_non_null(c);
    assert_int_equal(ent_cache_replace(c, list, sizeof list / sizeof list[0], NULL, 0), 0);
    const ent_entity *t = ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t");

    ent_copy_fate f = ent_topic_copy_decide(c, t, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/Subscriptions/plain"), 5000, 1000, NULL);
    assert_int_equal(f.target->id, 10);
    assert_false(f.forwarded);
    assert_false(f.dead_letter);
    assert_int_equal(f.expires_ms, 6000);

    f = ent_topic_copy_decide(c, t, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/Subscriptions/toq"), 5000, 1000, NULL);
    assert_int_equal(f.target->id, 2);
    assert_true(f.forwarded);
    assert_false(f.rests_in_topic);
    assert_int_equal(f.ttl_ms, 2000); /* the forward target's default caps it again */

    f = ent_topic_copy_decide(c, t, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/Subscriptions/tot2"), -1, 1000, NULL);
    assert_int_equal(f.target->id, 3);
    assert_true(f.rests_in_topic); /* routed by t2's pump */
    assert_int_equal(f.expires_ms, 0);

    f = ent_topic_copy_decide(c, t, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/Subscriptions/tooff"), -1, 1000, NULL);
    assert_int_equal(f.target->id, 13); /* the end refuses sends: a dead letter in the subscription */
    assert_true(f.dead_letter);
    assert_string_equal(f.dead_letter_reason, "ForwardingFailed");

    /* a failed rule: a dead letter in the subscription, never forwarded */
    f = ent_topic_copy_decide(c, t, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "t/Subscriptions/toq"), -1, 1000, "rule 'x': boom");
    assert_int_equal(f.target->id, 11);
    assert_false(f.forwarded);
    assert_string_equal(f.dead_letter_reason, "FilterEvaluationException");
    assert_string_equal(f.dead_letter_description, "rule 'x': boom");
    ent_cache_free(c);
}

static void test_rule_failure_dead_letters_or_skips(void **state)
{
    (void)state;
    ent_entity s = ent(10, ENT_KIND_SUBSCRIPTION, 1, "t/Subscriptions/s");
    char desc[64] = "";
    assert_true(ent_topic_rule_failed(&s, "r", "cannot multiply a string", desc, sizeof desc));
    assert_string_equal(desc, "rule 'r': cannot multiply a string");
    s.dead_lettering_on_filter_exceptions = false;
    desc[0] = 0;
    assert_false(ent_topic_rule_failed(&s, "r", "cannot multiply a string", desc, sizeof desc));
    assert_string_equal(desc, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subscriptions_and_rules_are_cached),
        cmocka_unit_test(test_red_message),
        cmocka_unit_test(test_failing_filter_dead_letters_or_skips),
        cmocka_unit_test(test_unset_label_is_no_match_not_an_error),
        cmocka_unit_test(test_bad_rule_matches_nothing),
        cmocka_unit_test(test_correlation_rule),
        cmocka_unit_test(test_copy_ttl_is_the_smallest),
        cmocka_unit_test(test_copy_fate),
        cmocka_unit_test(test_rule_failure_dead_letters_or_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
