/* Settling: completes, and the other outcomes, joined into one merged statement each per commit
 * (store_settle, store_settle_row). Declared in store_queue.h. */
#include "store_queue.h"

#include <libpq-fe.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_dead_letter.h"
#include "store_binary.h"
#include "store_statements.h"
#include "store_story.h"

/* Who asked for one settlement (the op's ctx, freed by settle_done). */
typedef struct settle_caller {
    store_settled_cb cb;
    store_status_cb plain_cb; /* store_settle's: called instead of cb */
    void *ctx;
    bool exhausted; /* the answer row said MaxDeliveryCount was exhausted */
} settle_caller;

/* An answer of STMT_SETTLE_SET: (ordinal, exhausted). Only store_settle's
 * ops carry a caller (a transaction's rows run as its own statement). */
static void settle_answered(store_op *op, int index, const void *res, int row)
{
    (void)index;
    settle_caller *c = store_op_ctx(op);
    if (c)
        c->exhausted = col_bool(res, row, 1);
}

/* Every complete of a commit is one DELETE (STMT_COMPLETE_SET), every other
 * settlement one STMT_SETTLE_SET; an answer row names a settlement that found
 * its lock. */
/* Their story twins (store_story.h) take the same columns. */
#define COMPLETE_COLUMNS 3, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}
#define SETTLE_COLUMNS                                                                                             \
    7, {STORE_OID_INT8, STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}
static const store_merge_def complete_set_story = {STMT_COMPLETE_SET_STORY, COMPLETE_COLUMNS, NULL, NULL};
static const store_merge_def settle_set_story = {STMT_SETTLE_SET_STORY, SETTLE_COLUMNS, NULL, NULL};
const store_merge_def store_complete_set = {STMT_COMPLETE_SET, COMPLETE_COLUMNS, NULL, &complete_set_story};
const store_merge_def store_settle_set = {STMT_SETTLE_SET, SETTLE_COLUMNS, settle_answered, &settle_set_story};

static void settle_done(store_op *op, sb_status st)
{
    settle_caller *c = store_op_ctx(op);
    st = st == SB_OK && store_op_answered(op) == 0 ? SB_ERR_LOCK_LOST : st;
    if (c->plain_cb)
        c->plain_cb(c->ctx, st);
    else if (c->cb)
        c->cb(c->ctx, st, st == SB_OK && c->exhausted);
    ent_free(c);
}

int store_settle_row(store_op *op, int i, const store_settlement *x)
{
    int8_param k = be_int8(x->kind), q = be_int8(x->entity_id), now = be_int8(x->now_ms),
               dlt = be_int8(x->dead_letter_target);
    if (x->kind == STORE_SETTLE_COMPLETE)
        return store_op_row(op, i, (store_param[]){P_UUID(x->lock_token), P_INT8(q), P_INT8(now)});
    /* an abandon's is used only when it exhausts MaxDeliveryCount, which STMT_SETTLE_SET decides */
    ent_dead_letter_reason dl = ent_settle_dead_letter_reason((ent_settle_kind)x->kind, x->reason, x->description);
    return store_op_row(op, i,
                        (store_param[]){P_INT8(k), P_UUID(x->lock_token), P_INT8(q), P_INT8(now), P_TEXT(dl.reason),
                                        P_TEXT(dl.description),
                                        x->dead_letter_target ? P_INT8(dlt) : (store_param){0}});
}

static void settle(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                   const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                   settle_caller caller)
{
    settle_caller *u = ent_malloc(sizeof *u);
    if (u)
        *u = caller;
    bool complete = kind == STORE_SETTLE_COMPLETE;
    store_op *op =
        u ? store_op_new_merged(complete ? &store_complete_set : &store_settle_set, 0, 1, settle_done, u) : NULL;
    if (!op) {
        ent_free(u);
        if (caller.plain_cb)
            caller.plain_cb(caller.ctx, SB_ERR_INTERNAL);
        else if (caller.cb)
            caller.cb(caller.ctx, SB_ERR_INTERNAL, false);
        return;
    }
    store_settlement x = {kind, entity_id, {0}, reason, description, dead_letter_target, now_ms};
    memcpy(x.lock_token, lock_token, 16);
    if (store_settle_row(op, 0, &x))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

void store_settle(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                  const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                  store_status_cb cb, void *ctx)
{
    settle(s, entity_id, lock_token, kind, reason, description, dead_letter_target, now_ms,
           (settle_caller){NULL, cb, ctx, false});
}

void store_settle_counted(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                          const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                          store_settled_cb cb, void *ctx)
{
    settle(s, entity_id, lock_token, kind, reason, description, dead_letter_target, now_ms,
           (settle_caller){cb, NULL, ctx, false});
}
