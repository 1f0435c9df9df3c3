/* com.microsoft:schedule-message and com.microsoft:cancel-scheduled-message.
 *
 * schedule: `messages` is a list of maps {message: binary, message-id: string,
 * session-id?, partition-key?, ...}; each encoded message carries
 * x-opt-scheduled-enqueue-time. Each is stored like a send (the entity's TTL
 * cap applies) but in state 2 (scheduled), available and enqueued at its
 * scheduled time, expiring TTL after it; receivers see it once it is due. The
 * response is `sequence-numbers`, an array of long in request order. All the
 * messages commit together or not at all.
 *
 * cancel: `sequence-numbers` (array of long) deletes those scheduled messages
 * that are not due yet; others are ignored. 200 without a body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_message.h"
#include "ent_alloc.h"
#include "ent_message_rules.h"
#include "ent_props.h"
#include "ent_session.h"
#include "ent_send.h"
#include "ent_txn.h"
#include "mgmt_internal.h"
#include "store_fate.h"

/* Refuses what a queue's dead-letter subqueue or a send-disabled queue cannot take. */
static bool refuse_target(mgmt_req *r)
{
    if (r->lk->subqueue) {
        mgmt_respond_error(r, SB_ERR_NOT_ALLOWED, "Messages cannot be scheduled in the dead-letter queue of '%s'.",
                           r->lk->entity.name);
        return true;
    }
    if (!ent_entity_status_allows_send(r->lk->entity.status)) {
        mgmt_respond_error(r, SB_ERR_ENTITY_DISABLED, "The messaging entity '%s' is %s; sending is not allowed.",
                           r->lk->entity.name, r->lk->entity.status);
        return true;
    }
    return false;
}

static void on_scheduled(void *ctx, sb_status st, const int64_t *seqs, size_t n)
{
    mgmt_req *r = ctx;
    if (st != SB_OK) {
        mgmt_respond_error(r, st, "The emulator's store could not schedule the messages; retry.");
        return;
    }
    mgmt_reply_array(r, "sequence-numbers", PN_LONG, seqs, n);
}

/* The string under the cursor (truncated to buflen - 1), or NULL if it is none. */
static const char *value_string(pn_data_t *d, char *buf, size_t buflen)
{
    pn_type_t t = pn_data_type(d);
    if (t != PN_STRING && t != PN_SYMBOL)
        return NULL;
    pn_bytes_t s = t == PN_STRING ? pn_data_get_string(d) : pn_data_get_symbol(d);
    size_t n = s.size < buflen - 1 ? s.size : buflen - 1;
    memcpy(buf, s.start, n);
    buf[n] = 0;
    return buf;
}

typedef struct sched_entry {
    pn_bytes_t message;
    char message_id[ENT_MESSAGE_ID_SIZE];
    char session_id[ENT_SESSION_ID_SIZE];
    bool has_message_id, has_session_id;
    amqp_msg parsed;
} sched_entry;

/* Reads item i of the `messages` list (the cursor is on it). */
static int read_entry(pn_data_t *d, size_t i, sched_entry *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (pn_data_type(d) != PN_MAP) {
        snprintf(err, errlen, "The request body's 'messages' must be a list of maps; item %zu is %s.", i,
                 mgmt_type_name(pn_data_type(d)));
        return -1;
    }
    pn_data_enter(d);
    bool have_message = false;
    while (pn_data_next(d)) {
        pn_type_t kt = pn_data_type(d);
        pn_bytes_t k = kt == PN_STRING ? pn_data_get_string(d) : kt == PN_SYMBOL ? pn_data_get_symbol(d) : pn_bytes(0, "");
        if (!pn_data_next(d))
            break;
#define KEY_IS(s) (k.size == strlen(s) && !memcmp(k.start, s, k.size))
        if (KEY_IS("message")) {
            if (pn_data_type(d) != PN_BINARY) {
                snprintf(err, errlen, "The request body's 'messages' item %zu: 'message' must be binary, not %s.", i,
                         mgmt_type_name(pn_data_type(d)));
                pn_data_exit(d);
                return -1;
            }
            e->message = pn_data_get_binary(d);
            have_message = true;
        } else if (KEY_IS("message-id")) {
            e->has_message_id = value_string(d, e->message_id, sizeof e->message_id) != NULL;
        } else if (KEY_IS("session-id")) {
            e->has_session_id = value_string(d, e->session_id, sizeof e->session_id) != NULL;
        }
#undef KEY_IS
    }
    pn_data_exit(d);
    if (!have_message) {
        snprintf(err, errlen, "The request body's 'messages' item %zu has no 'message' (expected binary).", i);
        return -1;
    }
    return 0;
}

/* A schedule on its way to the store, and where it goes. */
typedef struct txn_schedule {
    mgmt_req *r;
    int64_t target;
} txn_schedule;

/* Outside a transaction: committed now, and counted (GET /metrics). */
static void on_scheduled_counted(void *ctx, sb_status st, const int64_t *seqs, size_t n)
{
    txn_schedule *x = ctx;
    mgmt_req *r = x->r;
    if (st == SB_OK) {
        broker_count(r->lk->conn->srv->broker, x->target, BROKER_EV_IN, n);
        broker_count(r->lk->conn->srv->broker, x->target, BROKER_EV_SCHEDULED, n);
    }
    ent_free(x);
    on_scheduled(r, st, seqs, n);
}

/* ---- in a transaction: stored now, invisible, scheduled at the commit ---- */

static void on_scheduled_in_txn(void *ctx, sb_status st, const int64_t *seqs, size_t n)
{
    txn_schedule *x = ctx;
    mgmt_req *r = x->r;
    int64_t target = x->target;
    ent_free(x);
    if (st == SB_OK && !amqp_txn_alive(r->lk->conn, r->txn))
        mgmt_respond_error(r, SB_ERR_NOT_FOUND, "The transaction ended while the messages were scheduled.");
    else if (st == SB_OK && store_txn_activate(amqp_txn_work(r->txn), target, seqs, n))
        mgmt_respond_error(r, SB_ERR_INTERNAL, "out of memory");
    else {
        if (st == SB_OK) { /* counted when the transaction commits */
            broker_counts_add(amqp_txn_tally(r->txn), target, BROKER_EV_IN, n);
            broker_counts_add(amqp_txn_tally(r->txn), target, BROKER_EV_SCHEDULED, n);
        }
        on_scheduled(r, st, seqs, n);
    }
}

static void schedule_in_txn(mgmt_req *r, int64_t target, store_new_message *msgs, size_t n)
{
    char err[256];
    sb_status st = SB_OK;
    for (size_t i = 0; i < n && st == SB_OK; i++)
        st = amqp_txn_admit_op(r->txn, err, sizeof err);
    txn_schedule *x = st == SB_OK ? ent_malloc(sizeof *x) : NULL;
    if (!x) {
        mgmt_respond_error(r, st == SB_OK ? SB_ERR_INTERNAL : st, "%s", st == SB_OK ? "out of memory" : err);
        return;
    }
    for (size_t i = 0; i < n; i++)
        msgs[i].state = ENT_TXN_PENDING_STATE;
    x->r = r;
    x->target = target;
    /* the sweep deletes them if the transaction never ends (its emulator stopped) */
    store_schedule_pending(r->lk->conn->srv->store, target, msgs, n, r->now_ms + 2 * ENT_TXN_TIMEOUT_MS,
                           on_scheduled_in_txn, x);
}

void mgmt_schedule(mgmt_req *r)
{
    char err[512];
    if (refuse_target(r))
        return;
    pn_data_t *d = r->body;
    size_t count;
    if (mgmt_arg_sequence(d, "messages", "a list of maps", "messages", &count, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    sched_entry *entries = ent_calloc(count, sizeof *entries);
    store_new_message *msgs = ent_calloc(count, sizeof *msgs);
    if (!entries || !msgs) {
        ent_free(entries);
        ent_free(msgs);
        mgmt_respond_error(r, SB_ERR_INTERNAL, "out of memory");
        return;
    }
    size_t n = 0;
    sb_status st = SB_OK;
    uint32_t max = r->lk->conn->srv->settings->max_message_size;
    const ent_entity *ent = &r->lk->entity;
    const ent_route *route = &r->lk->route;
    bool diverted = ent_send_diverts(route, ent->id);
    while (n < count && pn_data_next(d)) {
        sched_entry *e = &entries[n];
        char why[256];
        if (read_entry(d, n, e, err, sizeof err)) {
            st = SB_ERR_ARGUMENT;
            break;
        }
        if (e->message.size > max) {
            snprintf(err, sizeof err, "The message of %zu bytes exceeds the maximum message size of %u bytes.",
                     e->message.size, max);
            st = SB_ERR_MESSAGE_SIZE_EXCEEDED;
            break;
        }
        if (amqp_msg_parse((const uint8_t *)e->message.start, e->message.size, &e->parsed, why, sizeof why)) {
            snprintf(err, sizeof err, "The request body's 'messages' item %zu: %s.", n, why);
            st = SB_ERR_ARGUMENT;
            break;
        }
        const amqp_msg *m = &e->parsed;
        if ((st = ent_message_ids_check(m->message_id_chars, m->session_id_chars, why, sizeof why)) != SB_OK) {
            snprintf(err, sizeof err, "The request body's 'messages' item %zu: %s", n, why);
            break;
        }
        store_new_message *out = &msgs[n];
        /* the fate of a send (entities/ent_send.h), as a link's transfer gets:
         * a ForwardTo chain sends to its end, whose DefaultMessageTimeToLive caps
         * the TTL; Service Bus enqueues a scheduled message at its time, which is
         * its EnqueuedTimeUtc, and its TTL runs from then */
        ent_send_fate fate = ent_send_decide(route, m->ttl_ms, m->scheduled_enqueue_ms, r->now_ms);
        if (diverted)
            ent_send_forward_failed(&fate); /* the end refuses sends: dead-lettered here (no schedule) */
        out->bytes = (const uint8_t *)e->message.start;
        out->len = e->message.size;
        out->message_id = m->has_message_id ? m->message_id : e->has_message_id ? e->message_id : NULL;
        out->session_id = m->has_session_id ? m->session_id : e->has_session_id ? e->session_id : NULL;
        if ((st = ent_session_send_check(route->send_target_requires_session, ent->name, out->session_id != NULL,
                                         err, sizeof err)) != SB_OK)
            break;
        out->now_ms = r->now_ms;
        store_fate_apply(out, &fate);
        n++;
    }
    pn_data_exit(d);
    if (st != SB_OK) {
        ent_free(entries);
        ent_free(msgs);
        mgmt_respond_error(r, st, "%s", err);
        return;
    }
    int64_t target = diverted ? ent->id : route->send_target_id;
    mgmt_hold(r);
    txn_schedule *x = r->txn ? NULL : ent_malloc(sizeof *x);
    if (r->txn)
        schedule_in_txn(r, target, msgs, n);
    else if (!x)
        on_scheduled(r, SB_ERR_INTERNAL, NULL, 0);
    else {
        *x = (txn_schedule){r, target};
        store_schedule(r->lk->conn->srv->store, target, msgs, n, r->now_ms, on_scheduled_counted,
                       x); /* copies the bytes */
    }
    ent_free(entries);
    ent_free(msgs);
}

static void on_cancelled(void *ctx, sb_status st)
{
    mgmt_req *r = ctx;
    if (st != SB_OK)
        mgmt_respond_error(r, st, "The emulator's store could not cancel the scheduled messages; retry.");
    else
        mgmt_send(r, mgmt_response(r, SB_OK));
}

void mgmt_cancel_scheduled(mgmt_req *r)
{
    char err[256];
    int64_t *seqs;
    size_t n;
    if (r->lk->subqueue) {
        mgmt_respond_error(r, SB_ERR_NOT_ALLOWED, "The dead-letter queue of '%s' holds no scheduled messages.",
                           r->lk->entity.name);
        return;
    }
    if (mgmt_arg_long_array(r->body, "sequence-numbers", &seqs, &n, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    mgmt_hold(r);
    store_cancel_scheduled(r->lk->conn->srv->store, r->lk->entity.id, seqs, n, r->now_ms, on_cancelled, r);
    ent_free(seqs);
}
