/* The in-process entity cache: look-ups by name (case-insensitive) and id, and
 * the ForwardTo decisions made from it (where a send lands, the hop limit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_cache.h"
#include "ent_dead_letter.h"
#include "ent_props.h"

static ent_entity q(int64_t id, const char *name, const char *forward_to, const char *status)
{
    ent_entity e;
    memset(&e, 0, sizeof e);
    e.id = id;
    snprintf(e.name, sizeof e.name, "%s", name);
    snprintf(e.forward_to, sizeof e.forward_to, "%s", forward_to);
    snprintf(e.status, sizeof e.status, "%s", status);
    e.default_ttl_ms = id * 1000;
    return e;
}

static void test_find_by_name_and_id(void **state)
{
    (void)state;
    ent_cache *c = ent_cache_new();
    assert_non_null(c);
    assert_int_equal(ent_cache_generation(c), 0);
    ent_entity list[] = {q(7, "Orders", "", "Active"), q(3, "queue.1", "", "Active"), q(12, "zeta", "", "Active")};
    assert_int_equal(ent_cache_replace(c, list, 3, NULL, 0), 0);
    assert_int_equal(ent_cache_generation(c), 1);
    assert_int_equal(ent_cache_count(c), 3);
    assert_int_equal(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "orders")->id, 7);
    assert_int_equal(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "ORDERS")->id, 7);
    assert_int_equal(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "Queue.1")->id, 3);
    assert_null(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "order"));
    assert_null(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, ""));
    assert_string_equal(ent_cache_get(c, 12)->name, "zeta");
    assert_null(ent_cache_get(c, 4));

    /* a refill replaces everything */
    ent_entity next[] = {q(8, "orders", "", "Disabled")};
    assert_int_equal(ent_cache_replace(c, next, 1, NULL, 0), 0);
    assert_int_equal(ent_cache_generation(c), 2);
    assert_int_equal(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "Orders")->id, 8);
    assert_null(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "zeta"));
    assert_int_equal(ent_cache_replace(c, NULL, 0, NULL, 0), 0);
    assert_null(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "orders"));
    ent_cache_free(c);
}

/* The same name in two namespaces is two entities; ForwardTo names are the
 * entity's own namespace's; ids stay one space. */
static void test_namespaces(void **state)
{
    (void)state;
    ent_cache *c = ent_cache_new();
    ent_entity list[] = {q(1, "orders", "", "Active"), q(2, "orders", "", "Active"), q(3, "fwd", "ORDERS", "Active"),
                         q(4, "orders", "", "Active"), q(5, "dl", "", "Active")};
    list[1].namespace_id = 7;
    list[2].namespace_id = 7;
    list[3].namespace_id = 9;
    list[4].namespace_id = 9;
    snprintf(list[4].forward_dead_lettered_to, sizeof list[4].forward_dead_lettered_to, "orders");
    assert_int_equal(ent_cache_replace(c, list, 5, NULL, 0), 0);
    /* 0 is the default namespace, as an entity's unset namespace_id is */
    assert_int_equal(ent_cache_find(c, 0, "orders")->id, 1);
    assert_int_equal(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "Orders")->id, 1);
    assert_int_equal(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "orders")->namespace_id, ENT_NAMESPACE_DEFAULT_ID);
    assert_int_equal(ent_cache_find(c, 7, "ORDERS")->id, 2);
    assert_int_equal(ent_cache_find(c, 9, "orders")->id, 4);
    assert_null(ent_cache_find(c, 8, "orders"));
    assert_null(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "fwd"));
    assert_int_equal(ent_cache_get(c, 2)->namespace_id, 7);
    bool exceeded;
    assert_int_equal(ent_cache_send_target(c, ent_cache_find(c, 7, "fwd"), &exceeded)->id, 2);
    assert_int_equal(ent_cache_dead_letter_target(c, ent_cache_find(c, 9, "dl"))->id, 4);
    ent_cache_free(c);
}

static void test_send_target_follows_forward_to(void **state)
{
    (void)state;
    ent_cache *c = ent_cache_new();
    ent_entity list[] = {
        q(1, "a", "B", "Active"), q(2, "b", "c", "Active"), q(3, "c", "", "SendDisabled"),
        q(4, "dangling", "nowhere", "Active"), q(5, "plain", "", "Active"),
    };
    assert_int_equal(ent_cache_replace(c, list, 5, NULL, 0), 0);
    bool exceeded;
    assert_int_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "a"), &exceeded)->id, 3);
    assert_false(exceeded);
    assert_int_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "plain"), &exceeded)->id, 5);
    assert_false(exceeded);
    /* a ForwardTo naming no entity ends the chain where it is */
    assert_int_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "dangling"), &exceeded)->id, 4);
    assert_false(exceeded);

    ent_route v;
    assert_int_equal(ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "a")->id, 1);
    ent_cache_route(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "a"), &v);
    assert_int_equal(v.send_target_id, 3);
    assert_int_equal(v.send_target_default_ttl_ms, 3000);
    assert_string_equal(v.send_target_status, "SendDisabled");
    assert_false(v.forward_hops_exceeded);
    ent_cache_free(c);
}

static void test_forward_loop_stops_at_the_hop_limit(void **state)
{
    (void)state;
    ent_cache *c = ent_cache_new();
    ent_entity list[] = {q(1, "loop-a", "loop-b", "Active"), q(2, "loop-b", "loop-a", "Active"),
                         q(3, "self", "self", "Active")};
    assert_int_equal(ent_cache_replace(c, list, 3, NULL, 0), 0);
    bool exceeded;
    /* a->b->a->b->a: four hops end in loop-a, whose fifth forward is refused */
    assert_int_equal(ENT_MAX_FORWARD_HOPS, 4);
    assert_string_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "loop-a"), &exceeded)->name, "loop-a");
    assert_true(exceeded);
    assert_string_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "loop-b"), &exceeded)->name, "loop-b");
    assert_true(exceeded);
    assert_string_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "self"), &exceeded)->name, "self");
    assert_true(exceeded);

    /* a chain of exactly four hops is fine; five is not */
    ent_entity chain[] = {q(1, "h0", "h1", "Active"), q(2, "h1", "h2", "Active"), q(3, "h2", "h3", "Active"),
                          q(4, "h3", "h4", "Active"), q(5, "h4", "", "Active"), q(6, "g0", "h0", "Active")};
    assert_int_equal(ent_cache_replace(c, chain, 6, NULL, 0), 0);
    assert_string_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "h0"), &exceeded)->name, "h4");
    assert_false(exceeded);
    assert_string_equal(ent_cache_send_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "g0"), &exceeded)->name, "h3");
    assert_true(exceeded);
    ent_cache_free(c);
}

static void test_dead_letter_target(void **state)
{
    (void)state;
    ent_cache *c = ent_cache_new();
    ent_entity list[] = {q(1, "src", "", "Active"), q(2, "dlq-sink", "", "Active"), q(3, "self", "", "Active"),
                         q(4, "lost", "", "Active")};
    snprintf(list[0].forward_dead_lettered_to, sizeof list[0].forward_dead_lettered_to, "DLQ-Sink");
    snprintf(list[2].forward_dead_lettered_to, sizeof list[2].forward_dead_lettered_to, "self");
    snprintf(list[3].forward_dead_lettered_to, sizeof list[3].forward_dead_lettered_to, "nowhere");
    assert_int_equal(ent_cache_replace(c, list, 4, NULL, 0), 0);
    assert_int_equal(ent_cache_dead_letter_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "src"))->id, 2);
    assert_null(ent_cache_dead_letter_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "dlq-sink"))); /* unset */
    assert_null(ent_cache_dead_letter_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "self")));     /* itself: its own DLQ */
    assert_null(ent_cache_dead_letter_target(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "lost")));     /* unknown */
    ent_route v;
    ent_cache_route(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "src"), &v);
    assert_int_equal(v.dead_letter_target_id, 2);
    ent_cache_route(c, ent_cache_find(c, ENT_NAMESPACE_DEFAULT_ID, "lost"), &v);
    assert_int_equal(v.dead_letter_target_id, 0);
    size_t seen = 0;
    for (size_t i = 0; ent_cache_at(c, i); i++)
        seen++;
    assert_int_equal(seen, 4);
    ent_cache_free(c);
}

static void test_forward_diverts_on_status(void **state)
{
    (void)state;
    assert_false(ent_forward_diverts("Active"));
    assert_false(ent_forward_diverts("ReceiveDisabled"));
    assert_true(ent_forward_diverts("SendDisabled"));
    assert_true(ent_forward_diverts("Disabled"));
    assert_true(ent_forward_diverts("bogus"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_by_name_and_id),
        cmocka_unit_test(test_namespaces),
        cmocka_unit_test(test_send_target_follows_forward_to),
        cmocka_unit_test(test_forward_loop_stops_at_the_hop_limit),
        cmocka_unit_test(test_dead_letter_target),
        cmocka_unit_test(test_forward_diverts_on_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
