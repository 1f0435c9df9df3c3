/* What follows a commit: the receivers' holder is told (wake, rewind), and
 * a settlement's consequences are carried out as entities/ent_settle.h
 * decides them, the same for a link's disposition, $management
 * update-disposition and a transaction's discharge. */
#include "broker_internal.h"

void broker_wake(broker *b, int64_t entity_id)
{
    if (b->receivers.wake)
        b->receivers.wake(b->receivers.ctx, entity_id);
}

void broker_rewind(broker *b, int64_t entity_id)
{
    if (b->receivers.rewind)
        b->receivers.rewind(b->receivers.ctx, entity_id);
}

void broker_after_settle(broker *b, int64_t entity_id, int64_t dead_letter_target, ent_settle_kind kind)
{
    ent_settle_after then = ent_settle_after_commit(kind);
    if (then.redeliver) {
        broker_rewind(b, entity_id);
        broker_wake(b, entity_id);
    }
    if (then.dead_lettered) {
        if (dead_letter_target) {
            broker_wake(b, dead_letter_target);       /* a queue's receivers */
            broker_topic_pump(b, dead_letter_target); /* a topic routes it now (no-op for a queue) */
        } else {
            broker_wake(b, entity_id); /* its dead-letter subqueue's receivers */
        }
    }
}
