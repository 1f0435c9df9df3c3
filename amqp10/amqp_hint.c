/* Where the next claim, or pick of a next available session, of an entity starts, and when its
 * receives were last stamped as activity (amqp_hint.h). */
#include "amqp_hint.h"

#include "ent_activity.h"

static amqp_hint_slot *slot_of(amqp_hints *p, int64_t entity_id)
{
    return &p->slot[(uint64_t)entity_id % AMQP_HINT_SLOTS];
}

/* The entity's slot, taken from whichever entity had it. */
static amqp_hint_slot *slot_for(amqp_hints *p, int64_t entity_id)
{
    amqp_hint_slot *s = slot_of(p, entity_id);
    if (s->entity_id != entity_id) {
        s->entity_id = entity_id;
        s->from = 0;
        s->epoch++;
        s->walking = false;
        s->stamped_ms = 0;
    }
    return s;
}

int64_t amqp_hint_from(amqp_hints *p, int64_t entity_id, amqp_hint_mark *mark)
{
    amqp_hint_slot *s = slot_for(p, entity_id);
    *mark = (amqp_hint_mark){entity_id, s->epoch, s->lowers};
    return s->from;
}

void amqp_hint_found(amqp_hints *p, const amqp_hint_mark *mark, int64_t seq)
{
    amqp_hint_slot *s = slot_of(p, mark->entity_id);
    if (s->entity_id != mark->entity_id || s->epoch != mark->epoch)
        return;
    if (s->lowers - mark->lowers > AMQP_HINT_LOWERS_KEPT)
        return; /* lowerings forgotten: one of them may lie below seq */
    for (uint64_t i = mark->lowers; i < s->lowers; i++)
        if (s->lowered[i % AMQP_HINT_LOWERS_KEPT] < seq)
            seq = s->lowered[i % AMQP_HINT_LOWERS_KEPT];
    if (seq > s->from)
        s->from = seq;
}

bool amqp_hint_unmoved(const amqp_hints *p, const amqp_hint_mark *mark)
{
    const amqp_hint_slot *s = &p->slot[(uint64_t)mark->entity_id % AMQP_HINT_SLOTS];
    return s->entity_id == mark->entity_id && s->epoch == mark->epoch && s->lowers == mark->lowers;
}

void amqp_hint_rewind(amqp_hints *p, int64_t entity_id)
{
    if (entity_id) {
        amqp_hint_slot *s = slot_of(p, entity_id);
        if (s->entity_id == entity_id) {
            s->from = 0;
            s->epoch++;
        }
        return;
    }
    for (int i = 0; i < AMQP_HINT_SLOTS; i++) {
        p->slot[i].from = 0;
        p->slot[i].epoch++;
    }
}

void amqp_hint_lower(amqp_hints *p, int64_t entity_id, int64_t seq)
{
    amqp_hint_slot *s = slot_of(p, entity_id);
    if (s->entity_id != entity_id)
        return; /* no hint kept: its next pick starts from 0 */
    if (seq < s->from)
        s->from = seq;
    /* a pick in the store may have skipped the session: its answer raises the hint no higher */
    s->lowered[s->lowers % AMQP_HINT_LOWERS_KEPT] = seq;
    s->lowers++;
}

bool amqp_hint_walk_begin(amqp_hints *p, int64_t entity_id)
{
    amqp_hint_slot *s = slot_for(p, entity_id);
    if (s->walking)
        return false;
    s->walking = true;
    return true;
}

void amqp_hint_walk_end(amqp_hints *p, int64_t entity_id)
{
    amqp_hint_slot *s = slot_of(p, entity_id);
    if (s->entity_id == entity_id)
        s->walking = false;
}

bool amqp_hint_walk_busy(amqp_hints *p, int64_t entity_id)
{
    amqp_hint_slot *s = slot_of(p, entity_id);
    return s->entity_id == entity_id && s->walking;
}

bool amqp_hint_stamp_due(amqp_hints *p, int64_t entity_id, int64_t now_ms)
{
    amqp_hint_slot *s = slot_for(p, entity_id);
    if (!ent_activity_stamp_due(s->stamped_ms, now_ms))
        return false;
    s->stamped_ms = now_ms;
    return true;
}
