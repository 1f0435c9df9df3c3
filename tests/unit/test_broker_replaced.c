/* A reset or restore against a refill of the entity cache that was in the
 * store when it came (amqp10/broker/broker_reset.c, broker_entities.c), on a
 * real PostgreSQL (store_fixture.h; never skipped).
 *
 * The refill reads every namespace's clock offset, and the cache only ever
 * moves a clock forward to what it read. A refill that read the clocks before
 * a restore set one back must not move it forward again once the restore is
 * made good here: the emulator would then run hours ahead of the restored
 * messages, expire them (a queue's default time to live) and find nothing to
 * deliver. That is what e2e's "restored by the emulator that saved it" met at
 * random, when the restore came while the refill asked for by the entity
 * changes just before it was still in the store.
 *
 * The test is its own event loop, as test_store_engine.c's: poll() on
 * store_socket, store_flush when the store asked for it. It holds the
 * refill's answer unread in the socket while the database changes and the
 * restore is made good, so the order is the same on every run. */
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

#include "broker.h"
#include "ent_clock.h"
#include "ent_namespace.h"
#include "store.h"
#include "store_fixture.h"
#include "store_migrate.h"

/* The clock before the restore (7 h ahead) and the restored one (2 h). */
#define AHEAD_MS INT64_C(25200000)
#define RESTORED_MS INT64_C(7200000)
/* Only a wedged store gets near these. */
#define ANSWER_TIMEOUT_MS 30000
#define POLL_SLICE_MS 100
/* A restore's generation as its NOTIFY would carry it (any this broker has not seen). */
#define GENERATION 4242

static store_fixture pgfx;
static PGconn *db; /* plain connection: plays the restore's transaction */
static char err[4096];

static struct {
    store *s;
    broker *b;
    bool want_write, want_flush;
    int refilled; /* broker_after_refill answers */
} fx;

static void hook_want_write(void *ud) { (void)ud, fx.want_write = true; }
static void hook_want_flush(void *ud) { (void)ud, fx.want_flush = true; }

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* One turn of the loop. read: whether an answer in the socket is taken. */
static void turn(bool read)
{
    if (fx.want_flush) {
        fx.want_flush = false;
        store_flush(fx.s);
        return;
    }
    /* the flusher's socket too: a write is answered once its flush is back */
    struct pollfd p[2] = {{.fd = store_socket(fx.s), .events = (read ? POLLIN : 0) | (fx.want_write ? POLLOUT : 0)},
                          {.fd = store_flush_socket(fx.s), .events = read ? POLLIN : 0}};
    if (!p[0].events || poll(p, 2, POLL_SLICE_MS) <= 0)
        return;
    if (read && (p[0].revents & (POLLIN | POLLERR | POLLHUP)))
        store_on_readable(fx.s);
    if (p[0].revents & POLLOUT) {
        fx.want_write = false;
        store_on_writable(fx.s);
    }
    if (read && (p[1].revents & (POLLIN | POLLERR | POLLHUP)))
        store_on_flush_readable(fx.s);
}

static void exec_ok(const char *sql)
{
    PGresult *r = PQexec(db, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
}

/* Whether any other backend of the database is still working (the store's
 * refill, until it has read and answered everything). */
static bool others_busy(void)
{
    PGresult *r = PQexec(db, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                             " AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle'");
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("pg_stat_activity: %s", PQresultErrorMessage(r));
    bool busy = strcmp(PQgetvalue(r, 0, 0), "0") != 0;
    PQclear(r);
    return busy;
}

static void on_refilled(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)ctx, (void)e, (void)route;
    assert_int_equal(st, SB_OK);
    fx.refilled++;
}

static int group_setup(void **state)
{
    (void)state;
    if (store_fixture_start(&pgfx, "replaced", err, sizeof err)) {
        fprintf(stderr, "test_broker_replaced: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    db = PQconnectdb(pgfx.conninfo);
    if (PQstatus(db) != CONNECTION_OK || store_migrate(db, err, sizeof err)) {
        fprintf(stderr, "test_broker_replaced: %s%s\n", PQerrorMessage(db), err);
        return -1;
    }
    const store_hooks hooks = {.want_write = hook_want_write, .want_flush = hook_want_flush};
    fx.s = store_open(pgfx.conninfo, &hooks, err, sizeof err);
    static const broker_settings settings = {.sas_key_name = "RootManageSharedAccessKey", .sas_key = "SAS_KEY_VALUE",
                                             .max_message_size = 1048576};
    fx.b = fx.s ? broker_new(fx.s, &settings) : NULL;
    if (!fx.b) {
        fprintf(stderr, "test_broker_replaced: store_open: %s\n", err);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    broker_free(fx.b);
    store_close(fx.s);
    PQfinish(db);
    store_fixture_stop(&pgfx);
    return 0;
}

static void refill_read_before_a_restore_does_not_move_its_clock_forward(void **state)
{
    (void)state;
    int32_t ns = ENT_NAMESPACE_DEFAULT_ID;
    /* the clock is 7 h ahead, here and in the database */
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE sbemu_clock SET offset_ms = %lld WHERE namespace_id = %d", (long long)AHEAD_MS,
             (int)ns);
    exec_ok(sql);
    ent_clock_set_offset_in(ns, AHEAD_MS);

    /* a refill (an entity changed) is sent and read by PostgreSQL; its
     * answer stays unread in the socket */
    broker_refresh_entities(fx.b);
    long deadline = mono_ms() + ANSWER_TIMEOUT_MS;
    do {
        turn(false);
        if (mono_ms() > deadline)
            fail_msg("the refill was not sent within %d ms", ANSWER_TIMEOUT_MS);
    } while (fx.want_flush || fx.want_write);
    struct pollfd p = {.fd = store_socket(fx.s), .events = POLLIN};
    if (poll(&p, 1, ANSWER_TIMEOUT_MS) <= 0)
        fail_msg("the refill was not answered within %d ms", ANSWER_TIMEOUT_MS);
    while (others_busy())
        if (mono_ms() > deadline)
            fail_msg("the refill's backend still busy after %d ms", ANSWER_TIMEOUT_MS);

    /* the restore commits (its clock 2 h ahead) and is made good here */
    snprintf(sql, sizeof sql, "UPDATE sbemu_clock SET offset_ms = %lld WHERE namespace_id = %d",
             (long long)RESTORED_MS, (int)ns);
    exec_ok(sql);
    broker_replaced(fx.b, GENERATION, RESTORED_MS, ns);
    assert_int_equal(ent_clock_offset_ms_in(ns), RESTORED_MS);

    /* the stale refill is answered, then the one the restore asked for */
    broker_after_refill(fx.b, on_refilled, NULL);
    while (fx.refilled == 0) {
        turn(true);
        if (mono_ms() > deadline)
            fail_msg("no refill answered within %d ms", ANSWER_TIMEOUT_MS);
    }
    if (ent_clock_offset_ms_in(ns) != RESTORED_MS)
        fail_msg("after the refills the clock is %lld ms ahead, not the restored %lld: a refill read before the "
                 "restore moved it forward again",
                 (long long)ent_clock_offset_ms_in(ns), (long long)RESTORED_MS);

    /* a refill read after it follows the database again (a clock moved forward elsewhere) */
    snprintf(sql, sizeof sql, "UPDATE sbemu_clock SET offset_ms = %lld WHERE namespace_id = %d", (long long)AHEAD_MS,
             (int)ns);
    exec_ok(sql);
    broker_after_refill(fx.b, on_refilled, NULL);
    while (fx.refilled == 1) {
        turn(true);
        if (mono_ms() > deadline)
            fail_msg("the next refill was not answered within %d ms", ANSWER_TIMEOUT_MS);
    }
    assert_int_equal(ent_clock_offset_ms_in(ns), AHEAD_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refill_read_before_a_restore_does_not_move_its_clock_forward),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
