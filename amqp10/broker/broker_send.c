/* The path of a client's send, shared by every front door (broker.h,
 * "sending"): a link's transfer (amqp10/link_receiver.c) and the dashboard's
 * send and resubmit (amqp10/http/http_dash_send.c). Each message gets its
 * fate from entities/ent_send.h (TTL cap, schedule, a ForwardTo chain too
 * long), its ids and session are checked, the send goes to the end of the
 * entity's ForwardTo chain (or becomes a ForwardingFailed dead letter of the
 * entity when that end refuses it: its status here, its size at the commit),
 * a topic routes it (broker_publish), and what committed is counted. */
#include <stdio.h>

#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_message_rules.h"
#include "ent_send.h"
#include "ent_session.h"
#include "store_fate.h"

void broker_send_stamp(const ent_route *route, const amqp_msg *m, const uint8_t *bytes, size_t len, int64_t now,
                       store_new_message *out)
{
    ent_send_fate f = ent_send_decide(route, m->ttl_ms, m->scheduled_enqueue_ms, now);
    out->bytes = bytes;
    out->len = len;
    out->message_id = m->has_message_id ? m->message_id : NULL;
    out->session_id = m->has_session_id ? m->session_id : NULL;
    out->now_ms = now;
    store_fate_apply(out, &f);
}

sb_status broker_send_check(const ent_route *route, const char *entity_name, const amqp_msg *m,
                            const store_new_message *stamped, char *desc, size_t desclen)
{
    sb_status st = ent_message_ids_check(m->message_id_chars, m->session_id_chars, desc, desclen);
    if (st == SB_OK)
        st = ent_session_send_check(route->send_target_requires_session, entity_name, stamped->session_id != NULL,
                                    desc, desclen);
    return st;
}

/* What Service Bus does with a message its ForwardTo end will not take. */
static void divert(store_new_message *msgs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        store_fate_forward_failed(&msgs[i]); /* entities/ent_send.h decides */
}

int64_t broker_send_target(const ent_route *route, int64_t entity_id, store_new_message *msgs, size_t n)
{
    if (!ent_send_diverts(route, entity_id))
        return route->send_target_id;
    divert(msgs, n);
    return entity_id;
}

/* What a send does to its target, counted once it committed (GET /metrics):
 * one tally per send. The reason is a static text of entities/ (a send's
 * dead letters all have one cause). */
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

void broker_send_tally(broker_counts *tally, int64_t target, const store_new_message *msgs, size_t n)
{
    send_tally t = tally_of(target, msgs, n);
    broker_counts_add(tally, t.target, BROKER_EV_IN, t.n);
    broker_counts_add(tally, t.target, BROKER_EV_SCHEDULED, t.scheduled);
    broker_counts_add_dead_letters(tally, t.target, t.reason, t.dead);
}

/* A send waiting for its commit; freed once its caller is answered. A
 * forwarded send keeps its messages (msgs point into buf and parsed): if the
 * chain's end has no room, they are dead-lettered in the entity instead. */
typedef struct pending_send {
    broker *b;
    int64_t entity_id;
    ent_route route;
    int64_t target;
    store_status_cb cb;
    void *ctx;
    send_tally tally;        /* what the commit does, counted once it committed */
    uint8_t *buf;            /* forwarded sends only, else NULL */
    store_new_message *msgs; /* forwarded sends only */
    amqp_msg *parsed;        /* forwarded sends only */
    size_t n;
} pending_send;

static void submit(pending_send *ps, uint8_t *buf, store_new_message *msgs, amqp_msg *parsed, size_t n);

static void pending_free(pending_send *ps)
{
    ent_free(ps->buf);
    ent_free(ps->msgs);
    ent_free(ps->parsed);
    ent_free(ps);
}

static void on_sent(void *ctx, sb_status st)
{
    pending_send *ps = ctx;
    if (st == SB_ERR_QUOTA_EXCEEDED && ps->msgs) {
        /* the ForwardTo end is full: ForwardingFailed in the source, same send */
        uint8_t *buf = ps->buf;
        store_new_message *msgs = ps->msgs;
        amqp_msg *parsed = ps->parsed;
        ps->buf = NULL, ps->msgs = NULL, ps->parsed = NULL;
        divert(msgs, ps->n);
        ps->target = ps->entity_id;
        submit(ps, buf, msgs, parsed, ps->n);
        return;
    }
    /* receivers are woken once per commit, by its NOTIFY (store.c), not per message */
    if (st == SB_OK) {
        broker_count(ps->b, ps->tally.target, BROKER_EV_IN, ps->tally.n);
        broker_count(ps->b, ps->tally.target, BROKER_EV_SCHEDULED, ps->tally.scheduled);
        broker_count_dead_letters(ps->b, ps->tally.target, ps->tally.reason, ps->tally.dead);
    }
    ps->cb(ps->ctx, st);
    pending_free(ps);
}

/* Hands the messages to the store for ps->target; takes buf, msgs and parsed
 * (kept for a forwarded send, freed at once otherwise: the store copies). */
static void submit(pending_send *ps, uint8_t *buf, store_new_message *msgs, amqp_msg *parsed, size_t n)
{
    ps->tally = tally_of(ps->target, msgs, n);
    bool keep = ps->target != ps->entity_id;
    if (keep) {
        ps->buf = buf;
        ps->msgs = msgs;
        ps->parsed = parsed;
        ps->n = n;
    }
    if (ps->target == ps->route.send_target_id && ps->route.send_target_kind == ENT_KIND_TOPIC)
        broker_publish(ps->b, ps->target, msgs, parsed, n, NULL, on_sent, ps);
    else
        store_send(ps->b->store, ps->target, msgs, n, on_sent, ps);
    if (!keep) {
        ent_free(buf);
        ent_free(msgs);
        ent_free(parsed);
    }
}

void broker_send_commit(broker *b, int64_t entity_id, const ent_route *route, int64_t target, uint8_t *buf,
                        store_new_message *msgs, amqp_msg *parsed, size_t n, store_status_cb cb, void *ctx)
{
    pending_send *ps = ent_calloc(1, sizeof *ps);
    if (!ps) {
        ent_free(buf);
        ent_free(msgs);
        ent_free(parsed);
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    *ps = (pending_send){.b = b, .entity_id = entity_id, .route = *route, .target = target, .cb = cb, .ctx = ctx};
    submit(ps, buf, msgs, parsed, n);
}
