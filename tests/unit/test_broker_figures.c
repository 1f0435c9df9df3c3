/* The per-entity counters behind GET /metrics (amqp10/broker/broker_figures.c):
 * counts by entity id across table growth, dead letters by reason with the
 * reasons bounded ((other) past the limit, (none) for no reason, a long
 * reason cut on a UTF-8 boundary), a tally merged in, deleted entities
 * forgotten, and which family each refusal status counts in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "broker_figures.h"

static const broker_reason_count *reason(const broker_entity_counts *e, const char *r)
{
    for (size_t i = 0; i < e->nreasons; i++)
        if (!strcmp(e->reasons[i].reason, r))
            return &e->reasons[i];
    return NULL;
}

static void counts_by_id(void **state)
{
    (void)state;
    broker_counts c = {0};
    assert_null(broker_counts_get(&c, 1)); /* empty: nothing allocated, nothing found */
    for (int64_t id = 1; id <= 1000; id++) /* many ids: the table grows under them */
        broker_counts_add(&c, id, BROKER_EV_IN, (uint64_t)id);
    broker_counts_add(&c, 7, BROKER_EV_IN, 3);
    broker_counts_add(&c, 7, BROKER_EV_COMPLETED, 2);
    broker_counts_add(&c, 8, BROKER_EV_OUT, 0); /* nothing */
    for (int64_t id = 1; id <= 1000; id++) {
        const broker_entity_counts *e = broker_counts_get(&c, id);
        assert_non_null(e);
        assert_int_equal(e->n[BROKER_EV_IN], id == 7 ? 10 : id);
    }
    assert_int_equal(broker_counts_get(&c, 7)->n[BROKER_EV_COMPLETED], 2);
    assert_int_equal(broker_counts_get(&c, 8)->n[BROKER_EV_OUT], 0);
    assert_null(broker_counts_get(&c, 1001));
    broker_counts_free(&c);
}

static void reasons_bounded(void **state)
{
    (void)state;
    broker_counts c = {0};
    broker_counts_add_dead_letters(&c, 5, "MaxDeliveryCountExceeded", 2);
    broker_counts_add_dead_letters(&c, 5, NULL, 1);
    broker_counts_add_dead_letters(&c, 5, "", 1);
    char r[32];
    for (int i = 0; i < 40; i++) { /* a client inventing a reason per message */
        snprintf(r, sizeof r, "reason-%d", i);
        broker_counts_add_dead_letters(&c, 5, r, 1);
    }
    broker_counts_add_dead_letters(&c, 5, "MaxDeliveryCountExceeded", 1); /* an early one keeps its own */
    const broker_entity_counts *e = broker_counts_get(&c, 5);
    assert_int_equal(e->nreasons, BROKER_REASONS_MAX);
    assert_int_equal(reason(e, "MaxDeliveryCountExceeded")->n, 3);
    assert_int_equal(reason(e, BROKER_REASON_NONE)->n, 2);
    /* 2 reasons above, 13 invented ones of their own, the other 27 under (other) */
    assert_non_null(reason(e, "reason-12"));
    assert_null(reason(e, "reason-13"));
    assert_int_equal(reason(e, BROKER_REASON_OTHER)->n, 27);
    uint64_t sum = 0;
    for (size_t i = 0; i < e->nreasons; i++)
        sum += e->reasons[i].n;
    assert_int_equal(sum, 45);
    assert_int_equal(e->n[BROKER_EV_DEAD_LETTERED], 45);
    broker_counts_free(&c);
}

static void long_reason_cut_on_utf8(void **state)
{
    (void)state;
    broker_counts c = {0};
    char r[BROKER_REASON_LABEL_MAX + 64];
    /* 'a' then two-byte characters: byte BROKER_REASON_LABEL_MAX falls inside one */
    size_t n = 0;
    r[n++] = 'a';
    while (n + 2 < sizeof r) {
        r[n++] = (char)0xC3;
        r[n++] = (char)0xA9;
    }
    r[n] = 0;
    broker_counts_add_dead_letters(&c, 9, r, 1);
    const broker_entity_counts *e = broker_counts_get(&c, 9);
    size_t len = strlen(e->reasons[0].reason);
    assert_true(len <= BROKER_REASON_LABEL_MAX);
    assert_true(len >= BROKER_REASON_LABEL_MAX - 1);
    assert_int_equal(len % 2, 1); /* 'a' and whole characters only */
    assert_int_equal(memcmp(e->reasons[0].reason, r, len), 0);
    broker_counts_free(&c);
}

static int odd_only(void *ctx, int64_t id)
{
    (void)ctx;
    return id % 2;
}

static void merge_and_keep(void **state)
{
    (void)state;
    broker_counts all = {0}, tally = {0};
    broker_counts_add(&all, 1, BROKER_EV_IN, 1);
    broker_counts_add_dead_letters(&all, 1, "x", 1);
    broker_counts_add(&tally, 1, BROKER_EV_IN, 4);
    broker_counts_add(&tally, 2, BROKER_EV_IN, 5);
    broker_counts_add_dead_letters(&tally, 1, "x", 2);
    broker_counts_add_dead_letters(&tally, 3, "y", 1);
    broker_counts_merge(&all, &tally);
    broker_counts_free(&tally);
    assert_int_equal(broker_counts_get(&all, 1)->n[BROKER_EV_IN], 5);
    assert_int_equal(broker_counts_get(&all, 1)->n[BROKER_EV_DEAD_LETTERED], 3);
    assert_int_equal(reason(broker_counts_get(&all, 1), "x")->n, 3);
    assert_int_equal(broker_counts_get(&all, 2)->n[BROKER_EV_IN], 5);
    assert_int_equal(broker_counts_get(&all, 3)->n[BROKER_EV_DEAD_LETTERED], 1);
    broker_counts_keep(&all, odd_only, NULL); /* entity 2 was deleted */
    assert_null(broker_counts_get(&all, 2));
    assert_non_null(broker_counts_get(&all, 1));
    assert_int_equal(reason(broker_counts_get(&all, 3), "y")->n, 1);
    broker_counts_free(&all);
}

static void refusal_families(void **state)
{
    (void)state;
    assert_int_equal(broker_refusal_kind_of(SB_ERR_SERVER_BUSY), BROKER_REFUSED_THROTTLED);
    assert_int_equal(broker_refusal_kind_of(SB_ERR_INTERNAL), BROKER_REFUSED_SERVER_ERROR);
    assert_int_equal(broker_refusal_kind_of(SB_ERR_LOCK_LOST), BROKER_REFUSED_CLIENT_ERROR);
    assert_int_equal(broker_refusal_kind_of(SB_ERR_TIMEOUT), BROKER_REFUSED_CLIENT_ERROR);
    broker_door_figures f = {0};
    broker_door_refused(&f, SB_OK); /* a success is no refusal */
    broker_door_refused(&f, SB_ERR_LOCK_LOST);
    broker_door_refused(&f, SB_STATUS_COUNT); /* out of range: ignored */
    broker_door_refused(NULL, SB_ERR_INTERNAL);
    assert_int_equal(f.refusals[SB_OK], 0);
    assert_int_equal(f.refusals[SB_ERR_LOCK_LOST], 1);
    assert_string_equal(broker_link_kind_name(BROKER_LINK_COORDINATOR), "coordinator");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_by_id),   cmocka_unit_test(reasons_bounded),  cmocka_unit_test(long_reason_cut_on_utf8),
        cmocka_unit_test(merge_and_keep), cmocka_unit_test(refusal_families),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
