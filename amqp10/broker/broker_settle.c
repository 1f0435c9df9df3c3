/* Settling locked messages: the one path a link's disposition and
 * $management update-disposition take (a transaction's settlements commit
 * with it, and its discharge calls broker_after_settle). A settlement that
 * carries properties to modify (codec/amqp_props.h) has its stored bytes read
 * under the lock, rewritten and replaced before it settles; the rest go
 * straight to store_settle. Once every lock of a call has settled, what must
 * follow is carried out (broker_after_settle), once per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_props.h"
#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_dead_letter.h"
#include "store_mgmt.h"

/* One settlement on its way through read → rewrite → replace → settle. */
typedef struct modify_req {
    store *s;
    int64_t entity_id, dead_letter_target, now_ms;
    uint8_t token[16];
    store_settle_kind kind;
    char *reason, *description; /* NULL: none */
    uint8_t *mods;
    size_t modslen;
    store_settled_cb cb;
    void *ctx;
} modify_req;

static void modify_free(modify_req *q)
{
    ent_free(q->reason);
    ent_free(q->description);
    ent_free(q->mods);
    ent_free(q);
}

static void on_replaced(void *ctx, sb_status st)
{
    modify_req *q = ctx;
    if (st == SB_OK) /* store_settle copies reason and description */
        store_settle_counted(q->s, q->entity_id, q->token, q->kind, q->reason, q->description,
                             q->dead_letter_target, q->now_ms, q->cb, q->ctx);
    else
        q->cb(q->ctx, st, false);
    modify_free(q);
}

static void on_read(void *ctx, sb_status st, const uint8_t *bytes, size_t len)
{
    modify_req *q = ctx;
    amqp_buf out = {0};
    if (st == SB_OK && amqp_apply_properties(bytes, len, q->mods, q->modslen, &out))
        st = SB_ERR_ARGUMENT;
    if (st != SB_OK) {
        amqp_buf_free(&out);
        q->cb(q->ctx, st, false);
        modify_free(q);
        return;
    }
    store_replace_locked_message(q->s, q->entity_id, q->token, q->now_ms, out.data, out.len, on_replaced,
                                 q); /* copies the bytes */
    amqp_buf_free(&out);
}

static char *dup_or_null(const char *s, bool *failed)
{
    char *d = s ? ent_strdup(s) : NULL;
    if (s && !d)
        *failed = true;
    return d;
}

static void settle_modifying(store *s, int64_t entity_id, const uint8_t token[16], store_settle_kind kind,
                             const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                             const uint8_t *mods, size_t modslen, store_settled_cb cb, void *ctx)
{
    modify_req *q = ent_calloc(1, sizeof *q);
    bool failed = !q;
    if (q) {
        *q = (modify_req){s, entity_id, dead_letter_target, now_ms, {0}, kind, NULL, NULL, NULL, modslen, cb, ctx};
        memcpy(q->token, token, 16);
        q->reason = dup_or_null(reason, &failed);
        q->description = dup_or_null(description, &failed);
        q->mods = ent_malloc(modslen ? modslen : 1);
        if (q->mods)
            memcpy(q->mods, mods, modslen);
        else
            failed = true;
    }
    if (failed) {
        if (q)
            modify_free(q);
        cb(ctx, SB_ERR_INTERNAL, false);
        return;
    }
    store_read_locked_message(s, entity_id, q->token, now_ms, on_read, q);
}

/* One call of broker_settle: its locks still in the store, and its answer. */
typedef struct settle_call {
    broker *b;
    int64_t entity_id, dead_letter_target;
    ent_settle_kind kind;
    size_t pending;
    uint64_t settled;   /* locks that settled, counted once the call ends */
    uint64_t exhausted; /* abandons that dead-lettered past MaxDeliveryCount */
    char reason[BROKER_REASON_LABEL_MAX + 2]; /* a dead letter's, a byte past its label (cut there, on a UTF-8 boundary) */
    sb_status worst; /* the first failure, a lost lock preferred */
    store_status_cb cb;
    void *ctx;
} settle_call;

/* What the settlements that took effect did, for GET /metrics. */
static void count_settled(const settle_call *call)
{
    static const broker_event events[] = {[ENT_SETTLE_COMPLETE] = BROKER_EV_COMPLETED,
                                          [ENT_SETTLE_ABANDON] = BROKER_EV_ABANDONED,
                                          [ENT_SETTLE_DEFER] = BROKER_EV_DEFERRED};
    broker_count_dead_letters(call->b, call->entity_id, ent_dead_letter_max_delivery().reason, call->exhausted);
    if (call->kind == ENT_SETTLE_DEADLETTER)
        broker_count_dead_letters(call->b, call->entity_id, call->reason, call->settled);
    else if (call->kind == ENT_SETTLE_COMPLETE || call->kind == ENT_SETTLE_ABANDON || call->kind == ENT_SETTLE_DEFER)
        broker_count(call->b, call->entity_id, events[call->kind], call->settled);
}

static void on_settled(void *ctx, sb_status st, bool exhausted)
{
    settle_call *call = ctx;
    if (st != SB_OK && (call->worst == SB_OK || st == SB_ERR_LOCK_LOST))
        call->worst = st;
    call->settled += st == SB_OK;
    call->exhausted += exhausted && call->kind == ENT_SETTLE_ABANDON;
    if (--call->pending)
        return;
    call->settled--; /* broker_settle's own pending */
    count_settled(call);
    if (call->worst == SB_OK)
        broker_after_settle(call->b, call->entity_id, call->dead_letter_target, call->kind);
    call->cb(call->ctx, call->worst);
    ent_free(call);
}

void broker_settle(broker *b, const broker_settlement *x, const uint8_t (*tokens)[16], size_t n, store_status_cb cb,
                   void *ctx)
{
    settle_call *call = ent_malloc(sizeof *call);
    if (!call) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    /* one pending for this function: a store that fails at once cannot end the call early */
    *call = (settle_call){b, x->entity_id, x->dead_letter_target, x->kind, n + 1, 0, 0, "", SB_OK, cb, ctx};
    if (x->kind == ENT_SETTLE_DEADLETTER && x->reason)
        snprintf(call->reason, sizeof call->reason, "%s", x->reason); /* cut where the label is */
    /* a completed message is gone: there is nothing to modify */
    bool modify = x->mods && x->kind != ENT_SETTLE_COMPLETE;
    store_settle_kind kind = (store_settle_kind)x->kind; /* the same codes (test_ent_settle) */
    for (size_t i = 0; i < n; i++) {
        if (modify)
            settle_modifying(b->store, x->entity_id, tokens[i], kind, x->reason, x->description, x->dead_letter_target,
                             x->now_ms, x->mods, x->modslen, on_settled, call);
        else
            store_settle_counted(b->store, x->entity_id, tokens[i], kind, x->reason, x->description,
                                 x->dead_letter_target, x->now_ms, on_settled, call);
    }
    on_settled(call, SB_OK, false);
}
