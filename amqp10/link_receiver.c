/* Messages a client sends to an entity: decode (a plain message or a batch of
 * whole messages), then the broker's send path (broker.h, "sending": each
 * message's fate, TTL cap, schedule, dead letter, the ForwardTo chain, a
 * topic's routing), and accept the delivery only once its transaction
 * committed. */
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

static void take_transfer(amqp_link *lk, pn_delivery_t *d, uint8_t *buf, ssize_t got);

/* A delivery waiting for its commit (broker_send_commit); freed by on_sent. */
typedef struct pending_send {
    amqp_link *lk;
    pn_delivery_t *d;
} pending_send;

static void on_sent(void *ctx, sb_status st)
{
    pending_send *ps = ctx;
    amqp_conn *c = ps->lk->conn;
    char desc[STORE_LAST_ERROR_MAX + 256];
    if (st == SB_OK) {
        /* receivers are woken once per commit, by its NOTIFY (store.c), not per message */
        pn_delivery_update(ps->d, PN_ACCEPTED);
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
    ent_free(ps);
}

/* Hands messages to the broker for target (broker_send_commit takes buf,
 * msgs and parsed); the delivery is settled once they committed. */
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
    amqp_link_hold(lk);
    broker_send_commit(lk->conn->srv->broker, lk->entity.id, &lk->route, target, buf, msgs, parsed, n, on_sent, ps);
}

static void reject_now(amqp_link *lk, pn_delivery_t *d, sb_status st, const char *description)
{
    LOG_INFO("conn %llu: send to '%s' rejected: %s", (unsigned long long)lk->conn->id, lk->entity.name, description);
    amqp_delivery_reject(d, st, description);
    pn_delivery_settle(d);
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
        broker_send_tally(amqp_txn_tally(txn), target, msgs, n);
        amqp_txn_answer(txn, d);
    }
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
        int64_t now = ent_clock_now_ms_in(lk->entity.namespace_id);
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
                broker_send_stamp(&lk->route, &parsed[n], inner.p, inner.len, now, &msgs[n]);
                n++;
            }
        } else {
            msgs = ent_calloc(1, sizeof *msgs);
            parsed = ent_malloc(sizeof *parsed); /* on the heap: a forwarded send keeps it */
            if (msgs && parsed) {
                *parsed = m;
                broker_send_stamp(&lk->route, parsed, buf, (size_t)got, now, &msgs[n++]);
            }
        }
        if (!msgs || !parsed) {
            reject_now(lk, d, SB_ERR_INTERNAL, "out of memory");
        } else {
            const ent_route *route = &lk->route;
            for (size_t i = 0; i < n; i++) {
                sb_status st = broker_send_check(route, lk->entity.name, &parsed[i], &msgs[i], desc, sizeof desc);
                if (st != SB_OK) {
                    reject_now(lk, d, st, desc);
                    ent_free(msgs);
                    ent_free(parsed);
                    ent_free(buf);
                    return;
                }
            }
            /* a ForwardTo chain sends to its end, unless that end refuses sends */
            int64_t target = broker_send_target(route, lk->entity.id, msgs, n);
            broker_story_sent(msgs, parsed, n, lk->conn->id, pn_link_name(lk->pn), lk->entity.id, target);
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
