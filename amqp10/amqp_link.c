/* A link's verbs that every handler uses: answer an attach (accept or
 * refuse), end a link with an error, reject a delivery, top up a receiving
 * link's credit, and the error condition every one of them writes. Below
 * every handler: it calls nothing of theirs. */
#include <proton/codec.h>
#include <proton/delivery.h>
#include <proton/disposition.h>
#include <proton/terminus.h>
#include <stdint.h>
#include <string.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_log.h"

void amqp_condition_set(pn_condition_t *cond, const char *name, const char *description)
{
    pn_condition_set_name(cond, name);
    pn_condition_set_description(cond, description);
    pn_data_t *info = pn_condition_info(cond);
    if (pn_data_size(info) == 0)
        pn_data_put_map(info);
}

void amqp_link_refuse(pn_link_t *l, const char *condition, const char *description)
{
    /* null source and target, then a closing detach with the error (DOC-PG "Create message sender (error)") */
    pn_terminus_set_type(pn_link_source(l), PN_UNSPECIFIED);
    pn_terminus_set_type(pn_link_target(l), PN_UNSPECIFIED);
    pn_link_open(l);
    pn_condition_t *cond = pn_link_condition(l);
    amqp_condition_set(cond, condition, description);
    pn_link_close(l);
    amqp_link *lk = amqp_link_of(l);
    if (lk) {
        lk->closed = true;
        amqp_link_uncount(lk);
    }
}

void amqp_link_detach_error(amqp_link *lk, sb_status st, const char *description)
{
    LOG_INFO("conn %llu: link '%s' closed: %s", (unsigned long long)lk->conn->id, pn_link_name(lk->pn), description);
    amqp_count_refusal(lk->conn->srv, st);
    pn_condition_t *cond = pn_link_condition(lk->pn);
    amqp_condition_set(cond, sb_status_condition(st), description);
    pn_link_close(lk->pn);
    lk->closed = true;
    amqp_link_uncount(lk);
}

void amqp_delivery_reject(pn_delivery_t *d, sb_status st, const char *description)
{
    amqp_link *lk = amqp_link_of(pn_delivery_link(d));
    if (lk)
        amqp_count_refusal(lk->conn->srv, st);
    pn_condition_t *cond = pn_disposition_condition(pn_delivery_local(d));
    amqp_condition_set(cond, sb_status_condition(st), description);
    pn_delivery_update(d, PN_REJECTED);
}

#define MAX_BATCH_PROPERTY "com.microsoft:max-message-batch-size"
#define MAX_BATCH_PREMIUM (1024u * 1024u)

void amqp_link_accept(amqp_link *lk)
{
    pn_link_t *l = lk->pn;
    pn_terminus_copy(pn_link_source(l), pn_link_remote_source(l));
    pn_terminus_copy(pn_link_target(l), pn_link_remote_target(l));
    pn_link_set_snd_settle_mode(l, pn_link_remote_snd_settle_mode(l));
    pn_link_set_rcv_settle_mode(l, pn_link_remote_rcv_settle_mode(l));
    /* max-message-size is what this end of the link takes in (AMQP 1.0 2.7.3): our limit where
     * we receive (the SDKs' senders, $management and $cbs requests). Where we send, Service Bus
     * advertises no limit (2^64-1, as Event Hubs does), and go-amqp (the Go SDK) enforces the
     * peer's value on what it receives: a message at our limit plus its broker annotations, or
     * a peek answer carrying several messages, would be refused and the link closed. */
    pn_link_set_max_message_size(l, pn_link_is_receiver(l) ? lk->conn->srv->settings->max_message_size : UINT64_MAX);
    pn_data_t *props = pn_link_properties(l);
    pn_data_put_map(props);
    if (lk->role == LINK_ENTITY_IN) { /* a sender to a queue or topic, not $management, $cbs or a coordinator */
        /* Service Bus tells a sender its batch limit apart from max-message-size: 256 KB
         * Standard, 1 MB Premium, whatever larger messages an entity takes. azure-servicebus
         * 7.15 (and the .NET, JS, Go SDKs since 2026-04) size batches by it, and without it
         * assume 256 KB, which a smaller --max-message-size then refuses. sbemu takes a batch
         * up to --max-message-size; past 1 MB it says 1 MB, as Premium does. */
        uint64_t max = lk->conn->srv->settings->max_message_size;
        pn_data_enter(props);
        pn_data_put_symbol(props, pn_bytes(strlen(MAX_BATCH_PROPERTY), MAX_BATCH_PROPERTY));
        pn_data_put_long(props, (int64_t)(max < MAX_BATCH_PREMIUM ? max : MAX_BATCH_PREMIUM));
        pn_data_exit(props);
    }
    pn_link_open(l);
    lk->open = true;
    amqp_link_count(lk);
    if (pn_link_is_receiver(l))
        pn_link_flow(l, AMQP_INBOUND_CREDIT);
}

void amqp_link_top_up(amqp_link *lk)
{
    int credit = pn_link_credit(lk->pn);
    if (lk->closed || credit >= AMQP_INBOUND_CREDIT / 2)
        return;
    if (store_pending_bytes(lk->conn->srv->store) > AMQP_STORE_BACKLOG_MAX_BYTES) {
        lk->starved = true; /* topped up by on_sent once the store has caught up */
        return;
    }
    lk->starved = false;
    /* below 0 when the client sent past its credit, or a flow of its own set
     * a delivery-count Proton subtracts from it: grant the usual amount */
    pn_link_flow(lk->pn, AMQP_INBOUND_CREDIT - (credit < 0 ? 0 : credit));
}

/* ---- what follows giving messages back (a release, a session let go) ---- */

typedef struct released {
    amqp_server *srv;
    int64_t entity_id;
    bool session;       /* a session let go: its own messages, none below picked_seq */
    int64_t picked_seq; /* the message a next-available pick found it by (0: named) */
} released;

/* A session's messages are only ever claimed by a link that holds it, and
 * each such link starts from the first: letting one go moves no receiver's
 * claim position, only where the next pick starts (amqp_hint.h). */
static void on_released(void *ctx, sb_status st)
{
    released *r = ctx;
    if (st == SB_OK) {
        if (r->session)
            amqp_hint_lower(&r->srv->session_picks, r->entity_id, r->picked_seq);
        else
            broker_rewind(r->srv->broker, r->entity_id);
        broker_wake(r->srv->broker, r->entity_id);
    }
    ent_free(r);
}

static amqp_after_release after(amqp_server *srv, int64_t entity_id, bool session, int64_t picked_seq)
{
    released *r = ent_malloc(sizeof *r);
    if (r)
        *r = (released){srv, entity_id, session, picked_seq};
    return (amqp_after_release){r ? on_released : NULL, r};
}

amqp_after_release amqp_after_release_of(amqp_server *srv, int64_t entity_id)
{
    return after(srv, entity_id, false, 0);
}

amqp_after_release amqp_after_session_release_of(amqp_server *srv, int64_t entity_id, int64_t picked_seq)
{
    return after(srv, entity_id, true, picked_seq);
}
