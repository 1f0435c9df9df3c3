/* The rule statements of sql/store_rules.h against a real PostgreSQL that the
 * test starts itself (store_fixture.h): add (created_at from the emulator's
 * clock, names unique regardless of case, a gone subscription, the per-topic
 * filter limits counted apart for SQL-like and correlation filters), remove,
 * and list (order, skip/top, every column back as written), each stamping the
 * subscription's activity. The store is driven by its own poll() loop, as in
 * test_store_engine.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <poll.h>

#include "emu_log.h"
#include "store.h"
#include "store_fixture.h"
#include "store_migrate.h"
#include "store_rule_json.h"
#include "store_rules.h"

/* The emulator's clock in these tests (2023-11-14), far from the wall clock,
 * so a created_at written with now() would show. */
#define T0_MS INT64_C(1700000000000)
#define ANSWER_TIMEOUT_MS 30000
#define POLL_SLICE_MS 100
#define LIST_MAX 16

static store_fixture pgfx;
static PGconn *db;
static char err[4096];
static store *st;
static bool want_write, want_flush;

static void hook_want_write(void *ud) { (void)ud, want_write = true; }
static void hook_want_flush(void *ud) { (void)ud, want_flush = true; }

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int outstanding;

/* Serves the store until every callback ran. */
static void wait_answers(void)
{
    long deadline = mono_ms() + ANSWER_TIMEOUT_MS;
    while (outstanding || !store_idle(st)) {
        long left = deadline - mono_ms();
        if (left <= 0)
            fail_msg("%d store callbacks still outstanding", outstanding);
        if (want_flush) {
            want_flush = false;
            store_flush(st);
            continue;
        }
        /* the flusher's socket too: a write is answered once its flush is back */
        struct pollfd p[2] = {{.fd = store_socket(st), .events = POLLIN | (want_write ? POLLOUT : 0)},
                              {.fd = store_flush_socket(st), .events = POLLIN}};
        if (poll(p, 2, left < POLL_SLICE_MS ? (int)left : POLL_SLICE_MS) <= 0)
            continue;
        if (p[0].revents & (POLLIN | POLLERR | POLLHUP))
            store_on_readable(st);
        if (p[0].revents & POLLOUT) {
            want_write = false;
            store_on_writable(st);
        }
        if (p[1].revents & (POLLIN | POLLERR | POLLHUP))
            store_on_flush_readable(st);
    }
}

static char value_buf[4096];

__attribute__((format(printf, 1, 2))) static const char *q1(const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    PGresult *r = PQexec(db, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    snprintf(value_buf, sizeof value_buf, "%s", PQgetisnull(r, 0, 0) ? "<null>" : PQgetvalue(r, 0, 0));
    PQclear(r);
    return value_buf;
}

static int64_t q1_int(const char *sql) { return strtoll(q1("%s", sql), NULL, 10); }

/* ---- calls ---- */

typedef struct add_answer {
    int calls;
    sb_status st;
    int64_t count;
} add_answer;

static void on_add(void *ctx, sb_status s, int64_t count)
{
    add_answer *a = ctx;
    a->calls++;
    a->st = s;
    a->count = count;
    outstanding--;
}

static add_answer add(int64_t sub, const store_rule *rule, int64_t limit, int64_t now_ms)
{
    add_answer a = {0};
    outstanding++;
    store_rule_add(st, sub, rule, limit, now_ms, on_add, &a);
    wait_answers();
    assert_int_equal(a.calls, 1);
    return a;
}

static sb_status add_sql(int64_t sub, const char *name, int64_t now_ms)
{
    const store_rule r = {.name = name, .filter_type = "Sql", .sql_expression = "a = 1"};
    return add(sub, &r, 2000, now_ms).st;
}

typedef struct status_answer {
    int calls;
    sb_status st;
} status_answer;

static void on_status(void *ctx, sb_status s)
{
    status_answer *a = ctx;
    a->calls++;
    a->st = s;
    outstanding--;
}

static sb_status remove_rule(int64_t sub, const char *name, int64_t now_ms)
{
    status_answer a = {0};
    outstanding++;
    store_rule_remove(st, sub, name, now_ms, on_status, &a);
    wait_answers();
    assert_int_equal(a.calls, 1);
    return a.st;
}

/* What a list answered, copied out of the callback. */
typedef struct list_answer {
    int calls;
    sb_status st;
    size_t n;
    char names[LIST_MAX][64];
    store_rule rows[LIST_MAX]; /* strings valid only inside the callback: checked there */
    char text[LIST_MAX][512];  /* "type|sql|corr|fparams|action|aparams|created" */
} list_answer;

static const char *or_null(const char *s) { return s ? s : "<null>"; }

static void on_list(void *ctx, sb_status s, const store_rule *rules, size_t n)
{
    list_answer *a = ctx;
    a->calls++;
    a->st = s;
    a->n = n;
    for (size_t i = 0; i < n && i < LIST_MAX; i++) {
        const store_rule *x = &rules[i];
        snprintf(a->names[i], sizeof a->names[i], "%s", x->name);
        snprintf(a->text[i], sizeof a->text[i], "%s|%s|%s|%s|%s|%s|%lld", x->filter_type, or_null(x->sql_expression),
                 or_null(x->correlation), or_null(x->filter_parameters), or_null(x->action_expression),
                 or_null(x->action_parameters), (long long)x->created_ms);
    }
    outstanding--;
}

static void list(int64_t sub, int64_t skip, int64_t top, list_answer *a)
{
    memset(a, 0, sizeof *a);
    outstanding++;
    store_rule_list(st, sub, skip, top, on_list, a);
    wait_answers();
    assert_int_equal(a->calls, 1);
    assert_int_equal(a->st, SB_OK);
}

/* A topic with n subscriptions made with plain SQL (each gets $Default); ids in subs. */
static void make_topic(const char *topic, int n, int64_t *subs)
{
    q1("INSERT INTO topics (name) VALUES ('%s') RETURNING id", topic);
    for (int i = 0; i < n; i++)
        subs[i] = strtoll(q1("INSERT INTO subscriptions (topic_id, name) SELECT id, 'sub%d' FROM topics"
                             " WHERE name = '%s' RETURNING id",
                             i, topic),
                          NULL, 10);
}

/* ---- tests ---- */

static void test_add_list_remove(void **state)
{
    (void)state;
    int64_t sub[1];
    make_topic("t-basic", 1, sub);
    const store_rule sql = {.name = "Big-Red", .filter_type = "Sql", .sql_expression = "color = @c",
                            .filter_parameters = "{\"@c\":\"red\"}", .action_expression = "SET n = @n",
                            .action_parameters = "{\"@n\":{\"type\":\"timespan\",\"value\":\"00:01:30\"}}"};
    add_answer a = add(sub[0], &sql, 2000, T0_MS);
    assert_int_equal(a.st, SB_OK);
    const store_rule corr = {.name = "corr", .filter_type = "Correlation",
                             .correlation = "{\"Label\":\"l\",\"Properties\":{\"n\":7}}"};
    assert_int_equal(add(sub[0], &corr, 100000, T0_MS + 1).st, SB_OK);
    const store_rule never = {.name = "never", .filter_type = "False"};
    assert_int_equal(add(sub[0], &never, 2000, T0_MS + 1).st, SB_OK);

    /* created_at is the emulator's clock, not now() */
    assert_string_equal(q1("SELECT sbemu_ms(created_at) FROM rules WHERE subscription_id = %lld AND name = 'Big-Red'",
                           (long long)sub[0]),
                        "1700000000000");
    /* activity: a new rule counts for AutoDeleteOnIdle */
    assert_string_equal(q1("SELECT sbemu_ms(accessed_at) >= %lld FROM entity_runtime WHERE entity_id = %lld",
                           (long long)T0_MS + 1, (long long)sub[0]),
                        "t");

    list_answer l;
    list(sub[0], 0, 100, &l);
    assert_int_equal(l.n, 4);
    /* in rule-name order (lower case, then as written), as Service Bus lists them: "$" sorts first */
    assert_string_equal(l.names[0], "$Default");
    assert_string_equal(l.names[1], "Big-Red");
    assert_string_equal(l.names[2], "corr");
    assert_string_equal(l.names[3], "never");
    static const char true_row[] = "True|<null>|<null>|<null>|<null>|<null>|";
    assert_memory_equal(l.text[0], true_row, strlen(true_row));
    assert_string_equal(l.text[1], "Sql|color = @c|<null>|{\"@c\": \"red\"}|SET n = @n|"
                                   "{\"@n\": {\"type\": \"timespan\", \"value\": \"00:01:30\"}}|1700000000000");
    assert_string_equal(l.text[2], "Correlation|<null>|{\"Label\": \"l\", \"Properties\": {\"n\": 7}}|<null>|<null>|"
                                   "<null>|1700000000001");
    assert_string_equal(l.text[3], "False|<null>|<null>|<null>|<null>|<null>|1700000000001");

    /* paging */
    list(sub[0], 1, 2, &l);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.names[0], "Big-Red");
    assert_string_equal(l.names[1], "corr");
    list(sub[0], 4, 10, &l);
    assert_int_equal(l.n, 0);

    /* remove: any letter case; twice is not found */
    assert_int_equal(remove_rule(sub[0], "big-red", T0_MS + 10), SB_OK);
    assert_int_equal(remove_rule(sub[0], "BIG-RED", T0_MS + 10), SB_ERR_NOT_FOUND);
    assert_int_equal(remove_rule(sub[0], "$DEFAULT", T0_MS + 10), SB_OK);
    list(sub[0], 0, 100, &l);
    assert_int_equal(l.n, 2);
    assert_string_equal(q1("SELECT sbemu_ms(accessed_at) >= %lld FROM entity_runtime WHERE entity_id = %lld",
                           (long long)T0_MS + 10, (long long)sub[0]),
                        "t");
}

static void test_names_unique_regardless_of_case(void **state)
{
    (void)state;
    int64_t sub[2];
    make_topic("t-names", 2, sub);
    assert_int_equal(add_sql(sub[0], "Orders", T0_MS), SB_OK);
    assert_int_equal(add_sql(sub[0], "ORDERS", T0_MS), SB_ERR_ALREADY_EXISTS);
    assert_int_equal(add_sql(sub[0], "$default", T0_MS), SB_ERR_ALREADY_EXISTS);
    /* another subscription has its own names */
    assert_int_equal(add_sql(sub[1], "orders", T0_MS), SB_OK);
    assert_int_equal(q1_int("SELECT count(*) FROM rules WHERE lower(name) = 'orders'"), 2);
}

static void test_gone_subscription(void **state)
{
    (void)state;
    int64_t sub[1];
    make_topic("t-gone", 1, sub);
    q1("DELETE FROM subscriptions WHERE id = %lld RETURNING id", (long long)sub[0]);
    assert_int_equal(add_sql(sub[0], "r", T0_MS), SB_ERR_NOT_FOUND);
    assert_int_equal(remove_rule(sub[0], "$Default", T0_MS), SB_ERR_NOT_FOUND);
    list_answer l;
    list(sub[0], 0, 10, &l);
    assert_int_equal(l.n, 0);
}

/* Limits count the topic's filters over all its subscriptions; True, False
 * and Sql together, Correlation apart. */
static void test_filter_limits_per_topic(void **state)
{
    (void)state;
    int64_t sub[2], other[1];
    make_topic("t-limits", 2, sub);
    make_topic("t-other", 1, other);
    /* two $Default rules already: a limit of 3 leaves room for one SQL filter */
    assert_int_equal(add_sql(sub[0], "one", T0_MS), SB_OK);
    const store_rule sql = {.name = "two", .filter_type = "Sql", .sql_expression = "1=1"};
    add_answer a = add(sub[1], &sql, 3, T0_MS);
    assert_int_equal(a.st, SB_ERR_QUOTA_EXCEEDED);
    assert_int_equal(a.count, 3);
    assert_int_equal(q1_int("SELECT count(*) FROM rules WHERE name = 'two'"), 0);
    /* correlation filters are counted apart */
    const store_rule corr = {.name = "c1", .filter_type = "Correlation", .correlation = "{\"To\":\"x\"}"};
    assert_int_equal(add(sub[1], &corr, 1, T0_MS).st, SB_OK);
    const store_rule corr2 = {.name = "c2", .filter_type = "Correlation", .correlation = "{\"To\":\"y\"}"};
    a = add(sub[0], &corr2, 1, T0_MS);
    assert_int_equal(a.st, SB_ERR_QUOTA_EXCEEDED);
    assert_int_equal(a.count, 1);
    /* another topic does not count */
    assert_int_equal(add(other[0], &corr2, 1, T0_MS).st, SB_OK);
    /* a taken name under the limit is a taken name */
    assert_int_equal(add(sub[0], &sql, 2000, T0_MS).st, SB_OK);
    assert_int_equal(add(sub[0], &sql, 2000, T0_MS).st, SB_ERR_ALREADY_EXISTS);
}

/* The JSON writer of correlation filters reads back with the reader the cache uses. */
static void test_correlation_json(void **state)
{
    (void)state;
    const ent_filter_prop props[] = {
        {"n", ent_fv_int(7)},
        {"when", ent_fv_time(T0_MS)},
        {"s", ent_fv_cstr("x")},
    };
    const ent_filter_correlation c = {.correlation_id = "cid", .reply_to_session_id = "rts", .properties = props,
                                      .nproperties = 3};
    char *json = store_rule_correlation_json(&c);
    assert_non_null(json);
    assert_string_equal(json, "{\"CorrelationId\":\"cid\",\"Properties\":{\"n\":7,\"s\":\"x\",\"when\":{\"type\":"
                              "\"timestamp\",\"value\":\"2023-11-14T22:13:20.000Z\"}},\"ReplyToSessionId\":\"rts\"}");
    ent_filter_correlation back;
    char *storage;
    store_rule_props p;
    char why[200];
    assert_int_equal(store_rule_correlation_parse(json, &back, &storage, &p, why, sizeof why), 0);
    assert_string_equal(back.correlation_id, "cid");
    assert_string_equal(back.reply_to_session_id, "rts");
    assert_null(back.to);
    assert_int_equal(p.n, 3);
    free(storage);
    store_rule_props_free(&p);
    free(json);

    const ent_filter_correlation bare = {.label = "only"};
    json = store_rule_correlation_json(&bare);
    assert_string_equal(json, "{\"Label\":\"only\"}");
    free(json);
}

/* ---- fixtures ---- */

static int group_setup(void **state)
{
    (void)state;
    emu_log_init(ENT_LOG_WARN);
    if (store_fixture_start(&pgfx, "store-rules", err, sizeof err)) {
        fprintf(stderr, "test_store_rules: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    db = PQconnectdb(pgfx.conninfo);
    if (PQstatus(db) != CONNECTION_OK || store_migrate(db, err, sizeof err)) {
        fprintf(stderr, "test_store_rules: %s%s\n", PQerrorMessage(db), err);
        return -1;
    }
    const store_hooks hooks = {.want_write = hook_want_write, .want_flush = hook_want_flush};
    if (!(st = store_open(pgfx.conninfo, &hooks, err, sizeof err))) {
        fprintf(stderr, "test_store_rules: store_open: %s\n", err);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (st)
        store_close(st);
    PQfinish(db);
    store_fixture_stop(&pgfx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_list_remove),
        cmocka_unit_test(test_names_unique_regardless_of_case),
        cmocka_unit_test(test_gone_subscription),
        cmocka_unit_test(test_filter_limits_per_topic),
        cmocka_unit_test(test_correlation_json),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
