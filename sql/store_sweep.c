/* The background sweep: expired messages, lapsed locks, idle entities, old duplicates, due schedules,
 * lapsed sessions and dead transactions' schedules, in one op (store_sweep). Declared in
 * store_queue.h. */
#include "store_queue.h"

#include <libpq-fe.h>

#include "ent_alloc.h"
#include "ent_dead_letter.h"
#include "ent_log.h"
#include "store_arrays.h"
#include "store_binary.h"
#include "store_log.h"
#include "store_session.h"
#include "store_statements.h"
#include "store_story.h"

/* The statements of one sweep, in the order the op runs them. */
enum sweep_stmt {
    SWEEP_LOG,         /* topic logs: expired entries into messages (for SWEEP_EXPIRED), cut below every cursor */
    SWEEP_EXPIRED,     /* expired messages: dead-lettered or dropped; answers their entities */
    SWEEP_LAPSED,      /* lapsed locks: back, or dead-lettered past MaxDeliveryCount; answers their entities */
    SWEEP_IDLE,        /* entities idle past AutoDeleteOnIdle, deleted; answers their names */
    SWEEP_DUPLICATES,  /* message ids out of their duplicate-detection window, forgotten */
    SWEEP_SCHEDULED,   /* scheduled messages come due; answers their entities */
    SWEEP_SESSIONS,    /* lapsed sessions' rows without a state, removed */
    SWEEP_TXN_PENDING, /* what dead transactions scheduled, removed */
    SWEEP_STORY,       /* story events older than --story-retention, pruned */
    SWEEP_STATEMENTS
};

/* Who asked: the op's ctx, freed by sweep_done. */
typedef struct sweep_caller {
    store_sweep_cb cb;
    store_sweep_counts_cb counted; /* the policy's */
    void *ctx;
} sweep_caller;

/* What the statements answered; made by the first answer (a batch retried
 * op by op starts it again). */
typedef struct sweep_result {
    size_t n, cap;
    int64_t *queues;
    store_sweep_count *counts; /* rows of one entity in a row merged */
    size_t ncounts, counts_cap;
} sweep_result;

static void sweep_free(void *p)
{
    sweep_result *r = p;
    ent_free(r->queues);
    ent_free(r->counts);
    ent_free(r);
}

/* Counts one expired message or lapsed lock of entity (GET /metrics). */
static void count_row(sweep_result *acc, int64_t entity, bool expired, bool dead_lettered)
{
    if (!expired && !dead_lettered)
        return;
    store_sweep_count *c = acc->ncounts ? &acc->counts[acc->ncounts - 1] : NULL;
    if (!c || c->entity != entity) {
        if (acc->ncounts == acc->counts_cap) {
            size_t cap = acc->counts_cap ? acc->counts_cap * 2 : 8;
            store_sweep_count *v = ent_realloc(acc->counts, cap * sizeof *v);
            if (!v)
                return; /* a count lost, never a message */
            acc->counts = v;
            acc->counts_cap = cap;
        }
        c = &acc->counts[acc->ncounts++];
        *c = (store_sweep_count){entity, 0, 0, 0};
    }
    c->expired += expired;
    c->expired_dead_lettered += expired && dead_lettered;
    c->exhausted += !expired && dead_lettered;
}

static void sweep_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    const sweep_caller *caller = store_op_ctx(op);
    sweep_result *acc = store_op_result(op);
    if (!acc) {
        acc = ent_calloc(1, sizeof *acc);
        if (!acc)
            return;
        store_op_set_result(op, acc, sweep_free);
    }
    int rows = PQntuples(r);
    if (stmt == SWEEP_IDLE) {
        for (int i = 0; i < rows; i++)
            LOG_INFO("queue '%s' was idle for its AutoDeleteOnIdle and is deleted", PQgetvalue(r, i, 1));
        return;
    }
    if (stmt == SWEEP_LOG || stmt == SWEEP_DUPLICATES || stmt == SWEEP_SESSIONS || stmt == SWEEP_TXN_PENDING || stmt == SWEEP_STORY ||
        rows == 0)
        return; /* nothing for the receivers */
    if (acc->n + (size_t)rows > acc->cap) {
        size_t cap = acc->n + (size_t)rows;
        int64_t *q = ent_realloc(acc->queues, cap * sizeof *q);
        if (!q)
            return;
        acc->queues = q;
        acc->cap = cap;
    }
    for (int i = 0; i < rows; i++) {
        acc->queues[acc->n++] = col_i64(r, i, 0);
        if (stmt != SWEEP_SCHEDULED && caller->counted)
            count_row(acc, col_i64(r, i, 0), stmt == SWEEP_EXPIRED, col_bool(r, i, 1));
    }
}

static void sweep_done(store_op *op, sb_status st)
{
    sweep_caller *caller = store_op_ctx(op);
    sweep_result *r = store_op_result(op);
    if (st == SB_OK && r && r->ncounts && caller->counted)
        caller->counted(caller->ctx, r->counts, r->ncounts);
    caller->cb(caller->ctx, st, r ? r->queues : NULL, r ? r->n : 0);
    ent_free(caller);
}

void store_sweep(store *s, int64_t now_ms, const store_sweep_policy *policy, store_sweep_cb cb, void *ctx)
{
    sweep_caller *u = ent_malloc(sizeof *u);
    if (u)
        *u = (sweep_caller){cb, policy->counted, ctx};
    store_op *op = u ? store_op_new(SWEEP_STATEMENTS, sweep_parse, sweep_done, u) : NULL;
    /* the policy travels as text-format int8[] literals ("{1,2}") */
    char *dl = store_int8_array_text(policy->dead_letter_on_expiry, policy->n_dead_letter_on_expiry);
    char *from = store_int8_array_text(policy->forward_from, policy->n_forward);
    char *to = store_int8_array_text(policy->forward_to, policy->n_forward);
    char *scope = policy->scope ? store_int8_array_text(policy->scope, policy->n_scope) : NULL;
    if (!op || !dl || !from || !to || (policy->scope && !scope)) {
        ent_free(u);
        ent_free(op);
        ent_free(dl);
        ent_free(from);
        ent_free(to);
        ent_free(scope);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    store_param ids = P_TEXT(scope), in = P_TEXT(policy->scope_in ? "true" : "false");
    int8_param now = be_int8(now_ms), offset = be_int8(policy->clock_offset_ms);
    ent_dead_letter_reason expired = ent_dead_letter_expired();
    int rc = store_op_stmt(op, SWEEP_LOG, STMT_SWEEP_LOG, (store_param[]){P_INT8(now)}, 1);
    rc |= store_op_stmt(op, SWEEP_EXPIRED, STMT_SWEEP_EXPIRED,
                           (store_param[]){P_INT8(now), P_TEXT(expired.reason), P_TEXT(expired.description),
                                           P_TEXT(dl), P_TEXT(from), P_TEXT(to), ids, in, P_INT8(offset)},
                           9);
    /* which lapsed locks exhausted MaxDeliveryCount is decided under their row locks */
    ent_dead_letter_reason exhausted = ent_dead_letter_max_delivery();
    rc |= store_op_stmt(op, SWEEP_LAPSED, STMT_SWEEP_LAPSED,
                        (store_param[]){P_INT8(now), P_TEXT(exhausted.reason), P_TEXT(exhausted.description),
                                        P_TEXT(from), P_TEXT(to), ids, in},
                        7);
    rc |= store_op_stmt(op, SWEEP_IDLE, STMT_SWEEP_IDLE, (store_param[]){P_INT8(now), ids, in}, 3);
    rc |= store_op_stmt(op, SWEEP_DUPLICATES, STMT_SWEEP_DUPLICATES, (store_param[]){P_INT8(now), ids, in}, 3);
    rc |= store_op_stmt(op, SWEEP_SCHEDULED, STMT_SWEEP_SCHEDULED, (store_param[]){P_INT8(now), ids, in, P_INT8(offset)},
                        4);
    rc |= store_op_stmt(op, SWEEP_SESSIONS, STMT_SESSION_SWEEP, (store_param[]){P_INT8(now), ids, in}, 3);
    rc |= store_op_stmt(op, SWEEP_TXN_PENDING, STMT_SWEEP_TXN_PENDING, (store_param[]){P_INT8(now), ids, in}, 3);
    /* pruned whether or not the story is recorded now: a run with it on left events behind */
    int8_param story_before = be_int8(policy->story_before_ms);
    rc |= store_op_stmt(op, SWEEP_STORY, STMT_STORY_PRUNE, (store_param[]){P_INT8(story_before), ids, in}, 3);
    ent_free(dl);
    ent_free(from);
    ent_free(to);
    ent_free(scope);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
