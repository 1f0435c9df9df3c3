/* A peek-lock session receiver's first messages, locked with its session in
 * one statement (link_session.c, store_session_lock_claim): the SDKs give
 * credit only once the attach is answered, so they wait here for it, then
 * go out as a claim's would (link_sender.c pumps them). What the first credit does not
 * cover, and all of them if it has not come within AMQP_SESSION_HELD_MAX_MS,
 * go back to the store with their DeliveryCount as before, and the link's
 * claims take them again, in order. A session switch so costs a statement
 * and a round trip through the store less: 1,000 sessions of 20 taken eight
 * at once, median of twelve rounds, 44,606 -> 48,736 msg/s. */
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"

/* They wait here for the client's first credit: copies, since the claim's
 * rows go with its answer (one allocation: the messages, then their bytes
 * and texts). Not handed to Proton ahead of the credit: Proton 0.37 writes
 * no detach for a sender link while it holds deliveries it could not send
 * (pni_process_link_teardown), so a lapsed session lock could not end the
 * link. Owned by the link. */
struct amqp_held {
    size_t n;
    bool parks;        /* the claim took fewer than it asked: the session had no more */
    int64_t since_ms;  /* wall clock */
    store_claimed msgs[];
};

static size_t text_size(const char *t) { return t ? strlen(t) + 1 : 0; }

static const char *put_text(char **at, const char *t)
{
    if (!t)
        return NULL;
    size_t n = strlen(t) + 1;
    char *copy = memcpy(*at, t, n);
    *at += n;
    return copy;
}

static struct amqp_held *hold(const store_claimed *msgs, size_t n, bool parks)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += msgs[i].len + text_size(msgs[i].message_id) + text_size(msgs[i].dead_letter_reason) +
                 text_size(msgs[i].dead_letter_description) + text_size(msgs[i].dead_letter_source);
    struct amqp_held *h = ent_malloc(sizeof *h + n * sizeof *msgs + bytes);
    if (!h)
        return NULL;
    *h = (struct amqp_held){.n = n, .parks = parks, .since_ms = ent_clock_wall_ms()};
    char *at = (char *)&h->msgs[n];
    for (size_t i = 0; i < n; i++) {
        store_claimed *m = &h->msgs[i];
        *m = msgs[i];
        m->bytes = memcpy(at, msgs[i].bytes, msgs[i].len);
        at += msgs[i].len;
        m->message_id = put_text(&at, msgs[i].message_id);
        m->dead_letter_reason = put_text(&at, msgs[i].dead_letter_reason);
        m->dead_letter_description = put_text(&at, msgs[i].dead_letter_description);
        m->dead_letter_source = put_text(&at, msgs[i].dead_letter_source);
    }
    return h;
}

/* Gives back the held messages from the k-th on: unlocked, their
 * DeliveryCount as before (a release), for the link's later claims. */
static void give_back(amqp_link *lk, size_t k)
{
    struct amqp_held *h = lk->held;
    if (k < h->n && lk->claim_from > h->msgs[k].sequence_number)
        lk->claim_from = h->msgs[k].sequence_number; /* its next claim takes them again, in order */
    for (size_t i = k; i < h->n; i++)
        amqp_release_for_others(lk->conn->srv, lk->entity.namespace_id, lk->entity.id, h->msgs[i].lock_token);
    lk->held = NULL;
    ent_free(h);
}

bool amqp_link_deliver_held(amqp_link *lk, int credit)
{
    struct amqp_held *h = lk->held;
    lk->conn->session_first_credit = credit;
    if (lk->conn->srv->faults->n) {
        give_back(lk, 0); /* fault rules act on claims (amqp_fault_receive): its claims take them */
        return false;
    }
    size_t k = (size_t)credit < h->n ? (size_t)credit : h->n;
    for (size_t i = 0; i < k; i++)
        amqp_link_deliver(lk, &h->msgs[i]);
    broker_count(lk->conn->srv->broker, lk->entity.id, BROKER_EV_OUT, k); /* GET /metrics */
    bool parks = h->parks && k == h->n;
    give_back(lk, k);
    if (!parks)
        return k == (size_t)credit;
    lk->parked = true;
    if (pn_link_get_drain(lk->pn))
        pn_link_drained(lk->pn);
    return true;
}

void amqp_link_held_tick(amqp_link *lk)
{
    if (ent_clock_wall_ms() - lk->held->since_ms >= AMQP_SESSION_HELD_MAX_MS)
        give_back(lk, 0);
}

bool amqp_link_take_first(amqp_link *lk, const store_claimed *msgs, size_t n, int asked)
{
    bool rewound = lk->rewound; /* while the lock was in the store */
    lk->rewound = false;
    lk->session_unsettled += (int64_t)n; /* locked under its session until settled (on_settled) */
    if (!n) { /* the session has none to give yet: woken when messages come */
        lk->parked = true;
        if (pn_link_get_drain(lk->pn))
            pn_link_drained(lk->pn);
        return false;
    }
    if (!(lk->held = hold(msgs, n, (int)n < asked))) {
        /* out of memory: they go back, and its claims take them once the credit comes */
        for (size_t i = 0; i < n; i++)
            amqp_release_for_others(lk->conn->srv, lk->entity.namespace_id, lk->entity.id, msgs[i].lock_token);
        return true;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += msgs[i].len;
    lk->msg_bytes = bytes / n > 0 ? bytes / n : 1;
    if (!rewound)
        lk->claim_from = msgs[n - 1].sequence_number + 1;
    return true;
}
