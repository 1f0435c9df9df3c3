/* Message sessions in the store: who holds a session's lock, its state, and
 * which sessions an entity has (migration 007). The lock lives in the
 * database, so emulators sharing it never hand one session to two receivers.
 * A holder is named by a token it chose (a uuid); every operation but the
 * lock itself and the listing needs that token and a lock that has not
 * lapsed, and answers SB_ERR_SESSION_LOCK_LOST otherwise. Same contract as
 * store_queue.h: callbacks run once the transaction is known; times are
 * milliseconds on the emulator's clock. */
#ifndef STORE_SESSION_H
#define STORE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"
#include "store.h"
#include "store_queue.h"

#define STMT_SESSION_LOCK "sb_session_lock"
#define STMT_SESSION_RELEASE "sb_session_release"
#define STMT_SESSION_RELEASE_SETTLED "sb_session_release_settled"
#define STMT_SESSION_RENEW "sb_session_renew"
#define STMT_SESSION_GET_STATE "sb_session_get_state"
#define STMT_SESSION_SET_STATE "sb_session_set_state"
#define STMT_SESSION_LIST "sb_session_list"
#define STMT_SESSION_PEEK "sb_session_peek"
#define STMT_SESSION_SWEEP "sb_session_sweep"

/* session_id: the session the receiver asked for, or NULL for the next
 * available one, looked for among messages from sequence number pick_from
 * on (0: all). SB_OK with the session locked (its id; memory owned by the
 * store until cb returns) and, for the next available, picked_seq: the
 * sequence number of the message it was picked by (0 for a named one); or
 * SB_ERR_SESSION_CANNOT_BE_LOCKED: the named session is held by another
 * receiver, or no session is available. */
typedef void (*store_session_lock_cb)(void *ctx, sb_status st, const char *session_id, int64_t picked_seq);
void store_session_lock(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                        int64_t now_ms, int64_t locked_until_ms, int64_t pick_from, store_session_lock_cb cb,
                        void *ctx);

/* The same for a peek-lock receiver, with its first claim in the same
 * statement: once the session is locked, up to max of its messages are
 * locked under it (from its first, as store_claim_session does with
 * from_seq 0). cb gets the session and the messages (memory owned by the
 * store until cb returns; n may be 0); SB_ERR_SESSION_CANNOT_BE_LOCKED as
 * store_session_lock. is_activity and peer: as store_claim_session. */
typedef void (*store_session_lock_claim_cb)(void *ctx, sb_status st, const char *session_id, int64_t picked_seq,
                                            const store_claimed *msgs, size_t n);
void store_session_lock_claim(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                              int64_t now_ms, int64_t locked_until_ms, int64_t pick_from, int max, bool is_activity,
                              const struct store_peer *peer, store_session_lock_claim_cb cb, void *ctx);

/* The holder lets go; its unsettled messages become claimable again. cb may
 * be NULL. all_settled: the holder knows it holds no message locked (every
 * one it received was settled), so none is looked for: a session's release
 * then costs the same however many messages it received. */
void store_session_release(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                           int64_t now_ms, bool all_settled, store_status_cb cb, void *ctx);

typedef void (*store_session_renew_cb)(void *ctx, sb_status st, int64_t locked_until_ms);
void store_session_renew(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                         int64_t now_ms, int64_t locked_until_ms, store_session_renew_cb cb, void *ctx);

/* state NULL (with SB_OK): the session has none. */
typedef void (*store_session_state_cb)(void *ctx, sb_status st, const uint8_t *state, size_t len);
void store_session_get_state(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                             int64_t now_ms, store_session_state_cb cb, void *ctx);
/* state NULL clears it. */
void store_session_set_state(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                             int64_t now_ms, const uint8_t *state, size_t len, store_status_cb cb, void *ctx);

/* Sessions of the entity with messages, and those whose state changed at or
 * after since_ms, in id order, after skipping `skip`, at most `top`. */
typedef void (*store_session_list_cb)(void *ctx, sb_status st, const char *const *ids, size_t n);
void store_session_list(store *s, int64_t entity_id, int64_t since_ms, int skip, int top, store_session_list_cb cb,
                        void *ctx);

#endif
