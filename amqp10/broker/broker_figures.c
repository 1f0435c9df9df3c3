/* See broker_figures.h: per-entity counters in an open-addressing table by
 * id (found per commit or settlement call, never per message), and the
 * names of what the front doors count. */
#include "broker_figures.h"

#include <stdbool.h>
#include <string.h>

#include "ent_alloc.h"

/* Slots a table starts with; it doubles when half full. */
#define COUNTS_INITIAL_CAP 16

static size_t slot_of(int64_t id, size_t cap)
{
    uint64_t h = (uint64_t)id * UINT64_C(0x9E3779B97F4A7C15); /* Fibonacci hashing: ids are sequential */
    return (size_t)(h >> 32) & (cap - 1);
}

static broker_entity_counts *find(const broker_counts *c, int64_t id)
{
    if (!c->cap)
        return NULL;
    for (size_t i = slot_of(id, c->cap);; i = (i + 1) & (c->cap - 1)) {
        if (c->slots[i].id == id)
            return &c->slots[i];
        if (!c->slots[i].id)
            return NULL;
    }
}

/* Puts e (whose reasons move along) into a table with room. */
static void put(broker_counts *c, const broker_entity_counts *e)
{
    size_t i = slot_of(e->id, c->cap);
    while (c->slots[i].id)
        i = (i + 1) & (c->cap - 1);
    c->slots[i] = *e;
    c->used++;
}

static int grow(broker_counts *c)
{
    size_t cap = c->cap ? c->cap * 2 : COUNTS_INITIAL_CAP;
    broker_entity_counts *slots = ent_calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    broker_counts old = *c;
    c->slots = slots;
    c->cap = cap;
    c->used = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].id)
            put(c, &old.slots[i]);
    ent_free(old.slots);
    return 0;
}

static broker_entity_counts *find_or_add(broker_counts *c, int64_t id)
{
    broker_entity_counts *e = find(c, id);
    if (e || !id)
        return e;
    if ((c->used + 1) * 2 > c->cap && grow(c))
        return NULL;
    put(c, &(broker_entity_counts){.id = id});
    return find(c, id);
}

void broker_counts_free(broker_counts *c)
{
    for (size_t i = 0; i < c->cap; i++)
        ent_free(c->slots[i].reasons);
    ent_free(c->slots);
    memset(c, 0, sizeof *c);
}

void broker_counts_add(broker_counts *c, int64_t entity, broker_event ev, uint64_t n)
{
    broker_entity_counts *e = n ? find_or_add(c, entity) : NULL;
    if (e)
        e->n[ev] += n;
}

/* The label a reason is counted under: its first BROKER_REASON_LABEL_MAX
 * bytes, cut where a UTF-8 character begins. */
static void label_of(const char *reason, char out[BROKER_REASON_LABEL_MAX + 1])
{
    if (!reason || !*reason)
        reason = BROKER_REASON_NONE;
    size_t n = strlen(reason);
    if (n > BROKER_REASON_LABEL_MAX) {
        n = BROKER_REASON_LABEL_MAX;
        while (n && ((unsigned char)reason[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(out, reason, n);
    out[n] = 0;
}

static broker_reason_count *find_reason(broker_entity_counts *e, const char *label)
{
    for (size_t i = 0; i < e->nreasons; i++)
        if (!strcmp(e->reasons[i].reason, label))
            return &e->reasons[i];
    return NULL;
}

/* At most BROKER_REASONS_MAX - 1 reasons of their own, and (other) for the rest. */
static void add_reason(broker_entity_counts *e, const char *label, uint64_t n)
{
    broker_reason_count *r = find_reason(e, label);
    if (!r && e->nreasons >= BROKER_REASONS_MAX - 1)
        r = find_reason(e, label = BROKER_REASON_OTHER);
    if (!r) {
        broker_reason_count *v = ent_realloc(e->reasons, (e->nreasons + 1) * sizeof *v);
        if (!v)
            return;
        e->reasons = v;
        r = &v[e->nreasons++];
        strcpy(r->reason, label);
        r->n = 0;
    }
    r->n += n;
}

void broker_counts_add_dead_letters(broker_counts *c, int64_t entity, const char *reason, uint64_t n)
{
    broker_entity_counts *e = n ? find_or_add(c, entity) : NULL;
    if (!e)
        return;
    e->n[BROKER_EV_DEAD_LETTERED] += n;
    char label[BROKER_REASON_LABEL_MAX + 1];
    label_of(reason, label);
    add_reason(e, label, n);
}

void broker_counts_merge(broker_counts *into, const broker_counts *from)
{
    for (size_t i = 0; i < from->cap; i++) {
        const broker_entity_counts *f = &from->slots[i];
        broker_entity_counts *e = f->id ? find_or_add(into, f->id) : NULL;
        if (!e)
            continue;
        for (int k = 0; k < BROKER_EVENTS; k++)
            if (k != BROKER_EV_DEAD_LETTERED)
                e->n[k] += f->n[k];
        for (size_t r = 0; r < f->nreasons; r++) {
            e->n[BROKER_EV_DEAD_LETTERED] += f->reasons[r].n;
            add_reason(e, f->reasons[r].reason, f->reasons[r].n);
        }
    }
}

const broker_entity_counts *broker_counts_get(const broker_counts *c, int64_t entity)
{
    return find(c, entity);
}

void broker_counts_keep(broker_counts *c, int (*keep)(void *ctx, int64_t entity), void *ctx)
{
    bool gone = false;
    for (size_t i = 0; i < c->cap && !gone; i++)
        gone = c->slots[i].id && !keep(ctx, c->slots[i].id);
    if (!gone)
        return;
    /* rebuilt without them: open addressing cannot simply blank a slot */
    broker_counts old = *c;
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < old.cap; i++) {
        broker_entity_counts *e = &old.slots[i];
        if (!e->id)
            continue;
        if (!keep(ctx, e->id) || ((c->used + 1) * 2 > c->cap && grow(c))) {
            ent_free(e->reasons);
            continue;
        }
        put(c, e);
    }
    ent_free(old.slots);
}

const char *broker_link_kind_name(broker_link_kind k)
{
    static const char *const names[BROKER_LINK_KINDS] = {
        [BROKER_LINK_SENDER] = "sender",       [BROKER_LINK_RECEIVER] = "receiver",
        [BROKER_LINK_MANAGEMENT] = "management", [BROKER_LINK_CBS] = "cbs",
        [BROKER_LINK_COORDINATOR] = "coordinator",
    };
    return (unsigned)k < BROKER_LINK_KINDS ? names[k] : "unknown";
}

broker_refusal_kind broker_refusal_kind_of(sb_status st)
{
    switch (st) {
    case SB_ERR_SERVER_BUSY: return BROKER_REFUSED_THROTTLED;
    case SB_ERR_INTERNAL: return BROKER_REFUSED_SERVER_ERROR;
    default: return BROKER_REFUSED_CLIENT_ERROR;
    }
}
