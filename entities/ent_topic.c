/* See ent_topic.h. */
#include "ent_topic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_dead_letter.h"
#include "ent_message_rules.h"
#include "ent_props.h"

static ent_topic_copy *push(ent_topic_copies *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        ent_topic_copy *v = ent_realloc(l->v, cap * sizeof *v);
        if (!v)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    ent_topic_copy *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    return c;
}

/* The copies one subscription takes; -1 when out of memory. */
static int route_one(const ent_cache *c, const ent_entity *sub, const ent_filter_msg *msg, ent_topic_copies *out)
{
    size_t nrules;
    const ent_filter_rule *rules = ent_cache_rules(c, sub, &nrules);
    size_t first = out->n;
    const char *plain = NULL; /* the first rule without an action that matched */
    for (size_t i = 0; i < nrules; i++) {
        ent_filter_error err = {0};
        ent_filter_result r = ent_filter_eval(rules[i].filter, msg, &err);
        if (r == ENT_FILTER_ERROR) {
            /* one failing rule decides for the whole subscription: dead letter or nothing */
            out->n = first;
            char desc[sizeof ((ent_topic_copy *)0)->error];
            if (!ent_topic_rule_failed(sub, rules[i].name, err.message, desc, sizeof desc))
                return 0;
            ent_topic_copy *d = push(out);
            if (!d)
                return -1;
            d->subscription = sub;
            d->matched = rules[i].name;
            d->dead_letter = true;
            memcpy(d->error, desc, sizeof d->error);
            return 0;
        }
        if (r != ENT_FILTER_TRUE)
            continue;
        if (!rules[i].action) {
            if (!plain)
                plain = rules[i].name;
            continue;
        }
        ent_topic_copy *a = push(out);
        if (!a)
            return -1;
        a->subscription = sub;
        a->rule = &rules[i];
        a->matched = rules[i].name;
    }
    if (plain) {
        ent_topic_copy *p = push(out);
        if (!p)
            return -1;
        p->subscription = sub;
        p->matched = plain;
    }
    return 0;
}

int ent_topic_route(const ent_cache *c, const ent_entity *topic, const ent_filter_msg *msg, ent_topic_copies *out)
{
    size_t nsubs;
    const ent_entity *const *subs = ent_cache_subscriptions(c, topic, &nsubs);
    for (size_t i = 0; i < nsubs; i++) {
        if (!strcasecmp(subs[i]->status, "Disabled"))
            continue;
        if (route_one(c, subs[i], msg, out))
            return -1;
    }
    return 0;
}

void ent_topic_copies_free(ent_topic_copies *l)
{
    ent_free(l->v);
    memset(l, 0, sizeof *l);
}

int64_t ent_topic_copy_ttl_ms(int64_t message_ttl_ms, const ent_entity *topic, const ent_entity *subscription)
{
    return ent_effective_ttl_ms(ent_effective_ttl_ms(message_ttl_ms, topic->default_ttl_ms),
                                subscription->default_ttl_ms);
}

const ent_entity *ent_topic_copy_target(const ent_cache *c, const ent_entity *sub, const char **reason,
                                        const char **desc)
{
    bool exceeded;
    const ent_entity *end = ent_cache_send_target(c, sub, &exceeded);
    *reason = *desc = NULL;
    if (exceeded) {
        *reason = ENT_DLQ_REASON_HOPS;
        *desc = ENT_DLQ_DESC_HOPS;
        return sub;
    }
    if (end->id == sub->topic_id)
        return sub;
    if (end != sub && ent_forward_diverts(end->status)) {
        *reason = ENT_DLQ_REASON_FORWARD;
        *desc = ENT_DLQ_DESC_FORWARD;
        return sub;
    }
    return end;
}

bool ent_topic_rule_failed(const ent_entity *sub, const char *rule, const char *message, char *desc, size_t n)
{
    if (!sub->dead_lettering_on_filter_exceptions)
        return false;
    snprintf(desc, n, "rule '%s': %s", rule, message);
    return true;
}

ent_copy_fate ent_topic_copy_decide(const ent_cache *c, const ent_entity *topic, const ent_entity *sub,
                                    int64_t message_ttl_ms, int64_t available_ms, const char *rule_error)
{
    ent_copy_fate f = {0};
    f.target = sub;
    if (rule_error) {
        f.dead_letter_reason = ENT_DLQ_REASON_FILTER;
        f.dead_letter_description = rule_error;
    } else {
        f.target = ent_topic_copy_target(c, sub, &f.dead_letter_reason, &f.dead_letter_description);
    }
    f.dead_letter = f.dead_letter_reason != NULL;
    f.ttl_ms = ent_topic_copy_ttl_ms(message_ttl_ms, topic, sub);
    if (f.target != sub) {
        /* the chain's end keeps it under its own rules: its default caps the TTL too */
        f.forwarded = true;
        f.ttl_ms = ent_effective_ttl_ms(f.ttl_ms, f.target->default_ttl_ms);
        f.rests_in_topic = f.target->kind == ENT_KIND_TOPIC;
    }
    f.expires_ms = ent_expires_at_ms(available_ms, f.ttl_ms);
    return f;
}

bool ent_topic_copy_loggable(const ent_entity *sub, const ent_copy_fate *f, int state, bool own_body, int slot,
                             bool was_dead_lettered)
{
    return state == 0 && !own_body && slot == 0 && !f->forwarded && !f->dead_letter && !sub->requires_session &&
           !was_dead_lettered;
}

bool ent_topic_reads_log(const ent_entity *e, int subqueue)
{
    return e->kind == ENT_KIND_SUBSCRIPTION && subqueue == 0 && !e->requires_session;
}
