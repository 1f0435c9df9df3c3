/* Where this process's next "next available session" pick starts looking,
 * per entity: the sequence number of the message the last pick found.
 *
 * A pick takes the session of the oldest claimable message whose session
 * nobody holds. Below the message it found, every claimable message then
 * belonged to a held session; so the next pick may start there, and not walk
 * again the index entries of the messages completed since the last vacuum
 * (the same reason a receiving link keeps claim_from, link_sender.c). What
 * can make a message below it pickable again moves the hint back: a session
 * let go here lowers it to the message that session was picked by (none of
 * its messages lies below; amqp_link.c), and to 0 for a session accepted
 * by name; locks released or lapsed (broker_rewind), a transaction's sends
 * committed and a reset or restore move it to 0; so does, for what other
 * replicas release and session locks that lapse unseen, the periodic rewind
 * of every link (AMQP_CLAIM_REWIND_MS).
 *
 * A hint is only ever a lower bound a pick may start from: a slot taken by
 * another entity, or a rewind, starts a pick from 0 again, which is always
 * right. A pick's answer moves the hint only if no rewind came while it was
 * in the store (its mark's epoch). Fixed size, no allocation. */
#ifndef AMQP_SESSION_PICK_H
#define AMQP_SESSION_PICK_H

#include <stdint.h>

/* Entities whose hint is kept at once (more share slots: a hint lost is a
 * pick from 0). */
#define AMQP_SESSION_PICK_SLOTS 256

typedef struct amqp_session_pick_slot {
    int64_t entity_id; /* 0: free */
    int64_t from;
    uint64_t epoch; /* moved by every rewind and by a new entity taking the slot */
} amqp_session_pick_slot;

/* Ownership: a member of amqp_server; zeroed is empty. */
typedef struct amqp_session_picks {
    amqp_session_pick_slot slot[AMQP_SESSION_PICK_SLOTS];
} amqp_session_picks;

/* What a pick in the store remembers of the hint it started from. */
typedef struct amqp_session_pick_mark {
    int64_t entity_id;
    uint64_t epoch;
} amqp_session_pick_mark;

/* The sequence number entity_id's next pick starts from; *mark for the answer. */
int64_t amqp_session_pick_from(amqp_session_picks *p, int64_t entity_id, amqp_session_pick_mark *mark);
/* The pick marked so found its session by the message with sequence number seq. */
void amqp_session_pick_found(amqp_session_picks *p, const amqp_session_pick_mark *mark, int64_t seq);
/* Messages of entity_id (0: of every entity) may be pickable below the hint. */
void amqp_session_pick_rewind(amqp_session_picks *p, int64_t entity_id);
/* Messages of entity_id from sequence number seq on (0: all) may be pickable
 * again (a session let go): the hint goes no higher than seq. */
void amqp_session_pick_lower(amqp_session_picks *p, int64_t entity_id, int64_t seq);

#endif
