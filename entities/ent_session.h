/* The rules of message sessions, as Service Bus applies them: who may receive
 * from an entity with or without a session filter, which sends it takes, how
 * long a next-available receiver waits, and the .NET ticks the SDKs read the
 * session lock in. Pure functions (test_ent_session). */
#ifndef ENT_SESSION_H
#define ENT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_cache.h"
#include "ent_duration.h"
#include "ent_status.h"

/* A SessionId is at most 128 characters (Service Bus; the SDKs check it too). */
#define ENT_SESSION_ID_MAX 128
#define ENT_SESSION_ID_SIZE (ENT_SESSION_ID_MAX * 4 + 1)
/* Whether a receiver's session lock is live: held, and until_ms not reached. */
bool ent_session_lock_live(bool held, int64_t until_ms, int64_t now_ms);

/* What a settlement that failed with st means for a receiver in a session
 * (in_session) whose session lock is or is not live: a message lock lost
 * under a lost session lock is Service Bus's session-lock-lost. */
sb_status ent_session_settle_failure(sb_status st, bool in_session, bool lock_live);

/* How long a next-available receiver waits for a session when its link names
 * no com.microsoft:timeout: Service Bus's own bound (1 min 5 s), which the JS
 * SDK's comments describe. */
#define ENT_SESSION_ACCEPT_TIMEOUT_DEFAULT_MS INT64_C(65000)

/* Whether a receiver may attach to entity e (its dead-letter subqueue when
 * dead_letter) with (has_filter) or without a session filter. SB_OK, or the
 * refusal with its description in err. */
sb_status ent_session_receiver_check(const ent_entity *e, bool dead_letter, bool has_filter, char *err,
                                     size_t errlen);

/* Whether a message with (has_session_id) or without a SessionId may be
 * stored in an entity that does (requires_session) or does not require
 * sessions. SB_OK, or the refusal with its description in err. */
sb_status ent_session_send_check(bool requires_session, const char *entity_name, bool has_session_id, char *err,
                                 size_t errlen);

/* Service Bus does not change RequiresSession of an existing queue or
 * subscription: an update that would is refused (the store keeps the column
 * and answers SB_ERR_NOT_ALLOWED, atomically with the update). Writes the
 * text naming the entity (kind "queue" or "subscription", its path) and its
 * current value; returns the status to answer, SB_ERR_ARGUMENT. */
sb_status ent_session_requires_session_fixed(const char *kind, const char *path, bool current, char *err,
                                             size_t errlen);

/* Whether a subscription takes a topic's copy of a message with or without a
 * SessionId: one that requires sessions cannot hold a message without one,
 * and does not get it (the topic's other subscriptions still do). */
bool ent_session_holds(const ent_entity *subscription, bool has_session_id);

/* What a session receiver gets once the store answered its lock. */
typedef enum ent_session_lock_verdict {
    ENT_SESSION_LOCK_GIVEN,   /* it holds the session: answer its attach */
    ENT_SESSION_LOCK_EMPTY,   /* locked, but nothing in it for a next-available receiver: let it go at once,
                               * then wait and pick again */
    ENT_SESSION_LOCK_WAIT,    /* next available, and no session free: wait for one (until its timeout) */
    ENT_SESSION_LOCK_REFUSED, /* refuse the link: the status and text are written */
} ent_session_lock_verdict;

/* The store answered st to a receiver's session lock. named_sid: the session
 * it asked for (NULL: the next available). with_claim: the lock also claimed
 * the session's first messages (peek-lock), claimed of them. A
 * next-available receiver never gets an empty session: the pick reads a
 * snapshot older than its lock, so another receiver may have emptied the
 * session and let it go meanwhile, and it would wait on it until the lock
 * lapsed. A receive-and-delete lock claims nothing with it, so its
 * emptiness is not known. REFUSED writes *refusal and err. */
ent_session_lock_verdict ent_session_lock_outcome(sb_status st, const char *named_sid, bool with_claim, size_t claimed,
                                                  sb_status *refusal, char *err, size_t errlen);

/* How long a next-available receiver waits: the link's com.microsoft:timeout
 * in ms (<= 0: none given). */
int64_t ent_session_accept_timeout_ms(int64_t requested_ms);

#endif
