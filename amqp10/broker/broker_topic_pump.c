/* The topic pump: messages at rest in a topic are routed to its
 * subscriptions here. A message rests in a topic when it was scheduled (the
 * sweep activates it when due) or when the database put it there (a dead
 * letter forwarded to a topic, a copy forwarded into another topic). The
 * pump claims them under a lock like a receiver would, routes them with the
 * rules of this moment (broker_route), and the publish deletes them in the
 * same commit that stores their copies; a crash in between leaves the lock
 * to lapse and the message to the next pump.
 *
 * It runs when the sweep touched a topic, after a publish put copies at rest
 * in another topic, and for every topic every BROKER_TOPIC_PUMP_SWEEPS sweeps. */
#include <stdlib.h>
#include <string.h>

#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_message_rules.h"

/* One topic being routed; owned by the server's list until its publish ends. */
typedef struct topic_pump {
    struct topic_pump *next;
    broker *b;
    int64_t topic_id;
    bool again; /* asked for again while this round ran */
} topic_pump;

static void start(topic_pump *p);

static void finish(topic_pump *p, bool more)
{
    if (more || p->again) {
        p->again = false;
        start(p);
        return;
    }
    broker *b = p->b;
    for (topic_pump **at = &b->pumps; *at; at = &(*at)->next)
        if (*at == p) {
            *at = p->next;
            break;
        }
    ent_free(p);
}

typedef struct round {
    topic_pump *p;
    bool full; /* the claim took all it could: there may be more */
} round;

static void on_published(void *ctx, sb_status st, const int64_t *resting, size_t nresting)
{
    round *r = ctx;
    for (size_t i = 0; i < nresting; i++)
        broker_topic_pump(r->p->b, resting[i]); /* routed on into another topic */
    if (st != SB_OK)
        LOG_WARN("topic %lld: routing messages at rest failed (%s); they are routed again when their lock lapses",
                 (long long)r->p->topic_id, sb_status_name(st));
    topic_pump *p = r->p;
    bool more = st == SB_OK && r->full;
    ent_free(r);
    finish(p, more);
}

static void on_claimed(void *ctx, sb_status st, const store_claimed *msgs, size_t n)
{
    topic_pump *p = ctx;
    broker *b = p->b;
    const ent_entity *topic = b->cache ? ent_cache_get(b->cache, p->topic_id) : NULL;
    store_new_message *out = n ? ent_calloc(n, sizeof *out) : NULL;
    amqp_msg *parsed = n ? ent_calloc(n, sizeof *parsed) : NULL;
    uint8_t (*tokens)[16] = n ? ent_calloc(n, sizeof *tokens) : NULL;
    round *r = n ? ent_calloc(1, sizeof *r) : NULL;
    if (st != SB_OK || !n || !topic || !out || !parsed || !tokens || !r) {
        if (st != SB_OK)
            LOG_WARN("topic %lld: claiming messages at rest failed (%s)", (long long)p->topic_id, sb_status_name(st));
        ent_free(out);
        ent_free(parsed);
        ent_free(tokens);
        ent_free(r);
        finish(p, false);
        return;
    }
    int64_t now = ent_clock_now_ms_in(topic->namespace_id);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char err[200];
        if (amqp_msg_parse(msgs[i].bytes, msgs[i].len, &parsed[k], err, sizeof err)) {
            LOG_WARN("topic %lld: message %lld at rest cannot be read (%s); left where it is",
                     (long long)p->topic_id, (long long)msgs[i].sequence_number, err);
            continue;
        }
        store_new_message *m = &out[k];
        m->bytes = msgs[i].bytes;
        m->len = msgs[i].len;
        m->message_id = msgs[i].message_id;
        m->session_id = parsed[k].has_session_id ? parsed[k].session_id : NULL;
        m->now_ms = now;
        m->available_ms = now; /* enqueued in the subscriptions now */
        m->ttl_ms = -1;        /* each copy's TTL is decided from the message's own */
        /* a dead letter forwarded to this topic keeps why, and where, it was dead-lettered */
        m->dead_letter_reason = msgs[i].dead_letter_reason;
        m->dead_letter_description = msgs[i].dead_letter_description;
        m->dead_letter_source = msgs[i].dead_letter_source;
        memcpy(tokens[k], msgs[i].lock_token, 16);
        k++;
    }
    r->p = p;
    r->full = n >= BROKER_TOPIC_PUMP_MAX;
    broker_route(b, p->topic_id, out, parsed, k, (const uint8_t(*)[16])tokens, on_published, r);
    ent_free(out);
    ent_free(parsed);
    ent_free(tokens);
}

static void start(topic_pump *p)
{
    const ent_entity *topic = p->b->cache ? ent_cache_get(p->b->cache, p->topic_id) : NULL;
    int64_t now = ent_clock_now_ms_in(topic ? topic->namespace_id : 0);
    store_claim(p->b->store, p->topic_id, 0, false, STORE_CLAIM_LOCK, BROKER_TOPIC_PUMP_MAX, now,
                now + BROKER_TOPIC_PUMP_LOCK_MS, false, 0, NULL, on_claimed, p);
}

static void pump_one(broker *b, int64_t topic_id)
{
    for (topic_pump *p = b->pumps; p; p = p->next)
        if (p->topic_id == topic_id) {
            p->again = true;
            return;
        }
    topic_pump *p = ent_calloc(1, sizeof *p);
    if (!p)
        return; /* the periodic pump comes back to it */
    p->b = b;
    p->topic_id = topic_id;
    p->next = b->pumps;
    b->pumps = p;
    start(p);
}

void broker_topic_pump(broker *b, int64_t topic_id)
{
    if (!b->cache)
        return;
    if (topic_id) {
        const ent_entity *t = ent_cache_get(b->cache, topic_id);
        if (t && t->kind == ENT_KIND_TOPIC)
            pump_one(b, topic_id);
        return;
    }
    for (size_t i = 0; i < ent_cache_count(b->cache); i++) {
        const ent_entity *e = ent_cache_at(b->cache, i);
        if (e->kind == ENT_KIND_TOPIC)
            pump_one(b, e->id);
    }
}

void broker_topic_pumps_free(broker *b)
{
    /* the store failed every claim and publish in flight before this: nothing refers to them */
    while (b->pumps) {
        topic_pump *p = b->pumps;
        b->pumps = p->next;
        ent_free(p);
    }
}
