/* Receivers of one entity take turns to claim (amqp_internal.h).
 *
 * A claim walks messages_ready from its entity's hint, which moves only when
 * a claim answers (amqp_hint.h). Ten receivers claiming at once all started
 * from the same hint, so each walked what the others had just locked or
 * deleted: peek-lock on ten connections read ten index entries per message
 * it claimed, and its claims cost twice what one connection's did. Claims of
 * an entity therefore go to the store one at a time; a receiver that wants to
 * claim while another's claim is in the store waits in line, and claims (from
 * the hint that claim moved) when it answers.
 *
 * The line is the server's, first come first served, across entities: a
 * turn passed goes to the first link in line for that entity. A link in line
 * is not held (amqp_link_hold): it leaves the line when it closes or its
 * connection does (amqp_events.c), which comes before it is freed. */
#include "amqp_internal.h"

/* lk leaves the line (it must be in it). */
static void unqueue(amqp_server *srv, amqp_link *lk)
{
    if (lk->turn_prev)
        lk->turn_prev->turn_next = lk->turn_next;
    else
        srv->turn_first = lk->turn_next;
    if (lk->turn_next)
        lk->turn_next->turn_prev = lk->turn_prev;
    else
        srv->turn_last = lk->turn_prev;
    lk->turn_prev = lk->turn_next = NULL;
    lk->turn_waiting = false;
}

bool amqp_claim_turn_take(amqp_link *lk)
{
    amqp_server *srv = lk->conn->srv;
    if (lk->turn_waiting)
        return false; /* in line already */
    if (amqp_hint_walk_begin(&srv->claim_hints, lk->entity.id)) {
        lk->turn_held = true;
        return true;
    }
    lk->turn_waiting = true;
    lk->turn_prev = srv->turn_last;
    lk->turn_next = NULL;
    if (srv->turn_last)
        srv->turn_last->turn_next = lk;
    else
        srv->turn_first = lk;
    srv->turn_last = lk;
    return false;
}

bool amqp_claim_turn_ahead(amqp_link *lk)
{
    amqp_server *srv = lk->conn->srv;
    for (amqp_link *w = srv->turn_first; w; w = w->turn_next)
        if (w->entity.id == lk->entity.id)
            return false; /* they go first: lk's claim in the store passes them the turn */
    if (lk->turn_held)
        return true;
    if (!amqp_hint_walk_begin(&srv->claim_hints, lk->entity.id))
        return false;
    lk->turn_held = true;
    return true;
}

bool amqp_claim_turn_end(amqp_link *lk)
{
    if (!lk->turn_held)
        return false;
    lk->turn_held = false;
    amqp_hint_walk_end(&lk->conn->srv->claim_hints, lk->entity.id);
    return true;
}

amqp_link *amqp_claim_turn_next(amqp_server *srv, int64_t entity_id)
{
    if (amqp_hint_walk_busy(&srv->claim_hints, entity_id))
        return NULL; /* taken again already */
    for (amqp_link *w = srv->turn_first; w; w = w->turn_next)
        if (w->entity.id == entity_id) {
            unqueue(srv, w);
            return w;
        }
    return NULL;
}

void amqp_claim_turn_forget(amqp_link *lk)
{
    if (lk->turn_waiting)
        unqueue(lk->conn->srv, lk);
}
