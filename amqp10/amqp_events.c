/* Which handler takes which event of a link: the attach (link_attach.c),
 * credit from a receiver (link_sender.c), a transfer to an entity
 * (link_receiver.c), a disposition of ours (link_sender.c), a request to
 * $cbs or $management, a transaction's control; and what a link's or a
 * connection's end lets go (sessions, transactions). The connection
 * (amqp_conn.c, below every handler) reaches these only through the table
 * at the end, which the server hands it. */
#include <proton/connection.h>
#include <proton/delivery.h>
#include <proton/event.h>
#include <proton/link.h>
#include <stdio.h>
#include <stdlib.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_log.h"

/* A message that outgrew --max-message-size while it arrived: its bytes are
 * dropped as they come (holding them would cost its size in memory, and keep
 * the session's window shut for every other link), and once its last frame is
 * in, the link is closed with amqp:link:message-size-exceeded. Closing before
 * that would leave Proton 0.37 answering the remaining frames with a flow for
 * an unmapped handle, which clients treat as a protocol error. */
static void discard_oversized(amqp_conn *c, amqp_link *lk, pn_delivery_t *d)
{
    pn_link_t *l = lk->pn;
    uint32_t max = c->srv->settings->max_message_size;
    if (!lk->discarding) {
        lk->discarding = true;
        LOG_INFO("conn %llu: link '%s': a message over %u bytes (--max-message-size) is being dropped",
                 (unsigned long long)c->id, pn_link_name(l), max);
    }
    char sink[AMQP_DISCARD_CHUNK];
    while (pn_link_recv(l, sink, sizeof sink) > 0) {
    }
    if (pn_delivery_partial(d) && !pn_delivery_aborted(d))
        return;
    pn_delivery_settle(d);
    lk->discarding = false;
    char desc[256];
    snprintf(desc, sizeof desc,
             "The message exceeds the maximum message size of %u bytes (--max-message-size); the link is closed.",
             max);
    amqp_count_refusal(c->srv, SB_ERR_MESSAGE_SIZE_EXCEEDED);
    amqp_link_refuse(l, sb_status_condition(SB_ERR_MESSAGE_SIZE_EXCEEDED), desc);
}

static void on_delivery(amqp_conn *c, pn_delivery_t *d)
{
    pn_link_t *l = pn_delivery_link(d);
    amqp_link *lk = amqp_link_of(l);
    if (!lk || lk->closed)
        return;
    if (pn_link_is_sender(l)) {
        if (lk->role == LINK_ENTITY_OUT && pn_delivery_updated(d))
            amqp_link_on_disposition(lk, d);
        return;
    }
    if (!pn_delivery_readable(d))
        return;
    if (lk->discarding || (lk->role == LINK_ENTITY_IN && pn_delivery_partial(d) &&
                           pn_delivery_pending(d) > c->srv->settings->max_message_size)) {
        discard_oversized(c, lk, d);
        return;
    }
    if (pn_delivery_partial(d))
        return;
    if (pn_delivery_aborted(d)) {
        pn_delivery_settle(d);
        return;
    }
    switch (lk->role) {
    case LINK_ENTITY_IN:
        amqp_link_on_transfer(lk, d);
        break;
    case LINK_COORDINATOR:
        amqp_txn_on_control(lk, d);
        break;
    case LINK_CBS_REQUESTS:
    case LINK_MGMT_REQUESTS: {
        size_t len = pn_delivery_pending(d);
        char *buf = ent_malloc(len ? len : 1);
        ssize_t got = buf ? pn_link_recv(l, buf, len) : -1;
        pn_link_advance(l);
        if (got >= 0) {
            if (lk->role == LINK_CBS_REQUESTS)
                amqp_cbs_on_request(lk, d, buf, (size_t)got);
            else
                amqp_mgmt_on_request(lk, d, buf, (size_t)got);
        } else {
            /* the request cannot be read, so it cannot be answered: rather than
             * leave the client waiting for a response, end the request link */
            pn_delivery_settle(d);
            amqp_link_detach_error(lk, SB_ERR_INTERNAL, "The emulator ran out of memory reading the request.");
        }
        ent_free(buf);
        break;
    }
    default:
        break;
    }
    amqp_link_top_up(lk);
}

static void link_event(amqp_conn *c, pn_event_t *e)
{
    switch (pn_event_type(e)) {
    case PN_LINK_REMOTE_OPEN:
        amqp_link_on_remote_open(c, pn_event_link(e));
        break;
    case PN_LINK_FLOW: {
        amqp_link *lk = amqp_link_of(pn_event_link(e));
        if (lk && lk->role == LINK_ENTITY_OUT)
            amqp_link_pump(lk);
        break;
    }
    case PN_DELIVERY:
        on_delivery(c, pn_event_delivery(e));
        break;
    default:
        break;
    }
}

static void link_closed(amqp_link *lk)
{
    amqp_claim_turn_forget(lk); /* a closed link never claims: out of the line before it is freed */
    amqp_session_let_go(lk);
    if (lk->role == LINK_COORDINATOR)
        amqp_txn_coordinator_closed(lk);
}

static void conn_closed(amqp_conn *c)
{
    for (amqp_link *lk = c->links; lk; lk = lk->next) {
        amqp_claim_turn_forget(lk); /* freed with the connection, or never pumped again (no socket) */
        amqp_session_let_go(lk);
    }
    amqp_txn_free_all(c);
}

/* Receivers that held back a claim for the socket claim again. */
static void output_drained(amqp_conn *c)
{
    for (amqp_link *lk = c->links; lk; lk = lk->next)
        if (lk->waiting_output) {
            lk->waiting_output = false;
            amqp_link_pump(lk);
        }
}

const amqp_conn_events amqp_events = {link_event, link_closed, conn_closed, output_drained, amqp_fault_connect};
