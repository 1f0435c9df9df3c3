/* See store_fate.h. */
#include "store_fate.h"

/* The store's states: 0 active, 2 scheduled (store_queue.h). */
#define FATE_STATE_ACTIVE 0
#define FATE_STATE_SCHEDULED 2

static void place(store_new_message *m, const ent_send_fate *f)
{
    m->state = f->scheduled ? FATE_STATE_SCHEDULED : FATE_STATE_ACTIVE;
    m->subqueue = f->dead_letter ? 1 : 0;
    m->dead_letter_reason = f->dead_letter_reason;
    m->dead_letter_description = f->dead_letter_description;
}

void store_fate_apply(store_new_message *m, const ent_send_fate *f)
{
    m->available_ms = f->available_ms;
    m->ttl_ms = f->ttl_ms;
    m->expires_ms = f->expires_ms;
    place(m, f);
}

bool store_fate_is_scheduled(const store_new_message *m) { return m->state == FATE_STATE_SCHEDULED; }

void store_fate_forward_failed(store_new_message *m)
{
    ent_send_fate f = {.scheduled = m->state == FATE_STATE_SCHEDULED,
                       .dead_letter = m->subqueue == 1,
                       .dead_letter_reason = m->dead_letter_reason,
                       .dead_letter_description = m->dead_letter_description};
    ent_send_forward_failed(&f);
    place(m, &f);
    m->story_via = 0; /* for its story: it stays where it was sent, not forwarded */
}
