/* Messages a client sends to an entity: decode (a plain message or a batch of
 * whole messages), give each the fate entities/ent_send.h decides (TTL cap,
 * schedule, dead letter), hand them to the store (or the broker, for a
 * topic), and accept the delivery only once its transaction committed. */
#include <proton/disposition.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "amqp_message.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_props.h"
#include "ent_message_rules.h"
#include "ent_send.h"
#include "store_fate.h"

static void take_transfer(amqp_link *lk, pn_delivery_t *d, uint8_t *buf, ssize_t got);

/* What a send does to its target, counted once it committed (GET /metrics):
 * one tally per delivery, made as it is handed to the store. The reason is a
 * static text of entities/ (a send's dead letters all have one cause). */
typedef struct send_tally {
    int64_t target;
    uint64_t n, scheduled, dead;
    const char *reason;
} send_tally;

static send_tally tally_of(int64_t target, const store_new_message *msgs, size_t n)
{
    send_tally t = {target, n, 0, 0, NULL};
    for (size_t i = 0; i < n; i++) {
        t.scheduled += store_fate_is_scheduled(&msgs[i]);
        if (msgs[i].subqueue) {
            t.dead++;
            t.reason = msgs[i].dead_letter_reason;
        }
    }
    return t;
}

/* Into the broker's counters (committed), or a transaction's tally (added at its commit). */
static void count_sent(broker *b, broker_counts *txn_tally, const send_tally *t)
{
    if (txn_tally) {
        broker_counts_add(txn_tally, t->target, BROKER_EV_IN, t->n);
        broker_counts_add(txn_tally, t->target, BROKER_EV_SCHEDULED, t->scheduled);
        broker_counts_add_dead_letters(txn_tally, t->target, t->reason, t->dead);
        return;
    }
    broker_count(b, t->target, BROKER_EV_IN, t->n);
    broker_count(b, t->target, BROKER_EV_SCHEDULED, t->scheduled);
    broker_count_dead_letters(b, t->target, t->reason, t->dead);
}

/* A delivery waiting for its commit; freed by on_sent. A forwarded send keeps
 * its messages (msgs point into buf): if the chain's end has no room, they are
 * dead-lettered in the entity the client sent to instead. */
typedef struct pending_send {
    amqp_link *lk;
    pn_delivery_t *d;
    send_tally tally;
    uint8_t *buf;            /* forwarded sends only, else NULL */
    store_new_message *msgs; /* forwarded sends only */
    amqp_msg *parsed;        /* forwarded sends only: the ids msgs point to */
    size_t n;
} pending_send;

static void divert(store_new_message *msgs, size_t n);
static void reject_now(amqp_link *lk, pn_delivery_t *d, sb_status st, const char *description);
static void submit(amqp_link *lk, pn_delivery_t *d, int64_t target, uint8_t *buf, store_new_message *msgs,
                   amqp_msg *parsed, size_t n);

static void on_sent(void *ctx, sb_status st)
{
    pending_send *ps = ctx;
    amqp_conn *c = ps->lk->conn;
    char desc[STORE_LAST_ERROR_MAX + 256];
    if (st == SB_ERR_QUOTA_EXCEEDED && ps->msgs) {
        /* the ForwardTo end is full: ForwardingFailed in the source, same delivery */
        divert(ps->msgs, ps->n);
        submit(ps->lk, ps->d, ps->lk->entity.id, ps->buf, ps->msgs, ps->parsed, ps->n);
        amqp_link_drop(ps->lk);
        ent_free(ps);
        return;
    }
    if (st == SB_OK) {
        /* receivers are woken once per commit, by its NOTIFY (store.c), not per message */
        pn_delivery_update(ps->d, PN_ACCEPTED);
        count_sent(c->srv->broker, NULL, &ps->tally);
    } else {
        if (st == SB_ERR_QUOTA_EXCEEDED)
            snprintf(desc, sizeof desc,
                     "The maximum entity size has been reached or exceeded for '%s' (MaxSizeInMegabytes); "
                     "receive or purge messages to make room.",
                     ps->lk->entity.name);
        else if (st == SB_ERR_NOT_FOUND)
            snprintf(desc, sizeof desc, "The messaging entity '%s' could not be found (it was deleted).",
                     ps->lk->entity.name);
        else if (st == SB_ERR_SERVER_BUSY)
            snprintf(desc, sizeof desc, "The emulator's database cannot take the message now (%s); retry.",
                     store_last_error(c->srv->store)[0] ? store_last_error(c->srv->store) : "reconnecting");
        else
            snprintf(desc, sizeof desc, "The emulator's store could not commit the message; retry.");
        LOG_INFO("conn %llu: send to '%s' failed: %s", (unsigned long long)c->id, ps->lk->entity.name, desc);
        amqp_delivery_reject(ps->d, st, desc);
    }
    pn_delivery_settle(ps->d);
    if (ps->lk->starved)
        amqp_link_top_up(ps->lk);
    amqp_conn_pump(c);
    amqp_link_drop(ps->lk);
    ent_free(ps->buf);
    ent_free(ps->msgs);
    ent_free(ps->parsed);
    ent_free(ps);
}

/* Hands messages to the store for target. Takes buf, msgs and parsed (what
 * msgs point into): kept with the delivery when the send is forwarded (target
 * is not the link's entity), freed at once otherwise (the store copies). */
static void submit(amqp_link *lk, pn_delivery_t *d, int64_t target, uint8_t *buf, store_new_message *msgs,
                   amqp_msg *parsed, size_t n)
{
    pending_send *ps = ent_calloc(1, sizeof *ps);
    if (!ps) {
        amqp_delivery_reject(d, SB_ERR_INTERNAL, "out of memory");
        pn_delivery_settle(d);
        ent_free(buf);
        ent_free(msgs);
        ent_free(parsed);
        return;
    }
    ps->lk = lk;
    ps->d = d;
    ps->tally = tally_of(target, msgs, n);
    bool keep = target != lk->entity.id;
    if (keep) {
        ps->buf = buf;
        ps->msgs = msgs;
        ps->parsed = parsed;
        ps->n = n;
    }
    amqp_link_hold(lk);
    amqp_server *srv = lk->conn->srv;
    if (target == lk->route.send_target_id && lk->route.send_target_kind == ENT_KIND_TOPIC) {
        broker_publish(srv->broker, target, msgs, parsed, n, NULL, on_sent, ps);
    } else {
        store_send(srv->store, target, msgs, n, on_sent, ps);
    }
    if (!keep) {
        ent_free(buf);
        ent_free(msgs);
        ent_free(parsed);
    }
}

/* A send that joins a transaction: added to its work (copied) and answered
 * at once with transactional-state; the store sees it at the commit. */
static void send_in_txn(amqp_link *lk, pn_delivery_t *d, amqp_txn *txn, int64_t target,
                        const store_new_message *msgs, const amqp_msg *parsed, size_t n)
{
    amqp_server *srv = lk->conn->srv;
    int rc;
    if (target == lk->route.send_target_id && lk->route.send_target_kind == ENT_KIND_TOPIC) {
        rc = broker_publish_txn(srv->broker, target, msgs, parsed, n, amqp_txn_work(txn), amqp_txn_tally(txn));
    } else {
        rc = store_txn_send(amqp_txn_work(txn), target, msgs, n);
    }
    if (rc) {
        reject_now(lk, d, SB_ERR_INTERNAL, "The send could not join the transaction (out of memory).");
    } else {
        send_tally t = tally_of(target, msgs, n);
        count_sent(srv->broker, amqp_txn_tally(txn), &t);
        amqp_txn_answer(txn, d);
    }
}

/* What Service Bus does with a message its ForwardTo end will not take. */
static void divert(store_new_message *msgs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        store_fate_forward_failed(&msgs[i]); /* entities/ent_send.h decides */
}

static void reject_now(amqp_link *lk, pn_delivery_t *d, sb_status st, const char *description)
{
    LOG_INFO("conn %llu: send to '%s' rejected: %s", (unsigned long long)lk->conn->id, lk->entity.name, description);
    amqp_delivery_reject(d, st, description);
    pn_delivery_settle(d);
}

/* Fills one store message from a parsed AMQP message and its fate. */
static void stamp(const amqp_link *lk, const amqp_msg *m, const uint8_t *bytes, size_t len, int64_t now,
                  store_new_message *out)
{
    ent_send_fate f = ent_send_decide(&lk->route, m->ttl_ms, m->scheduled_enqueue_ms, now);
    out->bytes = bytes;
    out->len = len;
    out->message_id = m->has_message_id ? m->message_id : NULL;
    out->session_id = m->has_session_id ? m->session_id : NULL;
    out->now_ms = now;
    store_fate_apply(out, &f);
}

void amqp_link_on_transfer(amqp_link *lk, pn_delivery_t *d)
{
    pn_link_t *l = lk->pn;
    size_t len = pn_delivery_pending(d);
    uint8_t *buf = ent_malloc(len ? len : 1);
    ssize_t got = buf ? pn_link_recv(l, (char *)buf, len) : -1;
    pn_link_advance(l);
    if (got >= 0 && lk->conn->srv->faults->n && amqp_fault_send(lk, d, buf, (size_t)got, take_transfer))
        return; /* a fault rule has it (and buf): take_transfer goes on, if it may */
    take_transfer(lk, d, buf, got);
}

static void take_transfer(amqp_link *lk, pn_delivery_t *d, uint8_t *buf, ssize_t got)
{
    char desc[512];
    uint32_t max = lk->conn->srv->settings->max_message_size;
    if (got < 0) {
        reject_now(lk, d, SB_ERR_INTERNAL, "out of memory reading the message");
    } else if ((size_t)got > max) {
        snprintf(desc, sizeof desc, "The message of %zd bytes exceeds the maximum message size of %u bytes.", got, max);
        reject_now(lk, d, SB_ERR_MESSAGE_SIZE_EXCEEDED, desc);
    } else if (!ent_entity_status_allows_send(lk->entity.status)) {
        snprintf(desc, sizeof desc, "The messaging entity '%s' is %s; sending is not allowed.", lk->entity.name,
                 lk->entity.status);
        reject_now(lk, d, SB_ERR_ENTITY_DISABLED, desc);
    } else {
        amqp_msg m;
        if (amqp_msg_parse(buf, (size_t)got, &m, desc, sizeof desc)) {
            reject_now(lk, d, SB_ERR_ARGUMENT, desc);
            ent_free(buf);
            return;
        }
        int64_t now = ent_clock_now_ms();
        size_t n = 0;
        store_new_message *msgs;
        amqp_msg *parsed;
        if (amqp_msg_is_batch(&m)) {
            const uint8_t *cur = NULL;
            amqp_span inner;
            size_t count = 0;
            while (amqp_msg_batch_next(&m, &cur, &inner))
                count++;
            msgs = ent_calloc(count, sizeof *msgs);
            parsed = ent_calloc(count, sizeof *parsed);
            cur = NULL;
            while (msgs && parsed && amqp_msg_batch_next(&m, &cur, &inner)) {
                amqp_msg_parse(inner.p, inner.len, &parsed[n], NULL, 0); /* checked by amqp_msg_is_batch */
                stamp(lk, &parsed[n], inner.p, inner.len, now, &msgs[n]);
                n++;
            }
        } else {
            msgs = ent_calloc(1, sizeof *msgs);
            parsed = ent_malloc(sizeof *parsed); /* on the heap: a forwarded send keeps it */
            if (msgs && parsed) {
                *parsed = m;
                stamp(lk, parsed, buf, (size_t)got, now, &msgs[n++]);
            }
        }
        if (!msgs || !parsed) {
            reject_now(lk, d, SB_ERR_INTERNAL, "out of memory");
        } else {
            const ent_route *route = &lk->route;
            for (size_t i = 0; i < n; i++) {
                sb_status st = ent_message_ids_check(parsed[i].message_id_chars, parsed[i].session_id_chars, desc,
                                                     sizeof desc);
                if (st == SB_OK)
                    st = ent_session_send_check(route->send_target_requires_session, lk->entity.name,
                                                msgs[i].session_id != NULL, desc, sizeof desc);
                if (st != SB_OK) {
                    reject_now(lk, d, st, desc);
                    ent_free(msgs);
                    ent_free(parsed);
                    ent_free(buf);
                    return;
                }
            }
            /* a ForwardTo chain sends to its end, unless that end refuses sends */
            int64_t target = route->send_target_id;
            if (ent_send_diverts(route, lk->entity.id)) {
                divert(msgs, n);
                target = lk->entity.id;
            }
            amqp_txn *txn;
            if (amqp_txn_of(lk->conn, d, &txn)) {
                /* part of a transaction: stored only when it commits */
                if (txn && amqp_txn_admit(txn, d, (int)n) == SB_OK)
                    send_in_txn(lk, d, txn, target, msgs, parsed, n);
            } else {
                submit(lk, d, target, buf, msgs, parsed, n); /* takes buf, msgs and parsed */
                return;
            }
        }
        ent_free(msgs);
        ent_free(parsed);
    }
    ent_free(buf);
}
