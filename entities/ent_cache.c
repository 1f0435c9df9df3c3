/* See ent_cache.h. Two sorted index arrays over one array of entities: by
 * namespace and lower-cased name, and by id, searched with bsearch. Entities change rarely
 * and are replaced whole, so sorting on replace is the whole maintenance.
 * A topic's subscriptions and a subscription's rules are runs of two more
 * arrays, found through the entity's slot. */
#include "ent_cache.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_dead_letter.h"
#include "ent_log.h"

/* Where an entity's subscriptions (topics) or rules (subscriptions) are. */
typedef struct slot {
    size_t first, n;
} slot;

struct ent_cache {
    ent_entity *items;
    size_t n;
    size_t *by_name; /* indexes into items, sorted by case-insensitive name */
    size_t *by_id;   /* sorted by id */
    slot *slots;     /* one per item */
    const ent_entity **subs; /* every subscription, grouped by topic, by name */
    ent_filter_rule *rules;  /* every compiled rule, grouped by subscription */
    size_t nrules;
    uint64_t generation;
};

/* qsort has no context argument: the array being sorted, for the comparators. */
static const ent_entity *sorting;

/* By namespace, then by name in any letter case. */
static int cmp_ns_name(int32_t ns_a, const char *a, int32_t ns_b, const char *b)
{
    if (ns_a != ns_b)
        return ns_a < ns_b ? -1 : 1;
    return strcasecmp(a, b);
}

static int cmp_name(const void *a, const void *b)
{
    const ent_entity *x = &sorting[*(const size_t *)a], *y = &sorting[*(const size_t *)b];
    return cmp_ns_name(x->namespace_id, x->name, y->namespace_id, y->name);
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = sorting[*(const size_t *)a].id, y = sorting[*(const size_t *)b].id;
    return x < y ? -1 : x > y;
}

static int cmp_sub(const void *a, const void *b)
{
    const ent_entity *x = *(const ent_entity *const *)a, *y = *(const ent_entity *const *)b;
    if (x->topic_id != y->topic_id)
        return x->topic_id < y->topic_id ? -1 : 1;
    return strcasecmp(x->name, y->name);
}

/* Rules sort by subscription, then keep their given order (created order). */
static const ent_rule_def *sorting_rules;

static int cmp_rule(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int64_t x = sorting_rules[i].subscription_id, y = sorting_rules[j].subscription_id;
    if (x != y)
        return x < y ? -1 : 1;
    return i < j ? -1 : i > j;
}

ent_cache *ent_cache_new(void) { return ent_calloc(1, sizeof(ent_cache)); }

static void free_content(ent_cache *c)
{
    for (size_t i = 0; i < c->nrules; i++)
        ent_filter_rule_free(&c->rules[i]);
    ent_free(c->rules);
    ent_free(c->subs);
    ent_free(c->slots);
    ent_free(c->items);
    ent_free(c->by_name);
    ent_free(c->by_id);
}

void ent_cache_free(ent_cache *c)
{
    if (!c)
        return;
    free_content(c);
    ent_free(c);
}

/* Compiles one rule. A rule the database holds but the language refuses
 * (only plain SQL can put one there) matches nothing: routing on half of it
 * would deliver what the user did not ask for. -1 when out of memory. */
static int compile_rule(const ent_rule_def *d, ent_filter_rule *out)
{
    ent_filter *f = NULL;
    ent_filter_action *a = NULL;
    ent_filter_error err = {0};
    int bad = 0;
    const char *type = d->filter_type ? d->filter_type : "";
    if (!strcmp(type, "True"))
        f = ent_filter_new_true();
    else if (!strcmp(type, "False"))
        f = ent_filter_new_false();
    else if (!strcmp(type, "Sql") && d->sql_expression)
        bad = ent_filter_parse(d->sql_expression, strlen(d->sql_expression), d->filter_params, d->nfilter_params, &f,
                               &err);
    else if (!strcmp(type, "Correlation"))
        bad = ent_filter_new_correlation(&d->correlation, &f, &err);
    else {
        bad = 1;
        snprintf(err.message, sizeof err.message, "filter type '%s' without its filter", type);
    }
    if (!bad && d->action_expression && *d->action_expression)
        bad = ent_filter_action_parse(d->action_expression, strlen(d->action_expression), d->action_params,
                                      d->naction_params, &a, &err);
    if (bad) {
        if (err.kind == ENT_FILTER_ERR_NOMEM)
            return -1;
        LOG_WARN("entities: rule '%s' of subscription %lld cannot be used (%s); it matches nothing",
                 d->name ? d->name : "", (long long)d->subscription_id, err.message);
        ent_filter_free(f);
        ent_filter_action_free(a);
        a = NULL;
        f = ent_filter_new_false();
    }
    if (!f) {
        ent_filter_action_free(a);
        return -1;
    }
    if (ent_filter_rule_init(out, d->name ? d->name : "", f, a, &err)) {
        /* a name too long for a rule: keep the rule, cut the name */
        char name[sizeof out->name];
        snprintf(name, sizeof name, "%.*s", ENT_RULE_NAME_MAX, d->name ? d->name : "?");
        f = ent_filter_new_false();
        if (!f || ent_filter_rule_init(out, *name ? name : "?", f, NULL, &err))
            return -1;
    }
    return 0;
}

int ent_cache_replace(ent_cache *c, const ent_entity *list, size_t n, const ent_rule_def *rules, size_t nrules)
{
    ent_cache next = {0};
    size_t alloc = n ? n : 1;
    next.items = ent_malloc(alloc * sizeof *next.items);
    next.by_name = ent_malloc(alloc * sizeof *next.by_name);
    next.by_id = ent_malloc(alloc * sizeof *next.by_id);
    next.slots = ent_calloc(alloc, sizeof *next.slots);
    next.subs = ent_malloc(alloc * sizeof *next.subs);
    next.rules = ent_calloc(nrules ? nrules : 1, sizeof *next.rules);
    size_t *order = ent_malloc((nrules ? nrules : 1) * sizeof *order);
    if (!next.items || !next.by_name || !next.by_id || !next.slots || !next.subs || !next.rules || !order)
        goto oom;
    if (n)
        memcpy(next.items, list, n * sizeof *next.items);
    next.n = n;
    for (size_t i = 0; i < n; i++)
        if (!next.items[i].namespace_id)
            next.items[i].namespace_id = ENT_NAMESPACE_DEFAULT_ID;
    for (size_t i = 0; i < n; i++)
        next.by_name[i] = next.by_id[i] = i;
    sorting = next.items;
    qsort(next.by_name, n, sizeof *next.by_name, cmp_name);
    qsort(next.by_id, n, sizeof *next.by_id, cmp_id);
    sorting = NULL;

    /* subscriptions, as runs per topic */
    size_t nsubs = 0;
    for (size_t i = 0; i < n; i++)
        if (next.items[i].kind == ENT_KIND_SUBSCRIPTION)
            next.subs[nsubs++] = &next.items[i];
    qsort(next.subs, nsubs, sizeof *next.subs, cmp_sub);
    for (size_t i = 0; i < nsubs;) {
        size_t j = i;
        while (j < nsubs && next.subs[j]->topic_id == next.subs[i]->topic_id)
            j++;
        const ent_entity *t = ent_cache_get(&next, next.subs[i]->topic_id);
        if (t)
            next.slots[t - next.items] = (slot){i, j - i};
        i = j;
    }

    /* rules, compiled, as runs per subscription */
    for (size_t i = 0; i < nrules; i++)
        order[i] = i;
    sorting_rules = rules;
    qsort(order, nrules, sizeof *order, cmp_rule);
    sorting_rules = NULL;
    for (size_t k = 0; k < nrules; k++) {
        const ent_rule_def *d = &rules[order[k]];
        const ent_entity *s = ent_cache_get(&next, d->subscription_id);
        if (!s || s->kind != ENT_KIND_SUBSCRIPTION)
            continue;
        if (compile_rule(d, &next.rules[next.nrules]))
            goto oom;
        slot *sl = &next.slots[s - next.items];
        if (!sl->n)
            sl->first = next.nrules;
        sl->n++;
        next.nrules++;
    }
    ent_free(order);
    free_content(c);
    next.generation = c->generation + 1;
    *c = next;
    return 0;
oom:
    ent_free(order);
    free_content(&next);
    return -1;
}

size_t ent_cache_count(const ent_cache *c) { return c->n; }
uint64_t ent_cache_generation(const ent_cache *c) { return c->generation; }

const ent_entity *ent_cache_find(const ent_cache *c, int32_t ns, const char *name)
{
    if (!ns)
        ns = ENT_NAMESPACE_DEFAULT_ID;
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const ent_entity *at = &c->items[c->by_name[mid]];
        int r = cmp_ns_name(at->namespace_id, at->name, ns, name);
        if (!r)
            return &c->items[c->by_name[mid]];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const ent_entity *ent_cache_get(const ent_cache *c, int64_t id)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v = c->items[c->by_id[mid]].id;
        if (v == id)
            return &c->items[c->by_id[mid]];
        if (v < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const ent_entity *ent_cache_send_target(const ent_cache *c, const ent_entity *e, bool *hops_exceeded)
{
    /* Service Bus counts hops: after ENT_MAX_FORWARD_HOPS the message stays
     * where it is and its next forward is refused (MaxTransferHopCountExceeded). */
    const ent_entity *at = e;
    *hops_exceeded = false;
    for (int hops = 0; at->forward_to[0]; hops++) {
        const ent_entity *next = ent_cache_find(c, e->namespace_id, at->forward_to);
        if (!next || next->kind == ENT_KIND_SUBSCRIPTION)
            break; /* nothing is sent to a subscription but through its topic */
        if (hops == ENT_MAX_FORWARD_HOPS) {
            *hops_exceeded = true;
            break;
        }
        at = next;
    }
    return at;
}

const ent_entity *ent_cache_dead_letter_target(const ent_cache *c, const ent_entity *e)
{
    const ent_entity *t = e->forward_dead_lettered_to[0] ? ent_cache_find(c, e->namespace_id, e->forward_dead_lettered_to) : NULL;
    return t && t->id != e->id ? t : NULL;
}

/* The slot of e, which may be a copy held by a link: found by id. */
static const slot *slot_of(const ent_cache *c, const ent_entity *e, ent_kind kind)
{
    const ent_entity *at = ent_cache_get(c, e->id);
    return at && at->kind == kind ? &c->slots[at - c->items] : NULL;
}

const ent_entity *const *ent_cache_subscriptions(const ent_cache *c, const ent_entity *topic, size_t *n)
{
    const slot *sl = slot_of(c, topic, ENT_KIND_TOPIC);
    *n = sl ? sl->n : 0;
    return *n ? &c->subs[sl->first] : NULL;
}

const ent_filter_rule *ent_cache_rules(const ent_cache *c, const ent_entity *subscription, size_t *n)
{
    const slot *sl = slot_of(c, subscription, ENT_KIND_SUBSCRIPTION);
    *n = sl ? sl->n : 0;
    return *n ? &c->rules[sl->first] : NULL;
}

const ent_entity *ent_cache_at(const ent_cache *c, size_t i) { return i < c->n ? &c->items[i] : NULL; }

void ent_cache_route(const ent_cache *c, const ent_entity *e, ent_route *out)
{
    bool exceeded;
    const ent_entity *t = ent_cache_send_target(c, e, &exceeded);
    const ent_entity *dl = ent_cache_dead_letter_target(c, e);
    memset(out, 0, sizeof *out);
    out->send_target_id = t->id;
    out->send_target_kind = t->kind;
    out->send_target_default_ttl_ms = t->default_ttl_ms;
    out->send_target_requires_session = t->requires_session;
    memcpy(out->send_target_status, t->status, sizeof out->send_target_status);
    out->forward_hops_exceeded = exceeded;
    out->dead_letter_target_id = dl ? dl->id : 0;
}
