/* The entity column tables (sql/store_columns.h) against a real PostgreSQL
 * (store_fixture.h, never skipped): every column they name exists, and every
 * property written through them (store_config_apply's upserts, built from the
 * tables, with store_columns_params) reads back equal through them
 * (store_sql_select + store_columns_read), unlimited durations and unset
 * texts included; the entities view's table reads what the cache expects.
 * And the times claims hand out as timestamptz read back (col_ts_ms) as the
 * milliseconds sbemu_ms makes of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "ent_cache.h"
#include "ent_config.h"
#include "ent_duration.h"
#include "store_binary.h"
#include "store_columns.h"
#include "store_config.h"
#include "store_fixture.h"
#include "store_migrate.h"

static store_fixture pgfx;
static PGconn *conn;
static char err[4096];

static int group_setup(void **state)
{
    (void)state;
    if (store_fixture_start(&pgfx, "store-columns", err, sizeof err)) {
        fprintf(stderr, "test_store_columns: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    conn = PQconnectdb(pgfx.conninfo);
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "test_store_columns: %s", PQerrorMessage(conn));
        return -1;
    }
    PQclear(PQexec(conn, "SET client_min_messages = warning"));
    if (store_migrate(conn, err, sizeof err)) {
        fprintf(stderr, "test_store_columns: migrate: %s\n", err);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    PQfinish(conn);
    conn = NULL;
    store_fixture_stop(&pgfx);
    return 0;
}

/* The rows of `sql`, in binary (as the store reads them). Caller clears. */
static PGresult *select_binary(const char *sql, const char *param)
{
    const char *values[] = {param};
    PGresult *r = PQexecParams(conn, sql, param ? 1 : 0, NULL, param ? values : NULL, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    return r;
}

static void test_every_column_exists(void **state)
{
    (void)state;
    const store_columns *tables[] = {&store_queue_columns, &store_topic_columns, &store_subscription_columns,
                                     &store_entity_view_columns};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        assert_true(tables[t]->n <= STORE_COLUMNS_MAX);
        for (int i = 0; i < tables[t]->n; i++) {
            const char *values[] = {tables[t]->table, tables[t]->cols[i].name};
            PGresult *r = PQexecParams(conn,
                                       "SELECT 1 FROM information_schema.columns WHERE table_name = $1"
                                       " AND column_name = $2",
                                       2, NULL, values, NULL, NULL, 0);
            assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
            if (PQntuples(r) != 1)
                fail_msg("%s.%s: no such column", tables[t]->table, tables[t]->cols[i].name);
            PQclear(r);
        }
    }
}

/* SELECT the table's columns FROM it WHERE `where` ($1 text). */
static PGresult *read_back(const store_columns *c, const char *where, const char *param)
{
    char buf[4096];
    store_sql s;
    store_sql_init(&s, buf, sizeof buf);
    store_sql_add(&s, "SELECT ");
    store_sql_select(&s, c, "x", 0);
    store_sql_add(&s, " FROM %s x WHERE %s", c->table, where);
    assert_false(s.overflow);
    PGresult *r = select_binary(buf, param);
    assert_int_equal(PQntuples(r), 1);
    return r;
}

/* The entities view's row of `path`, as the cache reads it. */
static void read_entity(const char *path, ent_entity *e)
{
    PGresult *r = read_back(&store_entity_view_columns, "x.path = $1", path);
    store_columns_read(&store_entity_view_columns, r, 0, 0, e);
    PQclear(r);
}

static void set(sb_status (*setter)(void *, const char *, ent_value, char *, size_t), void *p, const char *k,
                ent_value v)
{
    if (setter(p, k, v, err, sizeof err) != SB_OK)
        fail_msg("%s: %s", k, err);
}
static sb_status qset(void *p, const char *k, ent_value v, char *e, size_t n) { return ent_queue_set(p, k, v, e, n); }
static sb_status tset(void *p, const char *k, ent_value v, char *e, size_t n) { return ent_topic_set(p, k, v, e, n); }
static sb_status sset(void *p, const char *k, ent_value v, char *e, size_t n)
{
    return ent_subscription_set(p, k, v, e, n);
}

static void test_properties_round_trip(void **state)
{
    (void)state;
    ent_config cfg;
    ent_config_init(&cfg);
    /* one of each kind with every property away from its default, and one
     * with the defaults (unlimited durations, unset texts) */
    ent_queue_props q, plain;
    assert_int_equal(ent_queue_props_init(&q, "Orders", err, sizeof err), SB_OK);
    assert_int_equal(ent_queue_props_init(&plain, "plain", err, sizeof err), SB_OK);
    set(qset, &q, "LockDuration", ent_value_string("PT45S"));
    set(qset, &q, "MaxDeliveryCount", ent_value_int(7));
    set(qset, &q, "DefaultMessageTimeToLive", ent_value_string("PT2H"));
    set(qset, &q, "DeadLetteringOnMessageExpiration", ent_value_bool(1));
    set(qset, &q, "RequiresDuplicateDetection", ent_value_bool(1));
    set(qset, &q, "DuplicateDetectionHistoryTimeWindow", ent_value_string("PT30S"));
    set(qset, &q, "RequiresSession", ent_value_bool(1));
    set(qset, &q, "ForwardDeadLetteredMessagesTo", ent_value_string("plain"));
    set(qset, &q, "AutoDeleteOnIdle", ent_value_string("PT10M"));
    set(qset, &q, "Status", ent_value_string("SendDisabled"));
    set(qset, &q, "MaxSizeInMegabytes", ent_value_int(2048));
    set(qset, &q, "EnableBatchedOperations", ent_value_bool(0));
    set(qset, &q, "EnablePartitioning", ent_value_bool(1));
    set(qset, &q, "UserMetadata", ent_value_string("made by a test"));
    assert_non_null(ent_config_add_queue(&cfg, &q));
    assert_non_null(ent_config_add_queue(&cfg, &plain));

    ent_topic_props t;
    assert_int_equal(ent_topic_props_init(&t, "news", err, sizeof err), SB_OK);
    set(tset, &t, "DefaultMessageTimeToLive", ent_value_string("P1D"));
    set(tset, &t, "AutoDeleteOnIdle", ent_value_string("PT1H"));
    set(tset, &t, "SupportOrdering", ent_value_bool(0));
    set(tset, &t, "Status", ent_value_string("Disabled"));
    set(tset, &t, "UserMetadata", ent_value_string("topic metadata"));
    ent_topic_config *tc = ent_config_add_topic(&cfg, &t);
    assert_non_null(tc);
    ent_subscription_props s;
    assert_int_equal(ent_subscription_props_init(&s, "news", "all", err, sizeof err), SB_OK);
    set(sset, &s, "LockDuration", ent_value_string("PT2M"));
    set(sset, &s, "MaxDeliveryCount", ent_value_int(3));
    set(sset, &s, "DeadLetteringOnFilterEvaluationExceptions", ent_value_bool(0));
    set(sset, &s, "ForwardTo", ent_value_string("Orders"));
    set(sset, &s, "Status", ent_value_string("ReceiveDisabled"));
    set(sset, &s, "EnableBatchedOperations", ent_value_bool(0));
    assert_non_null(ent_config_add_subscription(tc, &s));

    if (store_config_apply(conn, &cfg, err, sizeof err))
        fail_msg("apply: %s", err);
    ent_config_free(&cfg);

    const ent_queue_props *queues[] = {&q, &plain};
    for (size_t i = 0; i < 2; i++) {
        PGresult *r = read_back(&store_queue_columns, "x.name = $1", queues[i]->name);
        ent_queue_props got;
        memset(&got, 0, sizeof got);
        store_columns_read(&store_queue_columns, r, 0, 0, &got);
        PQclear(r);
        assert_memory_equal(&got, queues[i], sizeof got);
    }
    PGresult *r = read_back(&store_topic_columns, "x.name = $1", "news");
    ent_topic_props gt;
    memset(&gt, 0, sizeof gt);
    store_columns_read(&store_topic_columns, r, 0, 0, &gt);
    PQclear(r);
    assert_memory_equal(&gt, &t, sizeof gt);
    r = read_back(&store_subscription_columns, "x.name = $1", "all");
    ent_subscription_props gs;
    memset(&gs, 0, sizeof gs);
    memcpy(gs.topic, s.topic, sizeof gs.topic); /* the statements' business, not a column */
    store_columns_read(&store_subscription_columns, r, 0, 0, &gs);
    PQclear(r);
    assert_memory_equal(&gs, &s, sizeof gs);

    /* the cache's view of them */
    ent_entity e;
    read_entity("news/Subscriptions/all", &e);
    assert_int_equal(e.kind, ENT_KIND_SUBSCRIPTION);
    assert_true(e.topic_id > 0);
    assert_string_equal(e.status, "ReceiveDisabled");
    assert_int_equal(e.lock_duration_ms, 120000);
    assert_int_equal(e.max_delivery_count, 3);
    assert_int_equal(e.default_ttl_ms, -1); /* the cache's "none" */
    assert_false(e.dead_lettering_on_filter_exceptions);
    assert_string_equal(e.forward_to, "Orders");
    assert_string_equal(e.forward_dead_lettered_to, "");
    read_entity("Orders", &e);
    assert_int_equal(e.kind, ENT_KIND_QUEUE);
    assert_int_equal(e.topic_id, 0);
    assert_true(e.requires_session);
    assert_int_equal(e.default_ttl_ms, 2 * 3600 * 1000);
    assert_int_equal(e.duplicate_window_ms, 30000);
    assert_int_equal(e.max_size_mb, 2048);
    assert_string_equal(e.forward_dead_lettered_to, "plain");
    read_entity("news", &e);
    assert_int_equal(e.kind, ENT_KIND_TOPIC);
    assert_int_equal(e.default_ttl_ms, 86400000);
}

static void test_params_encode_unset_as_null(void **state)
{
    (void)state;
    ent_queue_props q;
    assert_int_equal(ent_queue_props_init(&q, "q", err, sizeof err), SB_OK);
    store_param p[STORE_COLUMNS_MAX];
    int8_param ints[STORE_COLUMNS_MAX];
    Oid types[STORE_COLUMNS_MAX];
    int n = store_columns_params(&store_queue_columns, &q, p, ints);
    store_columns_types(&store_queue_columns, types);
    assert_int_equal(n, store_queue_columns.n);
    int ttl = store_columns_param(&store_queue_columns, "default_message_time_to_live", 0);
    int fwd = store_columns_param(&store_queue_columns, "forward_to", 0);
    int lock = store_columns_param(&store_queue_columns, "lock_duration", 0);
    int rs = store_columns_param(&store_queue_columns, "requires_session", 0);
    assert_null(p[ttl].value); /* unlimited */
    assert_null(p[fwd].value); /* "" */
    assert_int_equal(types[ttl], STORE_OID_INT8);
    assert_int_equal(p[lock].len, 8);
    assert_int_equal(p[lock].binary, 1);
    assert_string_equal(p[rs].value, "false");
    assert_int_equal(types[rs], STORE_OID_TEXT);
    assert_int_equal(store_columns_param(&store_queue_columns, "no_such_column", 1), -1);
}

/* col_ts_ms reads a binary timestamptz as sbemu_ms reads it in SQL: times
 * made from milliseconds (sbemu_ts, as the store writes them), times between
 * two milliseconds (written with SQL), before 1970 and before 2000 (negative
 * in the binary form); NULL reads as 0, as the claims' coalesce did. */
static void test_times_read_as_sbemu_ms(void **state)
{
    (void)state;
    PGresult *r = select_binary("SELECT t, sbemu_ms(t) FROM (VALUES (sbemu_ts(1764300000123)), (sbemu_ts(0)),"
                                " (sbemu_ts(-1)), (sbemu_ts(946684800001)), (sbemu_ts(946684799999)),"
                                " ('2026-11-28 15:01:02.123999+00'::timestamptz), ('1969-12-31 23:59:59.9995+00'),"
                                " ('1999-12-31 23:59:59.999001+00'), ('2000-01-01 00:00:00.000999+00'),"
                                " (sbemu_ts(4102444800000))) v(t)",
                                NULL);
    assert_int_equal(PQntuples(r), 10);
    for (int i = 0; i < PQntuples(r); i++) {
        int64_t want = col_i64(r, i, 1);
        if (col_ts_ms(r, i, 0) != want)
            fail_msg("row %d: col_ts_ms %lld, sbemu_ms %lld", i, (long long)col_ts_ms(r, i, 0), (long long)want);
    }
    assert_int_equal(col_ts_ms(r, 0, 0), INT64_C(1764300000123));
    assert_int_equal(col_ts_ms(r, 2, 0), -1);
    PQclear(r);
    r = select_binary("SELECT NULL::timestamptz", NULL);
    assert_int_equal(col_ts_ms(r, 0, 0), 0);
    PQclear(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_column_exists),
        cmocka_unit_test(test_properties_round_trip),
        cmocka_unit_test(test_params_encode_unset_as_null),
        cmocka_unit_test(test_times_read_as_sbemu_ms),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
