/* Where the next pick of a next available session starts (amqp_session_pick.h). */
#include "amqp_session_pick.h"

static amqp_session_pick_slot *slot_of(amqp_session_picks *p, int64_t entity_id)
{
    return &p->slot[(uint64_t)entity_id % AMQP_SESSION_PICK_SLOTS];
}

int64_t amqp_session_pick_from(amqp_session_picks *p, int64_t entity_id, amqp_session_pick_mark *mark)
{
    amqp_session_pick_slot *s = slot_of(p, entity_id);
    if (s->entity_id != entity_id) {
        s->entity_id = entity_id;
        s->from = 0;
        s->epoch++;
    }
    *mark = (amqp_session_pick_mark){entity_id, s->epoch};
    return s->from;
}

void amqp_session_pick_found(amqp_session_picks *p, const amqp_session_pick_mark *mark, int64_t seq)
{
    amqp_session_pick_slot *s = slot_of(p, mark->entity_id);
    if (s->entity_id == mark->entity_id && s->epoch == mark->epoch && seq > s->from)
        s->from = seq;
}

void amqp_session_pick_rewind(amqp_session_picks *p, int64_t entity_id)
{
    if (entity_id) {
        amqp_session_pick_slot *s = slot_of(p, entity_id);
        if (s->entity_id == entity_id) {
            s->from = 0;
            s->epoch++;
        }
        return;
    }
    for (int i = 0; i < AMQP_SESSION_PICK_SLOTS; i++) {
        p->slot[i].from = 0;
        p->slot[i].epoch++;
    }
}

void amqp_session_pick_lower(amqp_session_picks *p, int64_t entity_id, int64_t seq)
{
    amqp_session_pick_slot *s = slot_of(p, entity_id);
    if (s->entity_id != entity_id)
        return; /* no hint kept: its next pick starts from 0 */
    if (seq < s->from)
        s->from = seq;
    s->epoch++; /* a pick in the store may have skipped the session: its answer does not raise the hint */
}
