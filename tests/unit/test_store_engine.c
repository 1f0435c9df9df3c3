/* The group-commit store (store.h, store_queue.h) against a real PostgreSQL
 * that the test starts itself (store_fixture.h): group commit, merged
 * statements, the retry of a failed batch, batched completes and lost locks,
 * duplicate detection inside one batch, megabytes in flight, shutdown with
 * work pending, and answers that wait for the WAL flusher (store_flusher.h).
 *
 * The test is its own event loop: poll() on store_socket, POLLOUT only when
 * the store asked for it (want_write), store_flush at the next turn when it
 * asked for that (want_flush). "In one turn" below means: submitted before the
 * loop runs again, so the store must put them in one batch.
 *
 * Every assertion is about outcomes (answers, rows, statement and batch
 * counts), never about how long something took; timeouts only stop a wedged
 * store from hanging CI. Message times come from T0_MS, never the wall clock. */
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
#include "store_figures.h"
#include "store_fixture.h"
#include "store_migrate.h"
#include "store_queue.h"

/* The emulator's clock at the start of every test (2023-11-14). */
#define T0_MS INT64_C(1700000000000)
/* Long enough for a slow, shared CI machine; only a wedged store gets near it. */
#define ANSWER_TIMEOUT_MS 30000
#define MEGABYTES_TIMEOUT_MS 120000
/* How long one poll() may sleep, so that the deadline is checked. */
#define POLL_SLICE_MS 100

/* A commit sends, besides its merged statements, one NOTIFY naming the queues
 * that got messages (DESIGN.md: one per commit, never one per message). */
#define NOTIFY_STATEMENTS_PER_BATCH 1
/* And one that leaves the batch's mark for a batch sent behind it to check
 * (STORE_BATCH_SETTING in store.c). */
#define MARK_STATEMENTS_PER_BATCH 1

#define GROUP_SENDS 200
/* What 200 sends to one queue may cost: one commit (two if one cut happens),
 * each one merged statement, its NOTIFY and its mark. Per message would be 200+. */
#define GROUP_MAX_BATCHES 2
#define GROUP_MAX_STATEMENTS (GROUP_MAX_BATCHES * (1 + NOTIFY_STATEMENTS_PER_BATCH + MARK_STATEMENTS_PER_BATCH))
#define MERGE_QUEUES 3
#define MERGE_SENDS_PER_QUEUE 4
#define SETTLE_COUNT 10
#define ROOMY_SENDS 3
#define MIB 1048576
#define MEGABYTE_SENDS 30
#define SHUTDOWN_SENDS 3
#define SMALL_BODY 32

/* ---- the cluster, the admin connection, the store and its loop ---------- */

static store_fixture pgfx;
static PGconn *db; /* plain connection for setup and checks, outside the store */
static char err[4096];

/* What the store asked of its loop, and the store itself. */
static struct {
    store *s;
    bool want_write;
    bool want_flush;
    int want_write_calls;
    int64_t watch_queue; /* on_messages: notifications naming this queue */
    bool flusher_unread; /* run_until leaves the flusher's socket alone */
    int watch_hits;
} fx;

static void hook_want_write(void *ud)
{
    (void)ud;
    fx.want_write = true;
    fx.want_write_calls++;
}

static void hook_want_flush(void *ud)
{
    (void)ud;
    fx.want_flush = true;
}

static void hook_on_messages(void *ud, const int64_t *queue_ids, size_t n)
{
    (void)ud;
    for (size_t i = 0; i < n; i++)
        fx.watch_hits += queue_ids[i] == fx.watch_queue;
}

static int open_store(void)
{
    const store_hooks hooks = {
        .want_write = hook_want_write,
        .want_flush = hook_want_flush,
        .on_messages = hook_on_messages,
    };
    fx.want_write = fx.want_flush = false;
    fx.s = store_open(pgfx.conninfo, &hooks, err, sizeof err);
    if (!fx.s) {
        fprintf(stderr, "test_store_engine: store_open: %s\n", err);
        return -1;
    }
    return 0;
}

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Serves the store until pred() holds; false when timeout_ms passed first.
 * One turn: store_flush if it was asked for (after the callbacks that asked
 * are over, as the emulator's before-sleep hook does), else one poll(). */
static bool run_until(bool (*pred)(void), long timeout_ms)
{
    long deadline = mono_ms() + timeout_ms;
    for (;;) {
        if (pred())
            return true;
        long left = deadline - mono_ms();
        if (left <= 0)
            return false;
        if (fx.want_flush) {
            fx.want_flush = false;
            store_flush(fx.s);
            continue;
        }
        /* the flusher's socket too: a write is answered once its flush is back */
        struct pollfd p[2] = {{.fd = store_socket(fx.s), .events = POLLIN | (fx.want_write ? POLLOUT : 0)},
                              {.fd = fx.flusher_unread ? -1 : store_flush_socket(fx.s), .events = POLLIN}};
        int r = poll(p, 2, left < POLL_SLICE_MS ? (int)left : POLL_SLICE_MS);
        if (r <= 0)
            continue;
        if (p[0].revents & (POLLIN | POLLERR | POLLHUP))
            store_on_readable(fx.s);
        if (p[0].revents & POLLOUT) {
            fx.want_write = false; /* the store asks again if libpq still holds output */
            store_on_writable(fx.s);
        }
        if (p[1].revents & (POLLIN | POLLERR | POLLHUP))
            store_on_flush_readable(fx.s);
    }
}

/* ---- answers ------------------------------------------------------------ */

/* One callback a test waits for: how often it ran and with what. */
typedef struct answer {
    int calls;
    sb_status st;
} answer;

static int outstanding; /* callbacks submitted and not yet run */

static void on_status(void *ctx, sb_status st)
{
    answer *a = ctx;
    a->calls++;
    a->st = st;
    outstanding--;
}

static bool all_answered(void) { return outstanding == 0 && store_idle(fx.s); }

static void wait_answers(long timeout_ms)
{
    if (!run_until(all_answered, timeout_ms))
        fail_msg("%d store callbacks still outstanding after %ld ms (store idle: %d, healthy: %d)", outstanding,
                 timeout_ms, store_idle(fx.s), store_healthy(fx.s));
}

static void assert_answered_once(const answer *a, int n, sb_status want)
{
    for (int i = 0; i < n; i++) {
        if (a[i].calls != 1)
            fail_msg("answer %d: callback ran %d times", i, a[i].calls);
        if (a[i].st != want)
            fail_msg("answer %d: status %d, expected %d", i, (int)a[i].st, (int)want);
    }
}

/* One message, sent now (T0_MS) without TTL or schedule. */
static void send_one(int64_t queue, const char *message_id, const void *bytes, size_t len, answer *a)
{
    const store_new_message m = {
        .bytes = bytes,
        .len = len,
        .message_id = message_id,
        .now_ms = T0_MS,
        .available_ms = T0_MS,
        .ttl_ms = -1,
    };
    outstanding++;
    store_send(fx.s, queue, &m, 1, on_status, a);
}

#define CLAIM_MAX 32
typedef struct claim_answer {
    int calls;
    sb_status st;
    size_t n;
    uint8_t tokens[CLAIM_MAX][16];
    int64_t seq[CLAIM_MAX];
} claim_answer;

static void on_claim(void *ctx, sb_status st, const store_claimed *msgs, size_t n)
{
    claim_answer *c = ctx;
    c->calls++;
    c->st = st;
    c->n = n;
    for (size_t i = 0; i < n && i < CLAIM_MAX; i++) {
        memcpy(c->tokens[i], msgs[i].lock_token, 16);
        c->seq[i] = msgs[i].sequence_number;
    }
    outstanding--;
}

static void claim_locked(int64_t queue, int max, int64_t now_ms, int64_t locked_until_ms, claim_answer *c)
{
    outstanding++;
    store_claim(fx.s, queue, 0, false, STORE_CLAIM_LOCK, max, now_ms, locked_until_ms, false, 0, NULL, on_claim, c);
}

static void complete(int64_t queue, const uint8_t token[16], int64_t now_ms, answer *a)
{
    outstanding++;
    store_settle(fx.s, queue, token, STORE_SETTLE_COMPLETE, NULL, NULL, 0, now_ms, on_status, a);
}

static store_stats stats_since(store_stats before)
{
    store_stats now = store_get_stats(fx.s);
    return (store_stats){now.batches - before.batches, now.statements - before.statements, now.ops - before.ops,
                         now.retried - before.retried};
}

/* ---- plain SQL ---------------------------------------------------------- */

static char value_buf[16384];

/* The single value of a query, as text ("<null>" for NULL). */
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

/* A queue made the way a user would, with plain SQL. cols/vals: extra
 * columns and their values, each starting with ", " (or ""). */
static int64_t create_queue(const char *name, const char *cols, const char *vals)
{
    return strtoll(q1("INSERT INTO queues (name%s) VALUES ('%s'%s) RETURNING id", cols, name, vals), NULL, 10);
}

/* "first-last/count" of a queue's sequence numbers. */
static const char *seq_range(int64_t queue)
{
    return q1("SELECT coalesce(min(sequence_number), 0) || '-' || coalesce(max(sequence_number), 0) || '/' ||"
              " count(*) FROM messages WHERE entity_id = %lld",
              (long long)queue);
}

/* The queue's MessageIds in sequence order, comma-separated. */
static const char *ids_in_order(int64_t queue)
{
    return q1("SELECT coalesce(string_agg(message_id, ',' ORDER BY sequence_number), '') FROM messages"
              " WHERE entity_id = %lld",
              (long long)queue);
}

static long long size_in_bytes(int64_t queue)
{
    return strtoll(q1("SELECT size_in_bytes FROM entity_runtime WHERE entity_id = %lld", (long long)queue), NULL,
                   10);
}

/* ---- fixtures ----------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    emu_log_init(ENT_LOG_WARN); /* the store's warnings explain a failure */
    if (store_fixture_start(&pgfx, "store-engine", err, sizeof err)) {
        /* Never a skip: a store test that does not run tests nothing. */
        fprintf(stderr, "test_store_engine: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    db = PQconnectdb(pgfx.conninfo);
    if (PQstatus(db) != CONNECTION_OK) {
        fprintf(stderr, "test_store_engine: connect %s: %s\n", pgfx.conninfo, PQerrorMessage(db));
        return -1;
    }
    if (store_migrate(db, err, sizeof err)) {
        fprintf(stderr, "test_store_engine: migrations: %s\n", err);
        return -1;
    }
    return open_store();
}

static int group_teardown(void **state)
{
    (void)state;
    if (fx.s)
        store_close(fx.s);
    fx.s = NULL;
    PQfinish(db);
    db = NULL;
    store_fixture_stop(&pgfx);
    return 0;
}

/* Each test starts with an idle store and nothing outstanding. A test that
 * failed half-way may have left ops whose callbacks point into its (gone)
 * stack frame: that store is abandoned, never served nor closed (closing runs
 * the callbacks), and a fresh one takes its place. */
static int setup(void **state)
{
    (void)state;
    if (fx.s && (outstanding || !store_idle(fx.s))) {
        fprintf(stderr, "test_store_engine: abandoning a store with work left by a failed test\n");
        fx.s = NULL;
    }
    if (!fx.s && open_store())
        return -1;
    outstanding = 0;
    fx.watch_queue = 0;
    fx.watch_hits = 0;
    fx.want_write_calls = 0;
    return 0;
}

static bool watched_queue_notified(void) { return fx.watch_hits > 0; }

/* ---- 1. group commit ---------------------------------------------------- */

/* 200 sends in one turn are one commit, one merged statement, and each send
 * is acknowledged only with the sequence number of its submit position. */
static void test_group_commit(void **state)
{
    (void)state;
    int64_t q = create_queue("group-commit", "", "");
    fx.watch_queue = q;
    static answer a[GROUP_SENDS];
    memset(a, 0, sizeof a);
    char ids[GROUP_SENDS][16], expected[GROUP_SENDS * 16] = "";
    size_t len = 0;
    store_stats before = store_get_stats(fx.s);
    for (int i = 0; i < GROUP_SENDS; i++) {
        snprintf(ids[i], sizeof ids[i], "gc-%03d", i);
        len += (size_t)snprintf(expected + len, sizeof expected - len, "%s%s", i ? "," : "", ids[i]);
        send_one(q, ids[i], ids[i], strlen(ids[i]), &a[i]);
    }
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(a, GROUP_SENDS, SB_OK);

    char want[64];
    snprintf(want, sizeof want, "1-%d/%d", GROUP_SENDS, GROUP_SENDS);
    assert_string_equal(seq_range(q), want);
    assert_string_equal(ids_in_order(q), expected);

    store_stats d = stats_since(before);
    print_message("group commit: %d sends -> %llu batches, %llu statements\n", GROUP_SENDS,
                  (unsigned long long)d.batches, (unsigned long long)d.statements);
    assert_true(d.batches <= GROUP_MAX_BATCHES);
    assert_true(d.statements <= GROUP_MAX_STATEMENTS);
    assert_int_equal(d.ops, GROUP_SENDS);
    assert_int_equal(d.retried, 0);

    /* The commit woke this queue's receivers through its NOTIFY. */
    assert_true(run_until(watched_queue_notified, ANSWER_TIMEOUT_MS));
}

/* ---- 2. merging across entities ----------------------------------------- */

/* Sends to several queues in one commit: one statement per queue, and each
 * queue numbers its own messages from 1. */
static void test_merge_across_entities(void **state)
{
    (void)state;
    static const char *const names[MERGE_QUEUES] = {"merge-a", "merge-b", "merge-c"};
    int64_t q[MERGE_QUEUES];
    for (int k = 0; k < MERGE_QUEUES; k++)
        q[k] = create_queue(names[k], "", "");
    answer a[MERGE_QUEUES * MERGE_SENDS_PER_QUEUE] = {0};
    char ids[MERGE_QUEUES * MERGE_SENDS_PER_QUEUE][16];
    store_stats before = store_get_stats(fx.s);
    /* interleaved, so merging has to gather each queue's rows */
    for (int i = 0; i < MERGE_QUEUES * MERGE_SENDS_PER_QUEUE; i++) {
        snprintf(ids[i], sizeof ids[i], "%c%d", 'a' + i % MERGE_QUEUES, i / MERGE_QUEUES);
        send_one(q[i % MERGE_QUEUES], ids[i], ids[i], strlen(ids[i]), &a[i]);
    }
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(a, MERGE_QUEUES * MERGE_SENDS_PER_QUEUE, SB_OK);

    for (int k = 0; k < MERGE_QUEUES; k++) {
        char want[64], order[64] = "";
        snprintf(want, sizeof want, "1-%d/%d", MERGE_SENDS_PER_QUEUE, MERGE_SENDS_PER_QUEUE);
        assert_string_equal(seq_range(q[k]), want);
        size_t len = 0;
        for (int j = 0; j < MERGE_SENDS_PER_QUEUE; j++)
            len += (size_t)snprintf(order + len, sizeof order - len, "%s%c%d", j ? "," : "", 'a' + k, j);
        assert_string_equal(ids_in_order(q[k]), order);
    }

    store_stats d = stats_since(before);
    print_message("merge: %d queues -> %llu batches, %llu statements\n", MERGE_QUEUES,
                  (unsigned long long)d.batches, (unsigned long long)d.statements);
    assert_int_equal(d.batches, 1);
    assert_true(d.statements <= MERGE_QUEUES + NOTIFY_STATEMENTS_PER_BATCH + MARK_STATEMENTS_PER_BATCH);
    assert_int_equal(d.retried, 0);
}

/* ---- 3. retry of a failed batch ----------------------------------------- */

/* A send that overflows MaxSizeInMegabytes fails the commit it is in; the
 * store retries each op alone, so only that send is refused. */
static void test_retry_failed_batch(void **state)
{
    (void)state;
    int64_t small = create_queue("small", ", max_size_in_megabytes", ", 1");
    int64_t roomy = create_queue("roomy", "", "");
    /* 1000 KiB held; 64 KiB more would pass 1 MiB, 10 KiB would not */
    const size_t held = 1000 * 1024, overflow = 64 * 1024, fits = 10 * 1024;
    uint8_t *body = calloc(1, held);
    assert_non_null(body);

    answer fill = {0};
    send_one(small, "fill", body, held, &fill);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&fill, 1, SB_OK);
    assert_int_equal(size_in_bytes(small), (long long)held);

    answer over = {0}, fit = {0}, others[ROOMY_SENDS] = {{0}};
    char ids[ROOMY_SENDS][16];
    store_stats before = store_get_stats(fx.s);
    send_one(small, "over", body, overflow, &over);
    send_one(small, "fit", body, fits, &fit);
    for (int i = 0; i < ROOMY_SENDS; i++) {
        snprintf(ids[i], sizeof ids[i], "r%d", i);
        send_one(roomy, ids[i], ids[i], strlen(ids[i]), &others[i]);
    }
    wait_answers(ANSWER_TIMEOUT_MS);
    free(body);

    assert_answered_once(&over, 1, SB_ERR_QUOTA_EXCEEDED);
    /* alone, after the refused one, it still fits */
    assert_answered_once(&fit, 1, SB_OK);
    assert_answered_once(others, ROOMY_SENDS, SB_OK);
    store_stats d = stats_since(before);
    print_message("retry: %llu batches, %llu statements, %llu ops retried\n", (unsigned long long)d.batches,
                  (unsigned long long)d.statements, (unsigned long long)d.retried);
    assert_true(d.retried > 0);

    assert_string_equal(ids_in_order(small), "fill,fit");
    assert_int_equal(size_in_bytes(small), (long long)(held + fits));
    assert_string_equal(seq_range(roomy), "1-3/3");
    assert_string_equal(ids_in_order(roomy), "r0,r1,r2");
}

/* ---- 4. completes ------------------------------------------------------- */

/* The completes of a commit are one DELETE; a token that matches nothing
 * (unknown, or its lock lapsed by the clock the caller passes) is lock-lost. */
static void test_completes(void **state)
{
    (void)state;
    int64_t q = create_queue("settle", "", "");
    answer sent[SETTLE_COUNT] = {{0}};
    char ids[SETTLE_COUNT][16];
    for (int i = 0; i < SETTLE_COUNT; i++) {
        snprintf(ids[i], sizeof ids[i], "s%d", i);
        send_one(q, ids[i], ids[i], strlen(ids[i]), &sent[i]);
    }
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(sent, SETTLE_COUNT, SB_OK);

    static claim_answer c;
    memset(&c, 0, sizeof c);
    claim_locked(q, SETTLE_COUNT, T0_MS, T0_MS + 60000, &c);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.st, SB_OK);
    assert_int_equal(c.n, SETTLE_COUNT);
    for (int i = 0; i < SETTLE_COUNT; i++)
        assert_int_equal(c.seq[i], i + 1);

    answer done[SETTLE_COUNT] = {{0}}, bogus = {0};
    static const uint8_t unknown[16] = {0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0x4b, 0xab,
                                        0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab};
    store_stats before = store_get_stats(fx.s);
    for (int i = 0; i < SETTLE_COUNT; i++)
        complete(q, c.tokens[i], T0_MS + 1000, &done[i]);
    complete(q, unknown, T0_MS + 1000, &bogus);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(done, SETTLE_COUNT, SB_OK);
    assert_answered_once(&bogus, 1, SB_ERR_LOCK_LOST);
    assert_string_equal(seq_range(q), "0-0/0");
    assert_int_equal(size_in_bytes(q), 0);
    store_stats d = stats_since(before);
    print_message("completes: %d + 1 -> %llu batches, %llu statements\n", SETTLE_COUNT,
                  (unsigned long long)d.batches, (unsigned long long)d.statements);
    assert_int_equal(d.batches, 1);
    assert_int_equal(d.statements, 1 + MARK_STATEMENTS_PER_BATCH);
    assert_int_equal(d.ops, SETTLE_COUNT + 1);

    /* A lock that lapsed (by the caller's clock) cannot complete. */
    int64_t lq = create_queue("lapse", "", "");
    answer one = {0};
    send_one(lq, "l0", "l0", 2, &one);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&one, 1, SB_OK);
    memset(&c, 0, sizeof c);
    claim_locked(lq, 1, T0_MS, T0_MS + 1, &c);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_int_equal(c.st, SB_OK);
    assert_int_equal(c.n, 1);
    answer late = {0};
    complete(lq, c.tokens[0], T0_MS + 10, &late);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&late, 1, SB_ERR_LOCK_LOST);
    assert_string_equal(seq_range(lq), "1-1/1"); /* still there, for the next receiver */
}

/* ---- 5. duplicate detection inside one batch ----------------------------- */

/* The same MessageId three times in one commit is stored once (the first),
 * and every send is acknowledged, as Service Bus does for duplicates. */
static void test_duplicates_in_one_batch(void **state)
{
    (void)state;
    int64_t q = create_queue("dedup", ", requires_duplicate_detection", ", true");
    static const char *const bodies[] = {"first", "second", "third"};
    answer a[4] = {{0}};
    for (int i = 0; i < 3; i++)
        send_one(q, "same-id", bodies[i], strlen(bodies[i]), &a[i]);
    send_one(q, "other-id", "other", 5, &a[3]);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(a, 4, SB_OK);

    assert_string_equal(seq_range(q), "1-2/2");
    assert_string_equal(ids_in_order(q), "same-id,other-id");
    assert_string_equal(q1("SELECT convert_from(message, 'UTF8') FROM messages WHERE entity_id = %lld"
                           " AND message_id = 'same-id'",
                           (long long)q),
                        "first");
    assert_int_equal(size_in_bytes(q), (long long)(strlen("first") + strlen("other")));

    /* and in a later commit, inside the window, it is still a duplicate */
    answer again = {0};
    send_one(q, "same-id", "fourth", 6, &again);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&again, 1, SB_OK);
    assert_string_equal(seq_range(q), "1-2/2");
}

/* ---- 6. megabytes in flight --------------------------------------------- */

static uint64_t batches_mark;
static bool a_batch_went_out(void) { return store_get_stats(fx.s).batches > batches_mark; }

/* 30 MiB in one commit cannot be written at once: the store must finish it on
 * the socket's write-readiness (the regression: it used to wedge here), and
 * 30 more MiB submitted meanwhile go out as the next commit. */
/* A message larger than a socket buffer and than a batch's byte bound goes
 * alone, and libpq must finish writing it on write-readiness (the wedge). */
static void test_one_message_larger_than_a_batch(void **state)
{
    (void)state;
    int64_t q = create_queue("eightmib", "", "");
    size_t len = 8 * MIB;
    uint8_t *body = malloc(len);
    assert_non_null(body);
    for (size_t i = 0; i < len; i++)
        body[i] = (uint8_t)(i * 13 + (i >> 12));
    static answer a[4];
    memset(a, 0, sizeof a);
    const char *ids[4] = {"big-0", "big-1", "big-2", "big-3"};
    int writes_before = fx.want_write_calls;
    for (int i = 0; i < 4; i++)
        send_one(q, ids[i], body, len, &a[i]);
    wait_answers(MEGABYTES_TIMEOUT_MS);
    free(body);
    assert_answered_once(a, 4, SB_OK);
    assert_string_equal(seq_range(q), "1-4/4");
    assert_int_equal(size_in_bytes(q), 4LL * (long long)len);
    /* 8 MiB do not fit in a socket buffer: were this 0, the test would no
     * longer exercise the partial write it exists for */
    assert_true(fx.want_write_calls > writes_before);
}

static void test_megabytes_in_flight(void **state)
{
    (void)state;
    int64_t q = create_queue("megabytes", "", "");
    uint8_t *body = malloc(MIB);
    assert_non_null(body);
    for (size_t i = 0; i < MIB; i++)
        body[i] = (uint8_t)(i * 7 + (i >> 10));
    static answer a[2 * MEGABYTE_SENDS];
    memset(a, 0, sizeof a);
    char ids[2 * MEGABYTE_SENDS][16];
    for (int i = 0; i < 2 * MEGABYTE_SENDS; i++)
        snprintf(ids[i], sizeof ids[i], "mb-%02d", i);

    store_stats before = store_get_stats(fx.s);
    for (int i = 0; i < MEGABYTE_SENDS; i++)
        send_one(q, ids[i], body, MIB, &a[i]);
    batches_mark = before.batches;
    assert_true(run_until(a_batch_went_out, ANSWER_TIMEOUT_MS));
    assert_false(store_idle(fx.s)); /* the first 30 MiB are in flight */
    for (int i = MEGABYTE_SENDS; i < 2 * MEGABYTE_SENDS; i++)
        send_one(q, ids[i], body, MIB, &a[i]);
    wait_answers(MEGABYTES_TIMEOUT_MS);
    free(body);

    assert_answered_once(a, 2 * MEGABYTE_SENDS, SB_OK);
    char want[64];
    snprintf(want, sizeof want, "1-%d/%d", 2 * MEGABYTE_SENDS, 2 * MEGABYTE_SENDS);
    assert_string_equal(seq_range(q), want);
    assert_int_equal(size_in_bytes(q), 2LL * MEGABYTE_SENDS * MIB);
    assert_string_equal(q1("SELECT count(*) = %d FROM messages WHERE entity_id = %lld AND octet_length(message) = %d",
                           2 * MEGABYTE_SENDS, (long long)q, MIB),
                        "t");
    store_stats d = stats_since(before);
    print_message("megabytes: %llu batches, %llu statements, want_write %d times\n", (unsigned long long)d.batches,
                  (unsigned long long)d.statements, fx.want_write_calls);
    /* a batch carries at most STORE_BATCH_MAX_BYTES (2 MiB): one 1 MiB send
     * and its overhead each, never all 60 in one */
    assert_true(d.batches >= 2 * MEGABYTE_SENDS / 2);
}

/* ---- 6b. a full batch behind one in flight ------------------------------ */

/* Three full batches' worth of sends in one turn: the first two go out at
 * once (the second behind the first), the third when one is over; every send
 * keeps its place in the queue's order. */
#define PIPELINED_SENDS (3 * STORE_BATCH_MAX_OPS)
#define PIPELINE_DEPTH 2 /* store.c's STORE_INFLIGHT_MAX */

/* '0' when the queue's messages, in sequence order, are prefix0, prefix1, ... */
static const char *out_of_order(int64_t queue, const char *prefix)
{
    return q1("SELECT count(*) FROM (SELECT message_id, row_number() OVER (ORDER BY sequence_number) - 1 AS k"
              " FROM messages WHERE entity_id = %lld) x WHERE message_id <> '%s' || k",
              (long long)queue, prefix);
}

static void send_numbered(int64_t queue, const char *prefix, int from, int n, answer *a)
{
    for (int i = from; i < from + n; i++) {
        char id[32];
        snprintf(id, sizeof id, "%s%d", prefix, i);
        send_one(queue, id, id, strlen(id), &a[i - from]);
    }
}

static void test_full_batch_goes_out_behind_one_in_flight(void **state)
{
    (void)state;
    int64_t q = create_queue("pipelined", "", "");
    static answer a[PIPELINED_SENDS];
    memset(a, 0, sizeof a);
    store_stats before = store_get_stats(fx.s);
    send_numbered(q, "p", 0, PIPELINED_SENDS, a);
    fx.want_flush = false;
    store_flush(fx.s);
    store_figures f;
    store_get_figures(fx.s, &f);
    print_message("pipeline: %zu ops in flight, %zu pending after one flush\n", f.inflight_ops, f.pending_ops);
    assert_int_equal(f.inflight_ops, PIPELINE_DEPTH * STORE_BATCH_MAX_OPS);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(a, PIPELINED_SENDS, SB_OK);
    assert_string_equal(out_of_order(q, "p"), "0");
    store_stats d = stats_since(before);
    assert_int_equal(d.batches, 3);
    assert_int_equal(d.retried, 0);
}

/* The first full batch fails (one send overflows its queue): the batch sent
 * behind it must not commit before the first one's ops are retried, or a
 * sender's later messages would come before its earlier ones. It fails its
 * guard and goes again after them, as a batch. */
static void test_batch_behind_a_failed_one_waits_for_its_retries(void **state)
{
    (void)state;
    int64_t small = create_queue("small-behind", ", max_size_in_megabytes", ", 1");
    int64_t q = create_queue("behind", "", "");
    const size_t held = 1000 * 1024, overflow = 64 * 1024;
    uint8_t *body = calloc(1, held);
    assert_non_null(body);
    answer fill = {0}, over = {0};
    send_one(small, "fill", body, held, &fill);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&fill, 1, SB_OK);

    static answer a[2 * STORE_BATCH_MAX_OPS];
    memset(a, 0, sizeof a);
    store_stats before = store_get_stats(fx.s);
    send_one(small, "over", body, overflow, &over); /* first batch: this and 511 sends */
    send_numbered(q, "b", 0, 2 * STORE_BATCH_MAX_OPS - 1, a);
    fx.want_flush = false;
    store_flush(fx.s);
    store_figures f;
    store_get_figures(fx.s, &f);
    assert_int_equal(f.inflight_ops, PIPELINE_DEPTH * STORE_BATCH_MAX_OPS); /* both went out at once */
    wait_answers(ANSWER_TIMEOUT_MS);
    free(body);

    assert_answered_once(&over, 1, SB_ERR_QUOTA_EXCEEDED);
    assert_answered_once(a, 2 * STORE_BATCH_MAX_OPS - 1, SB_OK);
    assert_string_equal(out_of_order(q, "b"), "0");
    store_stats d = stats_since(before);
    print_message("behind a failed batch: %llu batches, %llu ops retried\n", (unsigned long long)d.batches,
                  (unsigned long long)d.retried);
    /* the first batch's 512 alone, then the second's 512 together */
    assert_int_equal(d.retried, 2 * STORE_BATCH_MAX_OPS);
    assert_int_equal(d.batches, 2 + STORE_BATCH_MAX_OPS + 1);
}

/* ---- 7. shutdown with work pending -------------------------------------- */

/* A callback that submits again from inside itself, as a sweep that asks for
 * the next one does. */
typedef struct resubmitter {
    answer outer, inner;
    int inner_calls_on_return; /* inner.calls when the nested submit returned */
    int64_t queue;
} resubmitter;

static void resubmit_cb(void *ctx, sb_status st)
{
    resubmitter *r = ctx;
    on_status(&r->outer, st);
    send_one(r->queue, "nested", "nested", 6, &r->inner);
    r->inner_calls_on_return = r->inner.calls;
}

static void send_resubmitter(resubmitter *r)
{
    const store_new_message m = {
        .bytes = (const uint8_t *)"outer", .len = 5, .message_id = "outer",
        .now_ms = T0_MS, .available_ms = T0_MS, .ttl_ms = -1,
    };
    outstanding++;
    store_send(fx.s, r->queue, &m, 1, resubmit_cb, r);
}

static void assert_closed_answer(const answer *a, const char *what)
{
    if (a->calls != 1)
        fail_msg("%s: callback ran %d times", what, a->calls);
    if (a->st != SB_ERR_INTERNAL && a->st != SB_OK)
        fail_msg("%s: status %d, expected SB_ERR_INTERNAL (or SB_OK)", what, (int)a->st);
}

static void close_store(void)
{
    store *s = fx.s; /* callbacks run inside store_close still submit to it */
    store_close(s);
    fx.s = NULL;
}

static void check_resubmitter(const resubmitter *r)
{
    assert_closed_answer(&r->outer, "outer");
    /* failed at once, inside the nested submit: nothing waits for a dead store */
    assert_int_equal(r->inner_calls_on_return, 1);
    assert_int_equal(r->inner.calls, 1);
    assert_int_equal(r->inner.st, SB_ERR_INTERNAL);
}

static void test_shutdown_with_work_pending(void **state)
{
    (void)state;
    int64_t q = create_queue("shutdown", "", "");

    /* Nothing served: everything is still pending at close. */
    answer pend[SHUTDOWN_SENDS] = {{0}};
    resubmitter r = {.queue = q};
    claim_answer c = {0};
    for (int i = 0; i < SHUTDOWN_SENDS; i++)
        send_one(q, "p", "p", 1, &pend[i]);
    send_resubmitter(&r);
    claim_locked(q, 1, T0_MS, T0_MS + 60000, &c);
    close_store();
    for (int i = 0; i < SHUTDOWN_SENDS; i++)
        assert_answered_once(&pend[i], 1, SB_ERR_INTERNAL);
    check_resubmitter(&r);
    assert_int_equal(r.outer.st, SB_ERR_INTERNAL);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.st, SB_ERR_INTERNAL);
    assert_int_equal(outstanding, 0);
    assert_string_equal(seq_range(q), "0-0/0"); /* none of it was ever sent */

    /* One batch in flight (written, not yet answered) and more pending. */
    assert_int_equal(open_store(), 0);
    answer flying[SHUTDOWN_SENDS] = {{0}}, waiting[SHUTDOWN_SENDS] = {{0}};
    resubmitter r2 = {.queue = q}, r3 = {.queue = q};
    for (int i = 0; i < SHUTDOWN_SENDS; i++)
        send_one(q, "f", "f", 1, &flying[i]);
    send_resubmitter(&r2);
    batches_mark = store_get_stats(fx.s).batches;
    assert_true(run_until(a_batch_went_out, ANSWER_TIMEOUT_MS));
    for (int i = 0; i < SHUTDOWN_SENDS; i++)
        send_one(q, "w", "w", 1, &waiting[i]);
    send_resubmitter(&r3);
    close_store();
    for (int i = 0; i < SHUTDOWN_SENDS; i++) {
        assert_closed_answer(&flying[i], "in flight");
        assert_closed_answer(&waiting[i], "pending");
    }
    check_resubmitter(&r2);
    check_resubmitter(&r3);
    assert_int_equal(outstanding, 0);

    /* A fresh store works (later tests, and the group teardown, use it). */
    assert_int_equal(open_store(), 0);
    answer after = {0};
    send_one(q, "after", "after", 5, &after);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&after, 1, SB_OK);
}

/* ---- 11. answers wait for the disk -------------------------------------- */

static int64_t flushed_queue;
static bool flushed_row_committed(void) { return !strcmp(seq_range(flushed_queue), "1-1/1"); }
static answer flushed_small;
static bool small_answered(void) { return flushed_small.calls > 0; }
static bool never(void) { return false; }
/* How long the store is served, its flusher unread, after its commit is visible. */
#define UNFLUSHED_SERVE_MS 300

/* A large send's commit is visible at once, but its answer waits for a
 * flush: the flusher's, or the next small batch's own commit, which flushes
 * everything before it. A flusher lost fails what waits for it with
 * server-busy (its fate unknown, as a commit cut off), and the store says it
 * is unhealthy. */
static void test_answered_once_on_disk(void **state)
{
    (void)state;
    flushed_queue = create_queue("flushed", "", "");
    char *big = calloc(1, STORE_FLUSHER_MIN_BYTES);
    assert_non_null(big);
    answer a = {0};
    fx.flusher_unread = true;
    send_one(flushed_queue, "on-disk", big, STORE_FLUSHER_MIN_BYTES, &a);
    bool committed = run_until(flushed_row_committed, ANSWER_TIMEOUT_MS);
    run_until(never, UNFLUSHED_SERVE_MS); /* the store reads its commit's answer meanwhile */
    assert_true(committed);
    assert_int_equal(a.calls, 0);
    /* a small send commits waiting for the disk: both are answered, the large one first */
    memset(&flushed_small, 0, sizeof flushed_small);
    send_one(flushed_queue, "small", "s", 1, &flushed_small);
    assert_true(run_until(small_answered, ANSWER_TIMEOUT_MS));
    fx.flusher_unread = false;
    assert_answered_once(&a, 1, SB_OK);
    assert_answered_once(&flushed_small, 1, SB_OK);
    /* and with the flusher read, a large send alone is answered by its flush */
    answer b = {0};
    send_one(flushed_queue, "flushed", big, STORE_FLUSHER_MIN_BYTES, &b);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&b, 1, SB_OK);

    /* the flusher's backend goes away: the next write is not known to be on disk */
    assert_string_equal(q1("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                           " WHERE application_name = 'sbemu flusher'"),
                        "1");
    answer lost = {0};
    send_one(flushed_queue, "lost", big, STORE_FLUSHER_MIN_BYTES, &lost);
    free(big);
    wait_answers(ANSWER_TIMEOUT_MS);
    assert_answered_once(&lost, 1, SB_ERR_SERVER_BUSY);
    assert_false(store_healthy(fx.s));
    close_store();
    assert_int_equal(open_store(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_group_commit, setup),
        cmocka_unit_test_setup(test_merge_across_entities, setup),
        cmocka_unit_test_setup(test_retry_failed_batch, setup),
        cmocka_unit_test_setup(test_completes, setup),
        cmocka_unit_test_setup(test_duplicates_in_one_batch, setup),
        cmocka_unit_test_setup(test_megabytes_in_flight, setup),
        cmocka_unit_test_setup(test_one_message_larger_than_a_batch, setup),
        cmocka_unit_test_setup(test_full_batch_goes_out_behind_one_in_flight, setup),
        cmocka_unit_test_setup(test_batch_behind_a_failed_one_waits_for_its_retries, setup),
        cmocka_unit_test_setup(test_shutdown_with_work_pending, setup),
        cmocka_unit_test_setup(test_answered_once_on_disk, setup),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
