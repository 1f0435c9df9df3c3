/* The group-commit engine behind store.h. */
#include "store.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ent_alloc.h"
#include "ent_log.h"
#include "store_figures.h"
#include "store_flusher.h"
#include "store_log.h"
#include "store_setup.h"
#include "store_statements.h"

/* Parameter bytes per transaction (an op larger than this goes alone). libpq
 * and the merged arrays hold a batch's bytes once more each while it is sent:
 * this bounds that memory, and costs nothing for small messages (512 ops of
 * 1 KiB stay under it). */
#define STORE_BATCH_MAX_BYTES (2u * 1024 * 1024)
/* Queue ids one notification carries; beyond this, receivers poll. */
#define STORE_NOTIFY_MAX_ENTITIES 64

typedef struct store_stmt {
    const char *prepared;
    int nparams;
    char *block; /* one allocation holding every parameter value */
    const char *values[STORE_MAX_PARAMS];
    int lengths[STORE_MAX_PARAMS];
    int formats[STORE_MAX_PARAMS];
} store_stmt;

/* The rows a merged op contributes, row after row in one buffer, each value
 * already in the binary array element format (a 4-byte big-endian length, -1
 * for NULL, then the bytes). One allocation per op, whatever its columns:
 * thousands of ops can wait for a commit. */
typedef struct merge_rows {
    const store_merge_def *def; /* the story twin of the one asked for, while the story is recorded */
    void (*row)(store_op *op, int index, const void *pgresult, int result_row); /* the asked def's */
    int64_t key;
    int nrows, filled;
    int first;       /* while in flight: ordinal of its first row in its group, 0-based */
    int answered;
    char *data;
    size_t len, cap;
    size_t col_bytes[STORE_MERGE_MAX_COLS]; /* what column c adds to its array */
    bool has_null[STORE_MERGE_MAX_COLS];
} merge_rows;

/* One logical operation: its statements run in one transaction, in order. */
struct store_op {
    store_op *next;
    store *store;      /* set at submit */
    merge_rows *merge; /* NULL, or the op's rows of a merged statement */
    int nstmt;
    size_t bytes;     /* parameter bytes it carries (batch sizing, store_pending_bytes) */
    bool solo;        /* retried alone after its batch failed */
    bool lazy;        /* store_op_set_lazy */
    int64_t ticket;   /* committed: the flush it waits for (store_flusher.h) */
    sb_status status; /* SB_OK unless parse decided otherwise */
    int64_t notify_entity; /* 0, or an entity this op adds messages to */
    int64_t catch_up;      /* 0, or a subscription caught up with its topic's log first */
    store_parse_fn parse;
    store_done_fn done;
    void *ctx;
    void *result;
    void (*free_result)(void *);
    store_stmt stmts[];
};

/* Transactions in flight at once. A second goes out behind the first as
 * soon as anything is pending: PostgreSQL then starts it the moment the
 * first commits, instead of idling while the emulator reads the first one's
 * answers and sends the next. What comes while two are in flight waits and
 * grows into the next batch, as group commit wants. (Until 2026-11-28 a
 * second went out only when a full batch was pending, STORE_BATCH_MAX_OPS or
 * _BYTES: the store's backend then idled between batches whenever the load
 * was below that. Letting it go at once, in A/B pairs of fresh emulators:
 * 1 KiB peek-lock on one connection 52-67k -> 64-74k msg/s, on ten
 * 46-57k -> 50-60k; one session's receive 59-62k -> 65-76k.) */
#define STORE_INFLIGHT_MAX 2

/* What each pipelined query of an in-flight batch belongs to: one op's
 * statement, a merged group (ops in ordinal order), or the batch's guard. */
typedef struct store_slot {
    store_op *op;
    int stmt;
    store_op **group;
    int ngroup;
    bool guard;
    bool mark; /* STMT_BATCH_MARK or _LAZY: its last column says whether the batch wrote */
} store_slot;

/* One transaction in flight: its ops, what each of its queries answers for,
 * and how it went. Owned by its store; the arrays are kept between uses. */
typedef struct store_batch {
    store_op *ops;      /* the ops it carries, in order */
    store_slot *slots;  /* query k of the batch */
    int nslots, slot_cap, next_slot;
    store_op **merged;  /* its merged ops, grouped; slots point into it */
    int merged_cap;
    uint64_t id;        /* what it leaves in STORE_BATCH_SETTING when it commits */
    bool failed;
    bool guard_failed;  /* it went out behind a batch that failed (its guard said so) */
    struct timespec sent; /* when its Sync went out */
    bool durable;         /* an op of it is not lazy: answered once its commit is on disk */
    bool by_flusher;      /* durable, committed lazily: the flusher makes it so */
    bool wrote;           /* it took a transaction id (its mark says; true when unknown) */
    size_t size;          /* its operations, a merged op's rows each */
} store_batch;

/* Owned by the emulator; owns the connection (NULL while lost) and every queued op. */
struct store {
    PGconn *conn;
    store_flusher *flusher; /* NULL: every durable commit waits for its own fsync */
    store_op *committed, *committed_tail; /* committed, waiting for their flush, in commit order */
    store_hooks hooks;
    bool broken;
    bool closing; /* store_close is failing what is left: take nothing new */
    bool flushing; /* inside store_flush */
    store_op *pending, *pending_tail;
    store_batch batches[STORE_INFLIGHT_MAX]; /* a ring: the oldest in flight at head */
    int head, inflight;  /* inflight: how many batches are in flight */
    uint64_t next_batch_id;
    store_op *requeued_tail; /* the last op a failed batch put back, while the one behind it is in flight */
    size_t held_bytes;  /* bytes of every op pending or in flight */
    char last_error[STORE_LAST_ERROR_MAX];
    bool result_taken;  /* the parse callback kept the result it was given */
    store_stats stats;
    /* GET /metrics (store_figures.h): counted per commit */
    store_figures figures;
};

static store_batch *oldest(store *s) { return &s->batches[s->head]; }

/* Each statement's story twin while the story is recorded, NULL while it is
 * not: set by the story (store_story_configure), so that the engine, below
 * it, names no story. */
static const char *(*statement_twin)(const char *prepared);

void store_set_statement_twin(const char *(*twin)(const char *prepared)) { statement_twin = twin; }

store_op *store_op_new(int nstmt, store_parse_fn parse, store_done_fn done, void *ctx)
{
    store_op *op = ent_calloc(1, sizeof *op + (size_t)nstmt * sizeof(store_stmt));
    if (!op)
        return NULL;
    op->nstmt = nstmt;
    op->parse = parse;
    op->done = done;
    op->ctx = ctx;
    return op;
}

int store_op_stmt(store_op *op, int i, const char *prepared, const store_param *params, int nparams)
{
    store_stmt *st = &op->stmts[i];
    if (nparams > STORE_MAX_PARAMS)
        return -1;
    size_t total = 0;
    for (int k = 0; k < nparams; k++)
        total += params[k].value ? (size_t)params[k].len + 1 : 0;
    st->block = ent_malloc(total ? total : 1);
    if (!st->block)
        return -1;
    op->bytes += total;
    char *at = st->block;
    st->prepared = statement_twin ? statement_twin(prepared) : prepared;
    st->nparams = nparams;
    for (int k = 0; k < nparams; k++) {
        st->formats[k] = params[k].binary;
        st->lengths[k] = params[k].len;
        if (!params[k].value) {
            st->values[k] = NULL;
            continue;
        }
        memcpy(at, params[k].value, (size_t)params[k].len);
        at[params[k].len] = 0; /* text parameters are read up to the NUL */
        st->values[k] = at;
        at += params[k].len + 1;
    }
    return 0;
}

void *store_op_ctx(const store_op *op) { return op->ctx; }
int store_op_nstmt(const store_op *op) { return op->nstmt; }
void *store_op_result(const store_op *op) { return op->result; }
void store_op_set_status(store_op *op, sb_status st) { op->status = st; }
void store_op_take_result(store_op *op) { op->store->result_taken = true; }
void store_op_set_notify(store_op *op, int64_t entity_id) { op->notify_entity = entity_id; }

void store_op_set_lazy(store_op *op) { op->lazy = true; }
void store_op_set_catch_up(store_op *op, int64_t entity_id) { op->catch_up = entity_id; }

void store_op_set_result(store_op *op, void *result, void (*free_result)(void *))
{
    op->result = result;
    op->free_result = free_result;
}

static void op_finish(store_op *op, sb_status st)
{
    if (op->done)
        op->done(op, st == SB_OK ? op->status : st);
    if (op->free_result && op->result)
        op->free_result(op->result);
    for (int i = 0; i < op->nstmt; i++)
        ent_free(op->stmts[i].block);
    if (op->merge)
        ent_free(op->merge->data);
    ent_free(op->merge);
    ent_free(op);
}

/* ---- merged ops ---- */

store_op *store_op_new_merged(const store_merge_def *def, int64_t key, int nrows, store_done_fn done, void *ctx)
{
    void (*answer)(store_op *, int, const void *, int) = def->row; /* a copy of a def may set its own */
    if (def->story && statement_twin)
        def = def->story;
    store_op *op = store_op_new(0, NULL, done, ctx);
    merge_rows *m = op ? ent_calloc(1, sizeof *m) : NULL;
    if (!m) {
        ent_free(op);
        return NULL;
    }
    m->def = def;
    m->row = answer;
    m->key = key;
    m->nrows = nrows;
    op->merge = m;
    return op;
}

int store_op_row(store_op *op, int i, const store_param *cols)
{
    merge_rows *m = op->merge;
    if (!m || i != m->filled || i >= m->nrows)
        return -1;
    size_t need = 0;
    for (int c = 0; c < m->def->ncols; c++)
        need += 4 + (cols[c].value ? (size_t)cols[c].len : 0);
    if (m->len + need > m->cap) {
        /* a one-row op (most sends) is sized exactly, a batch grows */
        size_t cap = m->nrows == 1 ? need : (m->len + need) * 2;
        char *n = ent_realloc(m->data, cap);
        if (!n)
            return -1;
        m->data = n;
        m->cap = cap;
    }
    for (int c = 0; c < m->def->ncols; c++) {
        unsigned char *at = (unsigned char *)m->data + m->len;
        uint32_t len = cols[c].value ? (uint32_t)cols[c].len : UINT32_MAX; /* -1: NULL */
        at[0] = (unsigned char)(len >> 24), at[1] = (unsigned char)(len >> 16);
        at[2] = (unsigned char)(len >> 8), at[3] = (unsigned char)len;
        size_t add = 4;
        if (cols[c].value) {
            memcpy(at + 4, cols[c].value, (size_t)cols[c].len);
            add += (size_t)cols[c].len;
        } else {
            m->has_null[c] = true;
        }
        m->len += add;
        m->col_bytes[c] += add;
        op->bytes += add;
    }
    m->filled++;
    return 0;
}

int store_op_answered(const store_op *op) { return op->merge ? op->merge->answered : 0; }

/* ---- connection ---- */

void store_connection_free(PGconn *conn) { PQfinish(conn); }
int store_connection_socket(const PGconn *conn) { return PQsocket(conn); }

store *store_new(PGconn *conn, PGconn *flusher, const store_hooks *hooks)
{
    store *s = ent_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (flusher && !(s->flusher = store_flusher_new(flusher))) {
        ent_free(s);
        return NULL;
    }
    s->hooks = *hooks;
    s->conn = conn;
    return s;
}

void store_resume(store *s, PGconn *conn, PGconn *flusher)
{
    s->conn = conn;
    s->flusher = flusher ? store_flusher_new(flusher) : NULL;
    if (flusher && !s->flusher)
        PQfinish(flusher); /* out of memory: durable commits wait for their own fsync */
    s->broken = false;
    s->last_error[0] = 0;
    if (s->pending && s->hooks.want_flush)
        s->hooks.want_flush(s->hooks.ud);
}

const char *store_last_error(const store *s) { return s->last_error; }

/* Every op of every batch in flight, oldest first, as one list; no batch is
 * in flight after it. */
static store_op *take_inflight(store *s)
{
    store_op *all = NULL, **tail = &all;
    for (; s->inflight; s->inflight--, s->head = (s->head + 1) % STORE_INFLIGHT_MAX) {
        store_batch *b = oldest(s);
        *tail = b->ops;
        while (*tail)
            tail = &(*tail)->next;
        b->ops = NULL;
    }
    s->requeued_tail = NULL;
    return all;
}

static void fail_list(store *s, store_op *op, sb_status st)
{
    while (op) {
        s->held_bytes -= op->bytes;
        store_op *next = op->next;
        op_finish(op, st);
        op = next;
    }
}

void store_close(store *s)
{
    if (!s)
        return;
    /* Callbacks of failed ops may submit again (a sweep that finishes asks
     * for the next one): those fail at once instead of joining a dead list. */
    s->closing = true;
    while (s->inflight || s->pending || s->committed) {
        store_op *committed = s->committed, *inflight = take_inflight(s), *pending = s->pending;
        s->pending = s->pending_tail = s->committed = s->committed_tail = NULL;
        fail_list(s, committed, SB_ERR_INTERNAL);
        fail_list(s, inflight, SB_ERR_INTERNAL);
        fail_list(s, pending, SB_ERR_INTERNAL);
    }
    if (s->conn)
        PQfinish(s->conn);
    store_flusher_free(s->flusher);
    for (int i = 0; i < STORE_INFLIGHT_MAX; i++) {
        ent_free(s->batches[i].slots);
        ent_free(s->batches[i].merged);
    }
    ent_free(s);
}

int store_socket(const store *s) { return s->conn ? PQsocket(s->conn) : -1; }
store_stats store_get_stats(const store *s) { return s->stats; }
size_t store_pending_bytes(const store *s) { return s->held_bytes; }
bool store_idle(const store *s) { return !s->pending && !s->inflight && !s->committed; }
int store_flush_socket(const store *s) { return s->flusher ? store_flusher_socket(s->flusher) : -1; }
bool store_healthy(const store *s) { return !s->broken && s->conn && PQstatus(s->conn) == CONNECTION_OK; }

/* The connection is gone: it is closed (its socket, always readable at EOF,
 * would keep the loop spinning), everything queued fails with server-busy,
 * and the loop is told; the store takes nothing until store_resume. */
static void store_break(store *s, const char *why)
{
    if (s->broken)
        return;
    snprintf(s->last_error, sizeof s->last_error, "the connection to PostgreSQL was lost (%s): %s", why,
             PQerrorMessage(s->conn));
    s->last_error[strcspn(s->last_error, "\n")] = 0;
    LOG_ERROR("%s", s->last_error);
    s->broken = true;
    PQfinish(s->conn);
    s->conn = NULL;
    store_flusher_free(s->flusher);
    s->flusher = NULL;
    s->figures.commit_failures += (uint64_t)s->inflight; /* their fate is unknown: their clients retry them */
    /* committed, but not known to be on disk: as unknown as those in flight */
    store_op *committed = s->committed, *inflight = take_inflight(s), *pending = s->pending;
    s->pending = s->pending_tail = s->committed = s->committed_tail = NULL;
    fail_list(s, committed, SB_ERR_SERVER_BUSY);
    fail_list(s, inflight, SB_ERR_SERVER_BUSY);
    fail_list(s, pending, SB_ERR_SERVER_BUSY);
    if (s->hooks.on_lost)
        s->hooks.on_lost(s->hooks.ud);
}

void store_submit(store *s, store_op *op)
{
    if (op->merge && op->merge->filled != op->merge->nrows)
        op->status = SB_ERR_INTERNAL; /* a row could not be stored (out of memory) */
    if (s->broken || s->closing || op->status != SB_OK) {
        /* no connection, a closing store, or the op could not even be built (out of memory) */
        op_finish(op, s->broken ? SB_ERR_SERVER_BUSY : s->closing ? SB_ERR_INTERNAL : op->status);
        return;
    }
    op->next = NULL;
    op->store = s;
    s->held_bytes += op->bytes;
    if (s->pending_tail)
        s->pending_tail->next = op;
    else
        s->pending = op;
    s->pending_tail = op;
    if (s->inflight < STORE_INFLIGHT_MAX && s->hooks.want_flush)
        s->hooks.want_flush(s->hooks.ud);
}

static int add_slot(store_batch *b, store_op *op, int stmt)
{
    if (b->nslots == b->slot_cap) {
        int cap = b->slot_cap ? b->slot_cap * 2 : 64;
        store_slot *n = ent_realloc(b->slots, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        b->slots = n;
        b->slot_cap = cap;
    }
    b->slots[b->nslots++] = (store_slot){op, stmt, NULL, 0, false, false};
    return 0;
}

static int by_group(const void *a, const void *b)
{
    const merge_rows *x = (*(store_op *const *)a)->merge, *y = (*(store_op *const *)b)->merge;
    int c = strcmp(x->def->prepared, y->def->prepared);
    if (c)
        return c;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* The length of the element that starts at p (its 4-byte prefix included). */
static size_t element_size(const unsigned char *p)
{
    uint32_t len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return 4 + (len == UINT32_MAX ? 0 : len);
}

/* The 1-D arrays of a group's ncols columns in binary format, each a header
 * then that column of every row of every op, in order: arrays[c] and
 * lengths[c] (arrays[c] freed by the caller, also on failure). One walk of the
 * rows fills them all: a walk per column read every row's elements ncols
 * times (a tenth of the emulator's time publishing to a topic of 19
 * columns). */
static int build_arrays(store_op **ops, int n, int ncols, int total_rows, char **arrays, int *lengths)
{
    const merge_rows *m0 = ops[0]->merge;
    unsigned char *at[STORE_MERGE_MAX_COLS];
    int rc = 0;
    for (int c = 0; c < ncols; c++) {
        size_t len = 20;
        bool nulls = false;
        for (int i = 0; i < n; i++) {
            len += ops[i]->merge->col_bytes[c];
            nulls = nulls || ops[i]->merge->has_null[c];
        }
        unsigned char *a = ent_malloc(len);
        arrays[c] = (char *)a;
        lengths[c] = (int)len;
        if (!a) {
            rc = -1;
            continue;
        }
        uint32_t head[5] = {1, nulls, m0->def->elem_types[c], (uint32_t)total_rows, 1};
        for (int k = 0; k < 5; k++) {
            a[4 * k] = (unsigned char)(head[k] >> 24), a[4 * k + 1] = (unsigned char)(head[k] >> 16);
            a[4 * k + 2] = (unsigned char)(head[k] >> 8), a[4 * k + 3] = (unsigned char)head[k];
        }
        at[c] = a + 20;
    }
    if (rc)
        return rc;
    for (int i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)ops[i]->merge->data;
        for (int r = 0; r < ops[i]->merge->nrows; r++)
            for (int c = 0; c < ncols; c++) {
                size_t sz = element_size(p);
                memcpy(at[c], p, sz);
                at[c] += sz;
                p += sz;
            }
    }
    return 0;
}

int store_op_stmt_rows(store_op *op, int i, store_op *rows)
{
    merge_rows *m = rows->merge;
    int rc = -1;
    if (op && m && rows->status == SB_OK && m->filled == m->nrows && m->def->ncols + 1 <= STORE_MAX_PARAMS) {
        unsigned char key[8];
        for (int b = 0; b < 8; b++)
            key[b] = (unsigned char)((uint64_t)m->key >> (56 - 8 * b));
        store_param params[STORE_MAX_PARAMS] = {{key, 8, 1}};
        char *arrays[STORE_MERGE_MAX_COLS] = {0};
        int lengths[STORE_MERGE_MAX_COLS] = {0};
        bool ok = build_arrays(&rows, 1, m->def->ncols, m->nrows, arrays, lengths) == 0;
        for (int c = 0; c < m->def->ncols; c++)
            params[c + 1] = (store_param){arrays[c], lengths[c], 1};
        rc = ok ? store_op_stmt(op, i, m->def->prepared, params, m->def->ncols + 1) : -1;
        for (int c = 0; c < m->def->ncols; c++)
            ent_free(arrays[c]);
    }
    rows->done = NULL;
    op_finish(rows, SB_OK);
    return op ? rc : -1;
}

/* An int8 parameter in binary (network order). The engine's own: the typed
 * operations' be_int8 (store_binary.h) stands above the engine. */
static void put_int8(unsigned char out[8], int64_t v)
{
    for (int b = 0; b < 8; b++)
        out[b] = (unsigned char)((uint64_t)v >> (56 - 8 * b));
}

/* Sends one statement per (def, key) group of the batch's merged ops. */
static bool send_merged(store *s, store_batch *b, store_op *first)
{
    int n = 0;
    for (store_op *op = first; op; op = op->next)
        n += op->merge != NULL;
    if (!n)
        return true;
    if (n > b->merged_cap) {
        store_op **m = ent_realloc(b->merged, (size_t)n * sizeof *m);
        if (!m)
            return false;
        b->merged = m;
        b->merged_cap = n;
    }
    store_op **merged = b->merged;
    int k = 0;
    for (store_op *op = first; op; op = op->next)
        if (op->merge)
            merged[k++] = op;
    /* stable for equal keys: ops keep their arrival order inside a group */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && by_group(&merged[j - 1], &merged[j]) > 0; j--) {
            store_op *t = merged[j];
            merged[j] = merged[j - 1];
            merged[j - 1] = t;
        }
    for (int g = 0; g < n;) {
        int end = g + 1;
        while (end < n && by_group(&merged[g], &merged[end]) == 0)
            end++;
        const store_merge_def *def = merged[g]->merge->def;
        int rows = 0;
        for (int i = g; i < end; i++) {
            merged[i]->merge->first = rows;
            merged[i]->merge->answered = 0;
            rows += merged[i]->merge->nrows;
        }
        unsigned char key[8];
        put_int8(key, merged[g]->merge->key);
        const char *values[STORE_MERGE_MAX_COLS + 1] = {(const char *)key};
        int lengths[STORE_MERGE_MAX_COLS + 1] = {8}, formats[STORE_MERGE_MAX_COLS + 1];
        bool ok = build_arrays(&merged[g], end - g, def->ncols, rows, (char **)&values[1], &lengths[1]) == 0;
        for (int c = 0; c <= def->ncols; c++)
            formats[c] = 1;
        ok = ok && add_slot(b, NULL, 0) == 0;
        if (ok) {
            b->slots[b->nslots - 1].group = &merged[g];
            b->slots[b->nslots - 1].ngroup = end - g;
        }
        ok = ok && PQsendQueryPrepared(s->conn, def->prepared, def->ncols + 1, values, lengths, formats, 1) == 1;
        for (int c = 1; c <= def->ncols; c++)
            ent_free((void *)values[c]);
        if (!ok)
            return false;
        g = end;
    }
    return true;
}

/* One of the engine's own statements (no op answers for it; STMT_BATCH_*),
 * with at most one text parameter: a slot of batch b. */
static bool send_own(store *s, store_batch *b, const char *stmt, const char *param)
{
    const char *values[1] = {param};
    return add_slot(b, NULL, 0) == 0 &&
           PQsendQueryPrepared(s->conn, stmt, param ? 1 : 0, param ? values : NULL, NULL, NULL, 1) == 1;
}

/* A batch of lazy ops only (store_op_set_lazy) commits without waiting for
 * its WAL to reach the disk: set_config(..., true) lasts until the implicit
 * transaction's commit, which reads it (SET LOCAL would warn outside an
 * explicit block). Anywhere before the Sync will do: a batch with a mark sets
 * it in the mark's statement (STMT_BATCH_MARK_LAZY), one without in its own. */
static bool all_lazy(const store_op *ops)
{
    for (const store_op *op = ops; op; op = op->next)
        if (!op->lazy)
            return false;
    return true;
}

/* One NOTIFY per transaction naming the entities that got messages (never one per message). */
static bool send_notify(store *s, store_batch *b, const store_op *ops)
{
    char payload[STORE_NOTIFY_MAX_ENTITIES * 21 + 1] = "";
    int64_t seen[STORE_NOTIFY_MAX_ENTITIES];
    int n = 0;
    size_t len = 0;
    for (const store_op *op = ops; op && n < STORE_NOTIFY_MAX_ENTITIES; op = op->next) {
        if (!op->notify_entity)
            continue;
        bool dup = false;
        for (int i = 0; i < n && !dup; i++)
            dup = seen[i] == op->notify_entity;
        if (dup)
            continue;
        seen[n++] = op->notify_entity;
        len += (size_t)snprintf(payload + len, sizeof payload - len, "%s%lld", len ? "," : "",
                                (long long)op->notify_entity);
    }
    if (!n)
        return true;
    return send_own(s, b, STMT_BATCH_NOTIFY, payload);
}

static void deliver_notification(store *s, const char *payload)
{
    int64_t ids[STORE_NOTIFY_MAX_ENTITIES];
    size_t n = 0;
    for (const char *p = payload; *p && n < STORE_NOTIFY_MAX_ENTITIES;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            break;
        ids[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    if (n && s->hooks.on_messages)
        s->hooks.on_messages(s->hooks.ud, ids, n);
}

/* "<generation> <clock offset ms> <namespace id>" (migration 013's
 * sbemu_snapshot_restore; without the id, the default namespace's). */
static void deliver_reset(store *s, const char *payload)
{
    char *end, *end2;
    long long gen = strtoll(payload, &end, 10), offset = end != payload ? strtoll(end, &end2, 10) : 0;
    long long ns = end != payload ? strtoll(end2, NULL, 10) : 0;
    if (end == payload || offset < 0 || ns < 0 || ns > INT32_MAX) {
        LOG_WARN("a reset's notification could not be read: '%.64s'", payload);
        return;
    }
    s->hooks.on_reset(s->hooks.ud, gen, offset, ns ? (int32_t)ns : 1);
}

/* "<clock offset ms> <namespace id>" (STMT_CLOCK_PUBLISH; without the id, the default namespace's). */
static void deliver_clock(store *s, const char *payload)
{
    char *end;
    long long offset = strtoll(payload, &end, 10), ns = end != payload ? strtoll(end, NULL, 10) : 0;
    if (end == payload || offset < 0 || ns < 0 || ns > INT32_MAX) {
        LOG_WARN("a clock's notification could not be read: '%.64s'", payload);
        return;
    }
    s->hooks.on_clock(s->hooks.ud, ns ? (int32_t)ns : 1, offset);
}

static void process_input(store *s);
static void flush_output(store *s);

/* The mark a batch leaves when it commits (STMT_BATCH_MARK: set_config(...,
 * false) lasts past the transaction only if it commits): the batch sent
 * behind it checks it first (STMT_BATCH_GUARD), so that it cannot commit
 * when the one before it did not. A failed batch's ops are retried after it;
 * without the guard, what was sent behind them (a link's next sends) would
 * have committed first. */

/* Sends the next batch if one may go: whenever something is pending and
 * fewer than STORE_INFLIGHT_MAX are in flight. Solo ops go alone, with
 * nothing else in flight, and nothing goes behind them (they leave no mark).
 * Returns whether a batch went out. */
static bool send_batch(store *s)
{
    if (!s->pending || s->broken || s->inflight >= STORE_INFLIGHT_MAX)
        return false;
    store_batch *before = s->inflight ? &s->batches[(s->head + s->inflight - 1) % STORE_INFLIGHT_MAX] : NULL;
    if (before && (s->pending->solo || !before->id))
        return false;
    /* Take whole ops: a solo op goes alone, others up to the batch limit. */
    store_op *first = s->pending, *last = first;
    int n = 1;
    size_t bytes = first->bytes, size = first->merge ? (size_t)first->merge->nrows : 1;
    if (!first->solo)
        while (last->next && !last->next->solo && n < STORE_BATCH_MAX_OPS &&
               bytes + last->next->bytes <= STORE_BATCH_MAX_BYTES) {
            last = last->next;
            bytes += last->bytes;
            size += last->merge ? (size_t)last->merge->nrows : 1;
            n++;
        }
    s->pending = last->next;
    if (!s->pending)
        s->pending_tail = NULL;
    last->next = NULL;
    store_batch *b = &s->batches[(s->head + s->inflight) % STORE_INFLIGHT_MAX];
    s->inflight++;
    b->ops = first;
    b->nslots = 0;
    b->next_slot = 0;
    b->failed = b->guard_failed = false;
    b->wrote = true;
    b->id = first->solo ? 0 : ++s->next_batch_id;

    /* No BEGIN/COMMIT: everything up to the Sync is one implicit transaction,
     * committed at the Sync, or rolled back whole at the first error (an
     * explicit block would stay open and aborted after an error). */
    char id_text[24];
    bool ok = true;
    if (before) {
        snprintf(id_text, sizeof id_text, "%llu", (unsigned long long)before->id);
        ok = send_own(s, b, STMT_BATCH_GUARD, id_text);
        if (ok)
            b->slots[b->nslots - 1].guard = true;
    }
    /* A large durable batch commits without waiting for the disk, and the
     * flusher waits for it (settle, STORE_FLUSHER_MIN_BYTES) */
    b->durable = !all_lazy(first);
    /* (a batch without a mark cannot say whether it wrote: its commit is
     * then no flush of what came before, and the flusher makes it durable) */
    b->by_flusher = b->durable && s->flusher && (bytes >= STORE_FLUSHER_MIN_BYTES || !b->id);
    bool lazy = b->by_flusher || !b->durable;
    if (lazy && !b->id)
        ok = ok && send_own(s, b, STMT_BATCH_LAZY, NULL);
    ok = ok && send_merged(s, b, first);
    for (store_op *op = first; ok && op; op = op->next) {
        if (op->catch_up) {
            /* its own slot (stmt -1): parse is not told of it */
            unsigned char id[8];
            put_int8(id, op->catch_up);
            const char *v[1] = {(const char *)id};
            int len[1] = {8}, fmt[1] = {1};
            ok = add_slot(b, op, -1) == 0 && PQsendQueryPrepared(s->conn, STMT_CATCH_UP, 1, v, len, fmt, 1) == 1;
        }
        for (int i = 0; ok && i < op->nstmt; i++) {
            store_stmt *st = &op->stmts[i];
            ok = add_slot(b, op, i) == 0 &&
                 PQsendQueryPrepared(s->conn, st->prepared, st->nparams, st->values, st->lengths, st->formats, 1) == 1;
        }
    }
    ok = ok && send_notify(s, b, first);
    if (ok && b->id) {
        snprintf(id_text, sizeof id_text, "%llu", (unsigned long long)b->id);
        ok = send_own(s, b, lazy ? STMT_BATCH_MARK_LAZY : STMT_BATCH_MARK, id_text);
        if (ok)
            b->slots[b->nslots - 1].mark = true;
    }
    ok = ok && PQpipelineSync(s->conn) == 1;
    if (!ok) {
        store_break(s, "send");
        return false;
    }
    s->stats.batches++;
    s->stats.statements += (uint64_t)b->nslots;
    b->size = size;
    clock_gettime(CLOCK_MONOTONIC, &b->sent);
    return true;
}

void store_flush(store *s)
{
    if (s->flushing)
        return; /* a batch that ended while this one flushed: the loop below sends what may go */
    s->flushing = true;
    while (send_batch(s)) {
        flush_output(s);
        /* results libpq read while it flushed (a batch in flight may have
         * ended: then another may go) */
        process_input(s);
    }
    s->flushing = false;
}

/* Sends what libpq still holds. Non-blocking: what the socket cannot take now
 * waits for its write-readiness (want_write). */
static void flush_output(store *s)
{
    int r = PQflush(s->conn);
    if (r < 0)
        store_break(s, "flush");
    else if (r > 0 && s->hooks.want_write)
        s->hooks.want_write(s->hooks.ud);
}

void store_on_writable(store *s)
{
    if (s->broken)
        return;
    flush_output(s);
    process_input(s);
}

/* A batch ended: committed (its latency and size observed) or not. */
static void count_commit(store *s, const store_batch *b)
{
    if (b->failed) {
        s->figures.commit_failures++;
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double seconds = (double)(now.tv_sec - b->sent.tv_sec) + (double)(now.tv_nsec - b->sent.tv_nsec) / 1e9;
    s->figures.commits++;
    store_histogram_observe(&s->figures.commit_seconds, store_commit_seconds_bounds, STORE_COMMIT_SECONDS_NBOUNDS,
                            seconds);
    store_histogram_observe(&s->figures.batch_size, store_batch_size_bounds, STORE_BATCH_SIZE_NBOUNDS,
                            (double)b->size);
}

void store_get_figures(const store *s, store_figures *out)
{
    *out = s->figures;
    out->pending_ops = out->inflight_ops = 0;
    for (const store_op *op = s->pending; op; op = op->next)
        out->pending_ops++;
    for (int i = 0; i < s->inflight; i++)
        for (const store_op *op = s->batches[(s->head + i) % STORE_INFLIGHT_MAX].ops; op; op = op->next)
            out->inflight_ops++;
    for (const store_op *op = s->committed; op; op = op->next)
        out->inflight_ops++;
    out->held_bytes = s->held_bytes;
    out->up = store_healthy(s);
}

/* A failed batch's ops go back to be sent again, in their order: alone (solo)
 * when one of them may be why it failed, as a batch when the batch before
 * them failed (their guard). They go first, after what the batch before them
 * put back: nothing pending was sent before them. */
static void requeue(store *s, store_op *ops, bool solo)
{
    store_op *tail = ops;
    for (store_op *op = ops; op; op = op->next) {
        s->stats.retried++;
        op->solo = solo;
        op->status = SB_OK;
        if (op->free_result && op->result)
            op->free_result(op->result);
        op->result = NULL;
        tail = op;
    }
    store_op **at = s->requeued_tail ? &s->requeued_tail->next : &s->pending;
    tail->next = *at;
    *at = ops;
    if (!tail->next)
        s->pending_tail = tail;
    /* the batch behind, still in flight, fails its guard: its ops go after these */
    s->requeued_tail = s->inflight ? tail : NULL;
}

static void answer_ok(store *s, store_op *ops)
{
    for (store_op *op = ops; op; op = op->next)
        s->stats.ops++;
    fail_list(s, ops, SB_OK);
}

/* A committed batch's ops: answered now, or once the flush that covers them
 * has come back (store_flusher.h). Answers keep the order of the commits: a
 * lazy batch's ops wait behind a durable one's still waiting for its flush. */
static void settle(store *s, store_op *ops, const store_batch *b)
{
    if (!ops)
        return;
    bool durable = b->durable && b->wrote;
    if (durable && !b->by_flusher) {
        /* its own commit flushed the WAL past every commit before it */
        store_op *before = s->committed;
        s->committed = s->committed_tail = NULL;
        answer_ok(s, before);
        answer_ok(s, ops);
        return;
    }
    int64_t ticket;
    if (durable)
        ticket = store_flusher_ask(s->flusher);
    else if (s->committed)
        ticket = s->committed_tail->ticket;
    else {
        answer_ok(s, ops);
        return;
    }
    store_op *tail = ops;
    for (store_op *op = ops; op; op = op->next) {
        op->ticket = ticket;
        tail = op;
    }
    if (s->committed_tail)
        s->committed_tail->next = ops;
    else
        s->committed = ops;
    s->committed_tail = tail;
    if (ticket < 0)
        store_break(s, "flush"); /* fails them with the rest: not known to be on disk */
}

void store_on_flush_readable(store *s)
{
    if (s->broken || !s->flusher)
        return;
    int64_t done = 0;
    if (store_flusher_on_readable(s->flusher, &done)) {
        /* store_break names the main connection's error: keep the flusher's */
        char why[STORE_LAST_ERROR_MAX / 2];
        snprintf(why, sizeof why, "flush: %s", store_flusher_error(s->flusher));
        why[strcspn(why, "\n")] = 0;
        store_break(s, why);
        return;
    }
    store_op *ops = s->committed, *last = NULL;
    for (store_op *op = ops; op && op->ticket <= done; op = op->next)
        last = op;
    if (!last)
        return;
    s->committed = last->next;
    if (!s->committed)
        s->committed_tail = NULL;
    last->next = NULL;
    answer_ok(s, ops);
}

/* The oldest batch in flight is over: settle every op, or requeue them if it failed. */
static void batch_complete(store *s)
{
    store_batch *b = oldest(s);
    store_op *ops = b->ops;
    b->ops = NULL;
    s->head = (s->head + 1) % STORE_INFLIGHT_MAX;
    s->inflight--;
    if (ops)
        count_commit(s, b);
    if (!b->failed || !ops) {
        if (!s->inflight)
            s->requeued_tail = NULL;
        settle(s, ops, b);
    } else if (b->guard_failed || ops->next) {
        requeue(s, ops, !b->guard_failed);
    } else {
        if (!s->inflight)
            s->requeued_tail = NULL;
        fail_list(s, ops, ops->status != SB_OK ? ops->status : SB_ERR_INTERNAL);
    }
    store_flush(s);
}

/* Statements raise SQLSTATEs of class SB (sbemu_raise) for outcomes that are
 * Service Bus answers: SBN.. entity gone, SBQ.. quota exceeded, SBD..
 * entity disabled, SBL.. a lock lost. The server's own troubles (53 out of
 * disk, memory or connections, 57P shutting down, 58 I/O errors, 08 the
 * connection) pass once it has room again: server-busy, which the SDKs retry. */
static sb_status status_of_sqlstate(const char *state)
{
    if (!state)
        return SB_OK;
    if (!strncmp(state, "53", 2) || !strncmp(state, "57P", 3) || !strncmp(state, "58", 2) || !strncmp(state, "08", 2))
        return SB_ERR_SERVER_BUSY;
    if (strncmp(state, "SB", 2))
        return SB_OK;
    switch (state[2]) {
    case 'N': return SB_ERR_NOT_FOUND;
    case 'Q': return SB_ERR_QUOTA_EXCEEDED;
    case 'D': return SB_ERR_ENTITY_DISABLED;
    case 'L': return SB_ERR_LOCK_LOST;
    default: return SB_ERR_INTERNAL;
    }
}

/* Each answer row of a merged statement goes to the op whose input row its
 * first column (the 1-based ordinal) names. */
static void dispatch_rows(const store_slot *slot, const PGresult *r)
{
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        const unsigned char *p = (const unsigned char *)PQgetvalue(r, i, 0);
        int64_t ord = 0;
        for (int b = 0; b < 8 && PQgetlength(r, i, 0) == 8; b++)
            ord = (int64_t)((uint64_t)ord << 8 | p[b]);
        int lo = 0, hi = slot->ngroup - 1; /* the op with the greatest first <= ord - 1 */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (slot->group[mid]->merge->first <= ord - 1)
                lo = mid;
            else
                hi = mid - 1;
        }
        store_op *op = slot->group[lo];
        int index = (int)(ord - 1 - op->merge->first);
        if (ord < 1 || index >= op->merge->nrows)
            continue; /* cannot happen: the statement answers its own input */
        op->merge->answered++;
        if (op->merge->row)
            op->merge->row(op, index, r, i);
    }
}

/* One statement's result (never a Sync's: process_input ends batches). */
static void handle_result(store *s, PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    store_batch *b = oldest(s);
    if (b->next_slot >= b->nslots)
        return; /* not ours: cannot happen in a healthy pipeline */
    store_slot *slot = &b->slots[b->next_slot];
    if (slot->guard && st == PGRES_FATAL_ERROR) {
        b->failed = b->guard_failed = true; /* the batch before failed: this one goes again after its ops */
        return;
    }
    /* a merged statement of a single op answers for that op alone */
    store_op *owner = slot->group ? (slot->ngroup == 1 ? slot->group[0] : NULL) : slot->op;
    if (st == PGRES_FATAL_ERROR) {
        sb_status answer = status_of_sqlstate(PQresultErrorField(r, PG_DIAG_SQLSTATE));
        if (answer == SB_ERR_SERVER_BUSY || answer == SB_OK) {
            /* not a Service Bus answer: what a client refused for it should hear */
            snprintf(s->last_error, sizeof s->last_error, "PostgreSQL: %s", PQresultErrorMessage(r));
            s->last_error[strcspn(s->last_error, "\n")] = 0;
        }
        if (answer == SB_ERR_SERVER_BUSY) {
            if (!b->failed)
                LOG_WARN("store: %s", s->last_error);
            if (owner)
                owner->status = answer;
            b->failed = true;
            return;
        }
        if (owner && answer != SB_OK) {
            owner->status = answer; /* a Service Bus answer, not a failure */
            b->failed = true;
            return;
        }
        if (slot->group && answer != SB_OK) {
            b->failed = true; /* whose answer it is shows when each op is retried alone */
            return;
        }
        if (!b->failed)
            LOG_WARN("store: %s failed: %s", slot->op ? (slot->stmt < 0 ? STMT_CATCH_UP : slot->op->stmts[slot->stmt].prepared) : "transaction",
                     PQresultErrorMessage(r));
        b->failed = true;
    } else if (st == PGRES_PIPELINE_ABORTED) {
        b->failed = true;
    } else if (slot->mark) {
        int last = PQnfields(r) - 1; /* the marks' last column says it */
        b->wrote = !(PQntuples(r) == 1 && last > 0 && PQgetlength(r, 0, last) == 1 && !PQgetvalue(r, 0, last)[0]);
    } else if (slot->group && !b->failed) {
        dispatch_rows(slot, r);
    } else if (slot->op && slot->op->parse && slot->stmt >= 0 && !b->failed) {
        slot->op->parse(slot->op, slot->stmt, r);
    }
}

/* Hands every result and notification libpq holds to their ops. libpq also
 * reads the socket while it flushes (so that the server, blocked writing
 * results, can take more of a long query), so this runs after every flush too:
 * results read then would otherwise wait for a readable event that never
 * comes. */
static void process_input(store *s)
{
    while (s->inflight && !s->broken && !PQisBusy(s->conn)) {
        PGresult *r = PQgetResult(s->conn);
        if (!r) {
            /* end of one query's results */
            store_batch *b = oldest(s);
            if (b->next_slot < b->nslots)
                b->next_slot++;
            continue;
        }
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            /* Cleared first: the batch's end runs callbacks, and their
             * submits flush and read again (store_flush), setting and
             * clearing result_taken for results of their own. Read after
             * that, the flag could say this one was kept: a PGresult lost
             * (LeakSanitizer, two replicas sharing 1,000 sessions). */
            PQclear(r);
            batch_complete(s);
            continue;
        }
        s->result_taken = false;
        handle_result(s, r);
        if (!s->result_taken)
            PQclear(r);
    }
    PGnotify *n;
    while (!s->broken && (n = PQnotifies(s->conn))) {
        if (!strcmp(n->relname, STORE_NOTIFY_CHANNEL))
            deliver_notification(s, n->extra);
        else if (!strcmp(n->relname, STORE_CLOCK_CHANNEL) && s->hooks.on_clock)
            deliver_clock(s, n->extra);
        else if (!strcmp(n->relname, STORE_ENTITIES_CHANNEL) && s->hooks.on_entities)
            s->hooks.on_entities(s->hooks.ud, n->extra);
        else if (!strcmp(n->relname, STORE_RESET_CHANNEL) && s->hooks.on_reset)
            deliver_reset(s, n->extra);
        PQfreemem(n);
    }
}

void store_on_readable(store *s)
{
    if (s->broken)
        return;
    if (!PQconsumeInput(s->conn)) {
        store_break(s, "read");
        return;
    }
    process_input(s);
}

/* ---- the namespace clock ---- */

typedef struct clock_cb {
    void (*cb)(void *ctx, sb_status st);
    void *ctx;
} clock_cb;

static void clock_done(store_op *op, sb_status st)
{
    clock_cb *c = op->ctx;
    if (c->cb)
        c->cb(c->ctx, st);
    ent_free(c);
}

void store_clock_publish(store *s, int32_t ns, int64_t offset_ms, void (*cb)(void *ctx, sb_status st), void *ctx)
{
    clock_cb *c = ent_malloc(sizeof *c);
    store_op *op = c ? store_op_new(1, NULL, clock_done, c) : NULL;
    if (!op) {
        ent_free(c);
        if (cb)
            cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    c->cb = cb;
    c->ctx = ctx;
    char text[32], ns_text[16];
    snprintf(text, sizeof text, "%lld", (long long)offset_ms);
    snprintf(ns_text, sizeof ns_text, "%d", (int)(ns > 0 ? ns : 1));
    store_param p[2] = {{text, (int)strlen(text), 0}, {ns_text, (int)strlen(ns_text), 0}};
    if (store_op_stmt(op, 0, STMT_CLOCK_PUBLISH, p, 2))
        op->status = SB_ERR_INTERNAL;
    store_submit(s, op);
}
