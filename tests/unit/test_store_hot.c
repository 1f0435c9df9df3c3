/* A peek-lock claim is a HOT update (migration 025), on a real PostgreSQL
 * (store_fixture.h; never skipped).
 *
 * A claim that is not HOT writes each message's row again on another page,
 * with its 1 KiB body and an entry in every index, and leaves vacuum all of
 * it to remove: twice the claim's cost and ten times its WAL. It stops being
 * HOT as soon as any index of messages reads a column a claim changes
 * (lock_token, locked_until, delivery_count, or available_at, which claims
 * must leave alone), or when its page has no room for the new version
 * (fillfactor). So this test runs the store's own claim statements on 1 KiB
 * messages just sent and requires every updated row to be a HOT update, as
 * PostgreSQL counts them in the claim's own transaction; and requires the
 * lock batch a claim writes, which the lapsed-lock sweep and a session's
 * release read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "store_fixture.h"
#include "store_statements.h"

/* Messages of 1 KiB sent before each claim, and how many one claim takes
 * (AMQP_CLAIM_MAX: the most a receiving link asks for at once). */
#define HOT_SENT 2000
#define HOT_CLAIMED 500

static store_fixture pgfx;
static PGconn *conn;
static char err[4096];
static char queue_id[24];

static void exec_ok(const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
}

/* The single value of a query, as a number. */
static long value(const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    long v = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

static const stmt_def *statement(const char *name)
{
    size_t n;
    const stmt_def *defs = store_statement_defs(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(defs[i].name, name))
            return &defs[i];
    fail_msg("no statement %s", name);
    return NULL;
}

/* Runs d with text parameters; returns the rows it answered. */
static int run(const stmt_def *d, int n, const char *const *params)
{
    PGresult *r = PQexecParams(conn, d->sql, n, d->types, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", d->name, PQresultErrorMessage(r));
    int rows = PQntuples(r);
    PQclear(r);
    return rows;
}

static int group_setup(void **state)
{
    (void)state;
    if (!(conn = store_fixture_open(&pgfx, "hot", err, sizeof err))) {
        fprintf(stderr, "test_store_hot: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    PGresult *r = PQexec(conn, "INSERT INTO queues (name) VALUES ('hot') RETURNING id");
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    if (ok)
        snprintf(queue_id, sizeof queue_id, "%s", PQgetvalue(r, 0, 0));
    else
        fprintf(stderr, "test_store_hot: %s\n", PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    store_fixture_close(&pgfx, &conn);
    return 0;
}

/* HOT_SENT fresh messages of 1 KiB (sessions: every one in session s). */
static void send_fresh(bool sessions)
{
    char sql[1024];
    exec_ok("DELETE FROM messages");
    exec_ok("DELETE FROM lock_batches");
    exec_ok("VACUUM messages");
    snprintf(sql, sizeof sql,
             "INSERT INTO messages (entity_id, sequence_number, enqueued_at, available_at, session_id, message)"
             " SELECT %s, g, now(), now(), %s, convert_to(repeat('x', 1024), 'UTF8') FROM generate_series(1, %d) g",
             queue_id, sessions ? "'s'" : "NULL", HOT_SENT);
    exec_ok(sql);
}

/* Rows of messages updated, and how many HOT, not yet flushed to the
 * cumulative statistics (this transaction's, and earlier ones' still
 * pending: nothing is flushed inside a transaction, so a difference taken
 * within one counts what happened between). */
static void updates(long *all, long *hot)
{
    *all = value("SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = 'messages'");
    *hot = value("SELECT n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'messages'");
}

/* Runs d in the current transaction; *all and *hot: its row updates. */
static int run_counted(const stmt_def *d, int n, const char *const *params, long *all, long *hot)
{
    long all0, hot0;
    updates(&all0, &hot0);
    int rows = run(d, n, params);
    updates(all, hot);
    *all -= all0;
    *hot -= hot0;
    return rows;
}

/* Runs the claim `name` (in a transaction rolled back after): it must take
 * HOT_CLAIMED messages, every row update HOT, each lock in a batch of
 * `batches` (a WHERE on lock_batches). */
static void claim_is_hot(const char *name, int n, const char *const *params, const char *batches)
{
    long all, hot;
    int claimed = run_counted(statement(name), n, params, &all, &hot);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT coalesce(sum(cardinality(sequence_numbers)), 0) FROM lock_batches WHERE %s",
             batches);
    long batched = value(sql);
    exec_ok("ROLLBACK");
    assert_int_equal(claimed, HOT_CLAIMED);
    assert_int_equal(all, HOT_CLAIMED);
    if (hot != all)
        fail_msg("%s: %ld of the claim's %ld row updates were not HOT", name, all - hot, all);
    assert_int_equal(batched, HOT_CLAIMED);
}

static void test_claim_is_hot(void **state)
{
    (void)state;
    send_fresh(false);
    exec_ok("BEGIN");
    char limit[16];
    snprintf(limit, sizeof limit, "%d", HOT_CLAIMED);
    /* $1 entity, $2 subqueue, $3 now, $4 max, $5 locked until, $6 from */
    const char *const params[] = {queue_id, "0", "1000", limit, "60000000000000", "0"};
    claim_is_hot(STMT_CLAIM_LOCK, 6, params, "true"); /* the sweep finds every lock through its batch */
}

static void test_session_claim_is_hot(void **state)
{
    (void)state;
    send_fresh(true);
    exec_ok("BEGIN");
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO sessions (entity_id, session_id, lock_token, locked_until, updated_at)"
             " VALUES (%s, 's', '00000000-0000-0000-0000-000000000001', sbemu_ts(60000000000000), now())",
             queue_id);
    exec_ok(sql);
    char limit[16];
    snprintf(limit, sizeof limit, "%d", HOT_CLAIMED);
    /* $5 is unused by a session claim; $7 session, $8 its lock token */
    const char *const params[] = {queue_id, "0", "1000", limit, "0", "0", "s", "00000000-0000-0000-0000-000000000001"};
    claim_is_hot(STMT_CLAIM_SESSION_LOCK, 8, params, "session_id = 's'"); /* its release and renewal find them */
}

/* A peek-lock session receiver's lock takes its first messages with it
 * (STMT_SESSION_LOCK_CLAIM): HOT too, and in the session's lock batch. */
static void test_session_lock_claim_is_hot(void **state)
{
    (void)state;
    send_fresh(true);
    exec_ok("BEGIN");
    char limit[16];
    snprintf(limit, sizeof limit, "%d", HOT_CLAIMED);
    /* $5 the session's locked-until, $6 claim from, $7 session, $8 token, $9 pick from */
    const char *const params[] = {queue_id, "0", "1000", limit, "60000000000000", "0", "s",
                                  "00000000-0000-0000-0000-000000000001", "0"};
    claim_is_hot(STMT_SESSION_LOCK_CLAIM, 9, params, "session_id = 's'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claim_is_hot),
        cmocka_unit_test(test_session_claim_is_hot),
        cmocka_unit_test(test_session_lock_claim_is_hot),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
