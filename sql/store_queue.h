/* Typed queue operations on the store (see store.h for when callbacks run),
 * one file per job: store_entities.c (loading the entity cache), store_send.c,
 * store_claim.c, store_settle.c and store_sweep.c. Every time is a
 * millisecond Unix time from the emulator's clock. */
#ifndef STORE_QUEUE_H
#define STORE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_cache.h"
#include "ent_settle.h"
#include "ent_status.h"
#include "store.h"

/* Every queue, topic and subscription, as the in-process entity cache holds
 * it (ent_cache.h), every rule, and every namespace with its keys (ent_namespace.h). The lists belong to the store until the
 * callback returns. */
typedef void (*store_entities_cb)(void *ctx, sb_status st, const ent_entity *list, size_t n,
                                  const ent_rule_def *rules, size_t nrules, const ent_namespace *namespaces,
                                  size_t nnamespaces, const ent_namespace_key *keys, size_t nkeys);
void store_load_entities(store *s, store_entities_cb cb, void *ctx);

typedef struct store_new_message {
    const uint8_t *bytes; /* copied at submit */
    size_t len;
    const char *message_id; /* NULL: none */
    const char *session_id; /* NULL: none */
    int state;              /* 0 active, 2 scheduled, 3 scheduled in an open transaction (store_txn.h) */
    int64_t now_ms;       /* the send: activity and the duplicate-detection window count from it */
    int64_t available_ms; /* also the EnqueuedTimeUtc: later than now for a scheduled message */
    int64_t expires_ms; /* 0: never */
    int64_t ttl_ms;     /* -1: none */
    int subqueue;       /* 1: straight to the dead-letter subqueue, with the reason below */
    const char *dead_letter_reason;
    const char *dead_letter_description;
    /* A dead letter forwarded on (ForwardDeadLetteredMessagesTo a topic): its
     * reason and description above stay with each copy, which is active
     * (subqueue 0), and so does where it was dead-lettered. NULL: none. */
    const char *dead_letter_source;
    /* For its story (store_story.h), read only while the story is recorded:
     * who sent it (0 and NULL: not a client's link), its trace context
     * (pointing into bytes, story_trace_len of them; NULL: none), and the
     * entity the client sent it to when a ForwardTo chain took it on (0: none). */
    uint64_t story_connection;
    const char *story_link;
    const uint8_t *story_trace;
    size_t story_trace_len;
    int64_t story_via;
} store_new_message;

typedef void (*store_status_cb)(void *ctx, sb_status st);
/* All n messages commit together or not at all (a Service Bus batch is atomic).
 * Every send of a commit to one entity is one statement (duplicate detection,
 * MaxSizeInMegabytes and one sequence reservation for all of them). */
void store_send(store *s, int64_t entity_id, const store_new_message *msgs, size_t n, store_status_cb cb, void *ctx);

/* A claimed message; memory owned by the store until the callback returns. */
typedef struct store_claimed {
    int64_t sequence_number;
    int64_t enqueued_ms;
    int64_t locked_until_ms; /* 0 for receive-and-delete */
    int64_t ttl_ms;
    uint8_t lock_token[16];  /* RFC 4122 byte order */
    int32_t delivery_count;  /* locks granted so far, this one included */
    const char *dead_letter_reason;      /* NULL: none */
    const char *dead_letter_description; /* NULL: none */
    const char *message_id;  /* as stored; the broker's when the sender set none */
    const char *dead_letter_source; /* NULL unless auto-forwarded from another queue's dead letters */
    int64_t expires_ms;      /* 0: never */
    const uint8_t *bytes;
    size_t len;
} store_claimed;

typedef enum store_claim_mode { STORE_CLAIM_LOCK, STORE_CLAIM_DELETE } store_claim_mode;
struct store_peer;
typedef void (*store_claim_cb)(void *ctx, sb_status st, const store_claimed *msgs, size_t n);
/* Takes up to max receivable messages (and never more than STORE_CLAIM_MAX,
 * store_claim_sql.h) of (queue, subqueue) in sequence order:
 * locks them until locked_until_ms, or deletes them. is_activity: a receive
 * the client asked for (not a waiting receiver's re-poll), which keeps the
 * queue from AutoDeleteOnIdle. from_seq: the lowest sequence number to look
 * at (0: all); locks that lapsed are returned by the sweep. peer: who
 * claims, for the story (NULL: the emulator itself, which the story does not
 * tell: a topic routing what rests in it). from_log: entity is a subscription
 * whose messages may still be in its topic's log (ent_topic_reads_log,
 * store_log.h), which the claim then takes from too. */
void store_claim(store *s, int64_t entity_id, int subqueue, bool from_log, store_claim_mode mode, int max,
                 int64_t now_ms, int64_t locked_until_ms, bool is_activity, int64_t from_seq,
                 const struct store_peer *peer, store_claim_cb cb, void *ctx);

/* The same in one session of an entity that requires sessions: only
 * session_id's messages, and only while session_token still holds the
 * session's lock (store_session.h); they stay locked as long as it does. */
void store_claim_session(store *s, int64_t entity_id, const char *session_id, const uint8_t session_token[16],
                         store_claim_mode mode, int max, int64_t now_ms, bool is_activity, int64_t from_seq,
                         const struct store_peer *peer, store_claim_cb cb, void *ctx);

/* The outcomes of entities/ent_settle.h (whose values are STMT_SETTLE_SET's kind
 * codes, store_statements.c), under the store's names. */
typedef enum store_settle_kind {
    STORE_SETTLE_COMPLETE = ENT_SETTLE_COMPLETE,
    STORE_SETTLE_ABANDON = ENT_SETTLE_ABANDON,
    STORE_SETTLE_DEADLETTER = ENT_SETTLE_DEADLETTER,
    STORE_SETTLE_DEFER = ENT_SETTLE_DEFER,
    STORE_SETTLE_RELEASE = ENT_SETTLE_RELEASE,
} store_settle_kind;

/* SB_ERR_LOCK_LOST when the token is unknown, settled, or its lock lapsed.
 * Every settlement of a commit joins one statement: completes one DELETE, the
 * others one statement of their own.
 * reason/description: the dead-letter reason for DEADLETTER, and for ABANDON
 * the one to use when the abandon exhausts MaxDeliveryCount. dead_letter_target:
 * where the entity's dead letters go (0: its own subqueue). */
void store_settle(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                  const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                  store_status_cb cb, void *ctx);
/* The same, telling cb also whether an abandon dead-lettered the message
 * because it had exhausted MaxDeliveryCount (GET /metrics counts it). */
typedef void (*store_settled_cb)(void *ctx, sb_status st, bool exhausted);
void store_settle_counted(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                          const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                          store_settled_cb cb, void *ctx);

/* One settlement, as store_settle takes it. */
typedef struct store_settlement {
    store_settle_kind kind;
    int64_t entity_id;
    uint8_t lock_token[16];
    const char *reason, *description;
    int64_t dead_letter_target;
    int64_t now_ms;
} store_settlement;
/* The merged statements behind store_settle (completes, and the other
 * kinds), and row i of an op of one of them. */
extern const store_merge_def store_complete_set, store_settle_set;
int store_settle_row(store_op *op, int i, const store_settlement *x);

/* The merged send behind store_send, for other ops that insert messages
 * (schedule): row i of op. */
extern const store_merge_def store_send_set;
int store_send_row(store_op *op, int i, const store_new_message *m);

/* The background sweep: expiries, lapsed locks past MaxDeliveryCount, due
 * scheduled messages (activated with a new sequence number), idle
 * queues, old duplicate-detection entries. Reports the queues whose messages
 * moved (to wake their receivers). */
typedef void (*store_sweep_cb)(void *ctx, sb_status st, const int64_t *touched, size_t ntouched);
/* What the sweep does with what it finds, decided from the entity cache:
 * which entities dead-letter expired messages, and where each entity's dead
 * letters go (forward_from[i] -> forward_to[i]). Copied at submit. */
/* What one sweep did to one entity's messages (GET /metrics): expired (of
 * them, dead-lettered), and lapsed locks dead-lettered past MaxDeliveryCount. */
typedef struct store_sweep_count {
    int64_t entity;
    uint64_t expired, expired_dead_lettered, exhausted;
} store_sweep_count;
/* Called (with the sweep's ctx) just before its cb, when it committed. */
typedef void (*store_sweep_counts_cb)(void *ctx, const store_sweep_count *counts, size_t n);
typedef struct store_sweep_policy {
    const int64_t *dead_letter_on_expiry;
    size_t n_dead_letter_on_expiry;
    const int64_t *forward_from, *forward_to;
    size_t n_forward;
    store_sweep_counts_cb counted; /* NULL: not told */
    /* Which entities this sweep looks at (their namespaces' clocks read
     * now_ms: ent_clock.h): all when scope is NULL; else only those of scope
     * (scope_in) or all but those (!scope_in). */
    const int64_t *scope;
    size_t n_scope;
    bool scope_in;
    int64_t story_before_ms; /* story events before this are pruned (ent_story_prune_before) */
    int64_t clock_offset_ms; /* now_ms's namespaces' clock offset: expiry and activation act only
                                while it is still theirs (SWEEP_CLOCK_HOLDS) */
} store_sweep_policy;
void store_sweep(store *s, int64_t now_ms, const store_sweep_policy *policy, store_sweep_cb cb, void *ctx);

#endif
