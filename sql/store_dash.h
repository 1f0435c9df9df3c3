/* What the dashboard (amqp10/http/http_dash*.c) reads and changes in the
 * store beyond the management API's rows: an entity's messages as they rest
 * (every column, every state, locked or not), their deletion one by one or
 * all, an entity's status, its sessions. Same contract as store_queue.h:
 * callbacks run once the transaction is known, times are milliseconds on
 * the emulator's clock.
 *
 * None of these is client activity: unlike $management's peek they do not
 * stamp entity_runtime.accessed_at, so a dashboard left open never keeps an
 * entity from AutoDeleteOnIdle. Sends and resubmits do not come here: they
 * take the broker's send path like any client's (broker.h, "sending"). */
#ifndef STORE_DASH_H
#define STORE_DASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_cache.h"
#include "ent_status.h"
#include "store.h"
#include "store_queue.h"

/* Prepared statement names (SQL in store_dash_statements.c). */
#define STMT_DASH_PEEK "sb_dash_peek"
#define STMT_DASH_PICK "sb_dash_pick"
#define STMT_DASH_DELETE "sb_dash_delete"
#define STMT_DASH_PURGE "sb_dash_purge"
#define STMT_DASH_STATUS_QUEUE "sb_dash_status_queue"
#define STMT_DASH_STATUS_TOPIC "sb_dash_status_topic"
#define STMT_DASH_STATUS_SUBSCRIPTION "sb_dash_status_subscription"
#define STMT_DASH_SESSIONS "sb_dash_sessions"
#define STMT_DASH_LAST "sb_dash_last"

/* Message states as the messages table keeps them (migrations 001, 007). */
#define STORE_DASH_STATE_ACTIVE 0
#define STORE_DASH_STATE_DEFERRED 1
#define STORE_DASH_STATE_SCHEDULED 2

/* One stored message, every column. Strings and bytes belong to the store
 * until the callback returns. */
typedef struct store_dash_msg {
    int64_t sequence_number;
    int subqueue;            /* 0, or 1: the dead-letter subqueue */
    int state;               /* STORE_DASH_STATE_* (a scheduled one whose time came stays 2 until the sweep) */
    int64_t enqueued_ms;
    int64_t available_ms;    /* visible from: the scheduled time, or the end of a lock */
    int64_t expires_ms;      /* 0: never */
    int64_t ttl_ms;          /* -1: none */
    bool has_lock;           /* a lock token is set (it may have lapsed: compare locked_until_ms with now) */
    uint8_t lock_token[16];  /* RFC 4122 order */
    int64_t locked_until_ms; /* 0: none */
    int32_t delivery_count;
    const char *message_id, *session_id;          /* NULL: none */
    const char *dead_letter_reason, *dead_letter_description, *dead_letter_source; /* NULL: none */
    const uint8_t *bytes;    /* the bare message as sent */
    size_t len;
} store_dash_msg;
typedef void (*store_dash_msgs_cb)(void *ctx, sb_status st, const store_dash_msg *msgs, size_t n);

/* Up to max messages of (entity, subqueue) with sequence_number >= from_seq,
 * in sequence order: active, deferred and scheduled, locked or not, expired
 * or not (the sweep has not been by yet); never a transaction's uncommitted
 * schedule. */
void store_dash_peek(store *s, int64_t entity_id, int subqueue, int64_t from_seq, int max, store_dash_msgs_cb cb,
                     void *ctx);
/* The messages of (entity, subqueue) among seqs, in sequence order; with
 * unlocked_only, only those whose lock is absent or lapsed at now_ms. */
void store_dash_pick(store *s, int64_t entity_id, int subqueue, const int64_t *seqs, size_t n, bool unlocked_only,
                     int64_t now_ms, store_dash_msgs_cb cb, void *ctx);

typedef void (*store_dash_count_cb)(void *ctx, sb_status st, int64_t n);
/* The highest sequence number in (entity, subqueue) now (n; 0: none): what
 * came later has a higher one, so a walk can stop there. */
void store_dash_last(store *s, int64_t entity_id, int subqueue, store_dash_count_cb cb, void *ctx);
/* Deletes the messages of (entity, subqueue) among seqs (with unlocked_only,
 * those whose lock is absent or lapsed); n is how many went. A receiver that
 * held one loses its lock (its settlement answers lock lost). */
void store_dash_delete(store *s, int64_t entity_id, int subqueue, const int64_t *seqs, size_t n, bool unlocked_only,
                       int64_t now_ms, store_dash_count_cb cb, void *ctx);
/* Deletes up to max messages of the entity's subqueue (-1: both), locked or
 * not; n is how many went (fewer than max: none is left). A purge is many
 * of these, so that no transaction holds the store for long. */
void store_dash_purge(store *s, int64_t entity_id, int subqueue, int max, store_dash_count_cb cb, void *ctx);

/* Sets the status (a column value, already checked for the kind:
 * ent_entity_status_for) of the entity of that kind and id, updated at
 * now_ms; SB_ERR_NOT_FOUND when there is none. The entity tables' trigger
 * tells every emulator (sbemu_entities). */
void store_dash_set_status(store *s, ent_kind kind, int64_t id, const char *status, int64_t now_ms,
                           store_status_cb cb, void *ctx);

/* One session of an entity: one with messages, or a row of the sessions
 * table (locked, or holding a state). */
typedef struct store_dash_session {
    const char *session_id;
    int64_t messages;         /* in the entity (not its dead-letter subqueue) */
    const uint8_t *state;     /* NULL: none */
    size_t state_len;
    bool has_lock;            /* a lock token is set (compare locked_until_ms with now) */
    uint8_t lock_token[16];
    int64_t locked_until_ms;  /* 0: none */
    int64_t updated_ms;       /* the state's last change; 0: no row */
} store_dash_session;
typedef void (*store_dash_sessions_cb)(void *ctx, sb_status st, const store_dash_session *v, size_t n);
/* Up to max sessions of the entity, by id. */
void store_dash_sessions(store *s, int64_t entity_id, int max, store_dash_sessions_cb cb, void *ctx);

/* Prepares the statements above on a new connection (store_connect.c); -1
 * with the failing one named in err. Their table, for the plans test. */
struct pg_conn;
struct stmt_def;
int store_dash_statements_prepare(struct pg_conn *conn, char *err, size_t errlen);
const struct stmt_def *store_dash_statement_defs(size_t *n);

#endif
