/* The sweep's plan (entities/ent_sweep.h): which entities dead-letter what
 * expires, and where each entity's dead letters go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_sweep.h"

static ent_entity ent(int64_t id, ent_kind kind, const char *name)
{
    ent_entity e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.kind = kind;
    e.default_ttl_ms = -1;
    snprintf(e.name, sizeof e.name, "%s", name);
    snprintf(e.status, sizeof e.status, "Active");
    return e;
}

static bool has(const int64_t *v, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

static void test_plan(void **state)
{
    (void)state;
    ent_entity list[] = {
        ent(1, ENT_KIND_QUEUE, "keeps"), ent(2, ENT_KIND_QUEUE, "drops"), ent(3, ENT_KIND_QUEUE, "dlq-target"),
        ent(4, ENT_KIND_QUEUE, "unknown-target"), ent(5, ENT_KIND_QUEUE, "self-target"),
    };
    list[0].dead_lettering_on_expiration = true;
    snprintf(list[0].forward_dead_lettered_to, sizeof list[0].forward_dead_lettered_to, "dlq-target");
    snprintf(list[3].forward_dead_lettered_to, sizeof list[3].forward_dead_lettered_to, "nowhere");
    snprintf(list[4].forward_dead_lettered_to, sizeof list[4].forward_dead_lettered_to, "self-target");
    ent_cache *c = ent_cache_new();
    assert_non_null(c);
    assert_int_equal(ent_cache_replace(c, list, 5, NULL, 0), 0);
    ent_sweep_plan p;
    assert_int_equal(ent_sweep_plan_make(c, &p), 0);
    assert_int_equal(p.n_dead_letter_on_expiry, 1);
    assert_true(has(p.dead_letter_on_expiry, p.n_dead_letter_on_expiry, 1));
    /* only a known entity other than itself takes another's dead letters */
    assert_int_equal(p.n_forward, 1);
    assert_int_equal(p.forward_from[0], 1);
    assert_int_equal(p.forward_to[0], 3);
    ent_sweep_plan_free(&p);
    ent_cache_free(c);
}

static void test_no_cache_is_an_empty_plan(void **state)
{
    (void)state;
    ent_sweep_plan p;
    assert_int_equal(ent_sweep_plan_make(NULL, &p), 0);
    assert_int_equal(p.n_dead_letter_on_expiry, 0);
    assert_int_equal(p.n_forward, 0);
    ent_sweep_plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_no_cache_is_an_empty_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
