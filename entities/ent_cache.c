/* See ent_cache.h. Two sorted index arrays over one array of entities: by
 * lower-cased name and by id, searched with bsearch. Entities change rarely
 * and are replaced whole, so sorting on replace is the whole maintenance. */
#include "ent_cache.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_dead_letter.h"

struct ent_cache {
    ent_entity *items;
    size_t n;
    size_t *by_name; /* indexes into items, sorted by case-insensitive name */
    size_t *by_id;   /* sorted by id */
    uint64_t generation;
};

/* qsort has no context argument: the array being sorted, for the comparators. */
static const ent_entity *sorting;

static int cmp_name(const void *a, const void *b)
{
    return strcasecmp(sorting[*(const size_t *)a].name, sorting[*(const size_t *)b].name);
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = sorting[*(const size_t *)a].id, y = sorting[*(const size_t *)b].id;
    return x < y ? -1 : x > y;
}

ent_cache *ent_cache_new(void) { return calloc(1, sizeof(ent_cache)); }

void ent_cache_free(ent_cache *c)
{
    if (!c)
        return;
    free(c->items);
    free(c->by_name);
    free(c->by_id);
    free(c);
}

int ent_cache_replace(ent_cache *c, const ent_entity *list, size_t n)
{
    size_t alloc = n ? n : 1;
    ent_entity *items = malloc(alloc * sizeof *items);
    size_t *by_name = malloc(alloc * sizeof *by_name), *by_id = malloc(alloc * sizeof *by_id);
    if (!items || !by_name || !by_id) {
        free(items);
        free(by_name);
        free(by_id);
        return -1;
    }
    if (n)
        memcpy(items, list, n * sizeof *items);
    for (size_t i = 0; i < n; i++)
        by_name[i] = by_id[i] = i;
    sorting = items;
    qsort(by_name, n, sizeof *by_name, cmp_name);
    qsort(by_id, n, sizeof *by_id, cmp_id);
    sorting = NULL;
    free(c->items);
    free(c->by_name);
    free(c->by_id);
    c->items = items;
    c->by_name = by_name;
    c->by_id = by_id;
    c->n = n;
    c->generation++;
    return 0;
}

size_t ent_cache_count(const ent_cache *c) { return c->n; }
uint64_t ent_cache_generation(const ent_cache *c) { return c->generation; }

const ent_entity *ent_cache_find(const ent_cache *c, const char *name)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcasecmp(c->items[c->by_name[mid]].name, name);
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
        const ent_entity *next = ent_cache_find(c, at->forward_to);
        if (!next)
            break;
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
    const ent_entity *t = e->forward_dead_lettered_to[0] ? ent_cache_find(c, e->forward_dead_lettered_to) : NULL;
    return t && t->id != e->id ? t : NULL;
}

const ent_entity *ent_cache_at(const ent_cache *c, size_t i) { return i < c->n ? &c->items[i] : NULL; }

void ent_cache_route(const ent_cache *c, const ent_entity *e, ent_route *out)
{
    bool exceeded;
    const ent_entity *t = ent_cache_send_target(c, e, &exceeded);
    const ent_entity *dl = ent_cache_dead_letter_target(c, e);
    memset(out, 0, sizeof *out);
    out->send_target_id = t->id;
    out->send_target_default_ttl_ms = t->default_ttl_ms;
    memcpy(out->send_target_status, t->status, sizeof out->send_target_status);
    out->forward_hops_exceeded = exceeded;
    out->dead_letter_target_id = dl ? dl->id : 0;
}
