/* Where this process's next walk of an entity's messages starts, per
 * entity: a lower bound on the sequence numbers worth looking at. The server
 * keeps two sets (amqp_internal.h):
 *  - claims (claim_hints): every message below it is locked, gone, or set
 *    aside, as far as this process's claims saw. The next claim of the entity
 *    on any of its links starts there, and does not walk again the messages
 *    in flight (locked rows are skipped on the heap: migration 025) nor the
 *    index entries of the messages completed since the last vacuum.
 *  - session picks (session_picks): the sequence number of the message the
 *    last "next available session" pick found. Below it, every claimable
 *    message belonged to a held session; so the next pick may start there. A
 *    session let go here lowers it to the message that session was picked by
 *    (none of its messages lies below; amqp_link.c), and to 0 for a session
 *    accepted by name.
 * What can make a message below a hint claimable again moves it back: locks
 * released or lapsed (broker_rewind), a transaction's sends committed and a
 * reset or restore move it to 0; so does, for what other replicas release and
 * session locks that lapse unseen, the periodic rewind (AMQP_CLAIM_REWIND_MS).
 *
 * A hint is only ever a lower bound a walk may start from: a slot taken by
 * another entity, or a rewind, starts a walk from 0 again, which is always
 * right. A walk's answer moves the hint only if no rewind came while it was
 * in the store (its mark's epoch), and no higher than any session let go
 * meanwhile (the pick may have skipped it while it was held): the slot keeps
 * the last AMQP_HINT_LOWERS_KEPT lowerings for that, and an answer that
 * waited through more raises nothing. (Until 2026-11-29 any lowering in
 * between voided the answer: with eight receivers switching sessions, one
 * was let go during nearly every pick, and the hint stayed at the entity's
 * first message while each pick walked the entries of every session
 * received since.)
 *
 * The claims' set also keeps, per entity, when this process last stamped a
 * receive of it as activity (entities/ent_activity.h: at most once a second).
 * A slot taken by another entity forgets it: at worst one stamp more.
 * Fixed size, no allocation. */
#ifndef AMQP_HINT_H
#define AMQP_HINT_H

#include <stdbool.h>
#include <stdint.h>

/* Entities whose hint is kept at once (more share slots: a hint lost is a
 * walk from 0). */
#define AMQP_HINT_SLOTS 256
/* Lowerings an entity's slot remembers: more during one pick than this, and
 * its answer raises nothing (as many as the receivers switching sessions at
 * once, with room to spare). */
#define AMQP_HINT_LOWERS_KEPT 16

typedef struct amqp_hint_slot {
    int64_t entity_id; /* 0: free */
    int64_t from;
    uint64_t epoch; /* moved by every rewind and by a new entity taking the slot */
    bool walking;   /* a walk from this hint is in the store (amqp_hint_walk_begin) */
    int64_t stamped_ms; /* the last receive stamped as activity (amqp_hint_stamp_due); 0: none */
    uint64_t lowers;    /* lowerings so far; the last ones' sequence numbers in lowered, by lowers % KEPT */
    int64_t lowered[AMQP_HINT_LOWERS_KEPT];
} amqp_hint_slot;

/* Ownership: a member of amqp_server; zeroed is empty. */
typedef struct amqp_hints {
    amqp_hint_slot slot[AMQP_HINT_SLOTS];
} amqp_hints;

/* What a walk in the store remembers of the hint it started from. */
typedef struct amqp_hint_mark {
    int64_t entity_id;
    uint64_t epoch;
    uint64_t lowers; /* the slot's lowerings when the walk began */
} amqp_hint_mark;

/* The sequence number entity_id's next walk starts from; *mark for the answer. */
int64_t amqp_hint_from(amqp_hints *p, int64_t entity_id, amqp_hint_mark *mark);
/* The walk marked so found what it looked for up to sequence number seq (a
 * claim: the last message it took, plus one; a pick: the message whose
 * session it took). Raises the hint to seq, or to the lowest lowering since
 * the mark if that is below. */
void amqp_hint_found(amqp_hints *p, const amqp_hint_mark *mark, int64_t seq);
/* Whether nothing moved the hint back since mark was taken (no rewind, no
 * lowering, the slot still the entity's): a walk started now would get the
 * same mark. */
bool amqp_hint_unmoved(const amqp_hints *p, const amqp_hint_mark *mark);
/* Messages of entity_id (0: of every entity) may be claimable below the hint. */
void amqp_hint_rewind(amqp_hints *p, int64_t entity_id);
/* Messages of entity_id from sequence number seq on (0: all) may be claimable
 * again (a session let go): the hint goes no higher than seq, now or by the
 * answer of a walk that was in the store meanwhile. */
void amqp_hint_lower(amqp_hints *p, int64_t entity_id, int64_t seq);

/* One walk of an entity in the store at a time. A walk that starts while
 * another is in the store starts from the same hint, and so walks every
 * message the other takes, locked or gone (ten receivers of a queue read ten
 * index entries per message they claimed). begin: true if entity_id had no
 * walk in the store and now has one; end: the walk answered. A slot taken by
 * another entity forgets the walk: at worst two walks overlap again. */
bool amqp_hint_walk_begin(amqp_hints *p, int64_t entity_id);
void amqp_hint_walk_end(amqp_hints *p, int64_t entity_id);
bool amqp_hint_walk_busy(amqp_hints *p, int64_t entity_id);

/* Whether a receive of entity_id at now_ms (its namespace's clock) is stamped
 * as activity (ent_activity_stamp_due); true takes it as stamped at now_ms. */
bool amqp_hint_stamp_due(amqp_hints *p, int64_t entity_id, int64_t now_ms);

#endif
