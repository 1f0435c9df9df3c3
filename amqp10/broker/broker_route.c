/* Routing messages into a topic's subscriptions: each message becomes the
 * copies its topic's subscriptions take (entities/ent_topic.h decides which,
 * and each copy's fate; rule actions are applied here, on the AMQP bytes),
 * and every copy of a delivery goes to the store as rows of one publish
 * (sql/store_topic.h), so the delivery is accepted only once every copy is
 * committed. Its callers: a publish (broker_publish.c) and the topic pump.
 *
 * A copy whose subscription forwards (ForwardTo) goes straight to the end of
 * the chain; when that end is a topic, the copy rests there and the topic
 * pump routes it (broker_topic_pump.c): the callback names those topics. A scheduled message rests in the topic
 * until it is due, and is routed then, by the rules of that moment. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "amqp_filter_msg.h"
#include "amqp_rule_action.h"
#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_session.h"
#include "store_txn.h"
#include "ent_log.h"
#include "ent_story.h"
#include "ent_topic.h"
#include "store_story.h"
#include "store_topic.h"

/* What one publish builds; freed once the store has copied the rows. */
typedef struct build {
    store_copy *rows;
    size_t n, cap;
    uint8_t **owned; /* bodies changed by rule actions, dead-letter descriptions */
    size_t nowned, owned_cap;
    ent_topic_copies copies;
    int64_t pump[BROKER_ROUTE_RESTING_MAX]; /* topics that copies rest in: routed after the commit */
    size_t npump;
    broker_counts tally; /* where the copies go, counted once they are committed */
    /* copies may go to the topic's log (STORE_COPY_LOGGED): not inside a
     * transaction (its rows wait in another state until the discharge) */
    bool may_log;
} build;

typedef struct publish_ctx {
    broker *b;
    broker_routed_cb cb;
    void *ctx;
    int64_t pump[BROKER_ROUTE_RESTING_MAX];
    size_t npump;
    broker_counts tally; /* the build's */
} publish_ctx;

static store_copy *row(build *b)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        store_copy *v = ent_realloc(b->rows, cap * sizeof *v);
        if (!v)
            return NULL;
        b->rows = v;
        b->cap = cap;
    }
    store_copy *r = &b->rows[b->n++];
    memset(r, 0, sizeof *r);
    return r;
}

/* A row of the message described by base that carries no body and is no
 * copy (the story's not-routed rows, a message no subscription takes). */
static store_copy *bare_row(build *b, const store_new_message *base)
{
    store_copy *r = row(b);
    if (!r)
        return NULL;
    r->m = *base;
    r->m.bytes = NULL;
    r->m.len = 0;
    return r;
}

static int own(build *b, uint8_t *p)
{
    if (b->nowned == b->owned_cap) {
        size_t cap = b->owned_cap ? b->owned_cap * 2 : 8;
        uint8_t **v = ent_realloc(b->owned, cap * sizeof *v);
        if (!v)
            return -1;
        b->owned = v;
        b->owned_cap = cap;
    }
    b->owned[b->nowned++] = p;
    return 0;
}

static void build_free(build *b)
{
    for (size_t i = 0; i < b->nowned; i++)
        ent_free(b->owned[i]);
    ent_free(b->owned);
    ent_free(b->rows);
    ent_topic_copies_free(&b->copies);
    broker_counts_free(&b->tally);
}

static void note_pump(build *b, int64_t topic)
{
    for (size_t i = 0; i < b->npump; i++)
        if (b->pump[i] == topic)
            return;
    if (b->npump < sizeof b->pump / sizeof b->pump[0])
        b->pump[b->npump++] = topic; /* more: the periodic pump finds them */
}

/* Whether copy r, logged, would agree with the message's copies logged
 * before it (rows from first_row): one log entry keeps one expiry. */
static bool agrees_with_logged(const build *b, size_t first_row, const store_copy *r)
{
    for (size_t i = first_row; i < b->n; i++)
        if (&b->rows[i] != r && b->rows[i].slot == STORE_COPY_LOGGED)
            return b->rows[i].m.ttl_ms == r->m.ttl_ms && b->rows[i].m.expires_ms == r->m.expires_ms;
    return true;
}

/* Appends one copy of the message described by base (bytes NULL: share the
 * message's body), where ent_topic_copy_decide says. first_row: the message's
 * first row, which carries its width. rule_error: a rule of sub failed with
 * this text (ent_topic_rule_failed), and the copy is a dead letter in sub.
 * own_body: a rule action changed the copy's body. A copy that may be one
 * entry of the topic's log with the message's other copies gets slot
 * STORE_COPY_LOGGED (ent_topic_copy_loggable). */
static store_copy *add_copy(build *b, const ent_cache *cache, const ent_entity *topic, const ent_entity *sub,
                            const store_new_message *base, const amqp_msg *m, size_t first_row,
                            const char *rule_error, const char *matched, bool own_body)
{
    if (rule_error) {
        /* a copy the build owns: the text is on the caller's stack or in the
         * copies list, which the next message of the delivery reuses */
        char *owned = ent_strdup(rule_error);
        if (!owned || own(b, (uint8_t *)owned)) {
            ent_free(owned);
            return NULL;
        }
        rule_error = owned;
    }
    ent_copy_fate f = ent_topic_copy_decide(cache, topic, sub, m->ttl_ms, base->available_ms, rule_error);
    store_copy *r = row(b);
    if (!r)
        return NULL;
    r->m = *base;
    r->m.bytes = NULL;
    r->target = f.target->id;
    r->story_rule = matched; /* in the cache, which outlives the build */
    if (f.forwarded) {
        r->story_via = sub->id;
        r->slot = -1; /* the forward target's own sequence numbers */
        if (f.rests_in_topic)
            note_pump(b, f.target->id);
    } else {
        /* its index among this message's copies in the same subscription */
        for (size_t i = first_row; i + 1 < b->n; i++)
            if (b->rows[i].target == f.target->id && (b->rows[i].slot >= 0 || b->rows[i].slot == STORE_COPY_LOGGED))
                r->slot++;
    }
    r->m.ttl_ms = f.ttl_ms;
    r->m.expires_ms = f.expires_ms;
    bool was_dead_lettered = base->dead_letter_reason || base->dead_letter_description || base->dead_letter_source;
    if (b->may_log && ent_topic_copy_loggable(sub, &f, base->state, own_body, r->slot, was_dead_lettered) &&
        agrees_with_logged(b, first_row, r))
        r->slot = STORE_COPY_LOGGED;
    broker_counts_add(&b->tally, f.target->id, BROKER_EV_IN, 1);
    if (f.dead_letter) {
        r->m.subqueue = 1;
        r->m.dead_letter_reason = f.dead_letter_reason;
        r->m.dead_letter_description = f.dead_letter_description;
        broker_counts_add_dead_letters(&b->tally, f.target->id, f.dead_letter_reason, 1);
    }
    return r;
}

/* For the story: a row (STORE_COPY_NOT_ROUTED) for each subscription whose
 * filters did not match the message just routed (b->copies), naming its
 * rules. A subscription that is Disabled takes nothing whatever its filters
 * say, and is not told. -1 when out of memory. */
static int add_not_routed(build *b, const ent_cache *cache, const ent_entity *topic, const store_new_message *base)
{
    size_t nsubs;
    const ent_entity *const *subs = ent_cache_subscriptions(cache, topic, &nsubs);
    for (size_t i = 0; i < nsubs; i++) {
        bool took = !strcasecmp(subs[i]->status, "Disabled");
        for (size_t k = 0; k < b->copies.n && !took; k++)
            took = b->copies.v[k].subscription == subs[i];
        if (took)
            continue;
        size_t nrules;
        const ent_filter_rule *rules = ent_cache_rules(cache, subs[i], &nrules);
        char *names = ent_malloc(ENT_STORY_RULES_NOTE_SIZE);
        if (!names || own(b, (uint8_t *)names)) {
            ent_free(names);
            return -1;
        }
        ent_story_rule_names(rules, nrules, names, ENT_STORY_RULES_NOTE_SIZE);
        store_copy *r = bare_row(b, base);
        if (!r)
            return -1;
        r->slot = STORE_COPY_NOT_ROUTED;
        r->target = subs[i]->id;
        r->story_rule = names;
    }
    return 0;
}

/* The rows of one message. -1 when out of memory. */
static int add_message(build *b, const ent_cache *cache, const ent_entity *topic, const store_new_message *base,
                       const amqp_msg *m, const uint8_t *consume)
{
    size_t first_row = b->n;
    if (base->state == 2) {
        /* scheduled: it rests in the topic until due, then is routed */
        store_copy *r = row(b);
        if (!r)
            return -1;
        r->m = *base;
        r->target = topic->id;
        r->width = 1;
        r->size = base->len;
        return 0;
    }
    amqp_filter_view view;
    amqp_filter_view_init(&view, base->bytes, base->len, m, base->available_ms);
    ent_filter_msg fm = amqp_filter_view_msg(&view);
    b->copies.n = 0;
    if (ent_topic_route(cache, topic, &fm, &b->copies))
        return -1;
    /* the copies as sent (and dead letters) first: they share the first row's body */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < b->copies.n; i++) {
            const ent_topic_copy *cp = &b->copies.v[i];
            if ((pass == 0) != (cp->rule == NULL))
                continue;
            if (!ent_session_holds(cp->subscription, m->has_session_id))
                continue;
            const uint8_t *bytes = NULL;
            size_t len = 0;
            const char *dl_desc = cp->dead_letter ? cp->error : NULL;
            char err_text[sizeof cp->error];
            if (cp->rule) {
                uint8_t *out = NULL;
                ent_filter_error err = {0};
                if (amqp_rule_apply(base->bytes, base->len, m, base->available_ms, cp->rule->action,
                                    cp->rule->name, &out, &len, &err)) {
                    if (err.kind == ENT_FILTER_ERR_NOMEM)
                        return -1;
                    if (!ent_topic_rule_failed(cp->subscription, cp->rule->name, err.message, err_text,
                                               sizeof err_text))
                        continue;
                    dl_desc = err_text;
                } else if (own(b, out)) {
                    ent_free(out);
                    return -1;
                } else {
                    bytes = out;
                }
            }
            store_copy *r =
                add_copy(b, cache, topic, cp->subscription, base, m, first_row, dl_desc, cp->matched, bytes != NULL);
            if (!r)
                return -1;
            r->size = base->len;
            if (bytes) {
                r->m.bytes = bytes;
                r->m.len = len;
                r->size = len;
            }
        }
    }
    if (b->n == first_row) {
        /* no subscription takes it: accepted and dropped (still a duplicate next time) */
        if (!bare_row(b, base))
            return -1;
    }
    if (store_story_on() && add_not_routed(b, cache, topic, base))
        return -1;
    /* the first row carries the message: its body, width and consume token */
    store_copy *f = &b->rows[first_row];
    if (!f->m.bytes) {
        f->m.bytes = base->bytes;
        f->m.len = base->len;
    }
    int width = 1;
    for (size_t i = first_row; i < b->n; i++)
        if (b->rows[i].slot + 1 > width)
            width = b->rows[i].slot + 1;
    f->width = width;
    if (consume) {
        f->consume = true;
        memcpy(f->consume_token, consume, 16);
    }
    return 0;
}

int broker_publish_txn(broker *br, int64_t topic_id, const store_new_message *msgs, const amqp_msg *parsed, size_t n,
                       store_txn *txn, broker_counts *tally)
{
    build b = {0};
    const ent_entity *t = br->cache ? ent_cache_get(br->cache, topic_id) : NULL;
    int rc = t ? 0 : -1;
    for (size_t i = 0; i < n && !rc; i++)
        rc = add_message(&b, br->cache, t, &msgs[i], &parsed[i], NULL);
    rc = rc ? rc : store_txn_publish(txn, t->id, b.rows, b.n); /* copies the rows */
    for (size_t i = 0; i < b.npump && !rc; i++)
        rc = store_txn_rest(txn, b.pump[i]); /* routed after the discharge commits */
    if (!rc && tally)
        broker_counts_merge(tally, &b.tally);
    build_free(&b);
    return rc;
}

static void on_published(void *ctx, sb_status st)
{
    publish_ctx *p = ctx;
    if (st == SB_OK)
        broker_count_tally(p->b, &p->tally);
    broker_counts_free(&p->tally);
    p->cb(p->ctx, st, p->pump, st == SB_OK ? p->npump : 0);
    ent_free(p);
}

void broker_route(broker *br, int64_t topic_id, const store_new_message *msgs, const amqp_msg *parsed, size_t n,
                  const uint8_t (*consume)[16], broker_routed_cb cb, void *ctx)
{
    build b = {.may_log = true};
    publish_ctx *p = ent_calloc(1, sizeof *p);
    const ent_entity *t = br->cache ? ent_cache_get(br->cache, topic_id) : NULL;
    int rc = p && t ? 0 : -1;
    for (size_t i = 0; i < n && !rc; i++)
        rc = add_message(&b, br->cache, t, &msgs[i], &parsed[i], consume ? consume[i] : NULL);
    if (rc) {
        build_free(&b);
        ent_free(p);
        cb(ctx, t ? SB_ERR_INTERNAL : SB_ERR_NOT_FOUND, NULL, 0);
        return;
    }
    p->b = br;
    p->cb = cb;
    p->ctx = ctx;
    memcpy(p->pump, b.pump, sizeof p->pump);
    p->npump = b.npump;
    p->tally = b.tally; /* moves to the callback */
    memset(&b.tally, 0, sizeof b.tally);
    store_publish(br->store, t->id, b.rows, b.n, on_published, p); /* copies the rows */
    build_free(&b);
}
