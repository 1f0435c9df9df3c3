/* Each message's story, the store's side (README "Each message's story";
 * entities/ent_story.h says what an event is): whether the statements that
 * change messages record their events, and the three queries.
 *
 * Recording costs no statement: each statement that changes messages has a
 * story twin (store_story_statements.c), the same statement with one more
 * CTE that INSERTs its events into sbemu_story from what the statement
 * already has, one row per entity and kind with an element per message. While
 * the story is recorded the store runs the twins: a merged statement's def
 * names its twin (store_merge_def.story), a plain statement is swapped for
 * its twin by store_op_stmt when the twin takes the same parameters, and the
 * few whose twin takes more (who claimed: store_claim's peer) choose it
 * themselves. While it is not, the store runs the statements as they are, and
 * the twins cost nothing but their PREPARE. */
#ifndef STORE_STORY_H
#define STORE_STORY_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_story.h"
#include "store.h"
#include "store_statements.h"

/* Whether the story is recorded: set once at start (--story), before the
 * store opens, and the same for the process's life. */
void store_story_configure(bool on);
/* store_story.c keeps whether it is on; store_story_configure (in
 * store_story_statements.c) sets it and hands the engine the twins. */
void store_story_set_on(bool on);
bool store_story_on(void);

/* The twin of a plain statement that takes the same parameters, while the
 * story is recorded; else prepared itself. */
const char *store_story_twin(const char *prepared);

/* The twins the callers choose themselves: a claim's, with two parameters
 * more (the connection number, int8, and the link's name, text). */
#define STMT_CLAIM_LOCK_STORY "sb_claim_lock_story"
#define STMT_CLAIM_DELETE_STORY "sb_claim_delete_story"
#define STMT_CLAIM_LOCK_LOG_STORY "sb_claim_lock_log_story"
#define STMT_CLAIM_DELETE_LOG_STORY "sb_claim_delete_log_story"
#define STMT_CLAIM_SESSION_LOCK_STORY "sb_claim_session_lock_story"
#define STMT_CLAIM_SESSION_DELETE_STORY "sb_claim_session_delete_story"
#define STMT_SESSION_LOCK_CLAIM_STORY "sb_session_lock_claim_story"
/* The merged twins, defined beside their bases (store_send.c,
 * store_topic.c, store_settle.c): the send's takes four columns more
 * (connection, link, traceparent, the entity the client sent to when ForwardTo
 * took the message on), the publish's five (connection, link, traceparent,
 * the rule, the subscription a forwarded copy left), the settlements' none. */
#define STMT_SEND_SET_STORY "sb_send_set_story"
#define STMT_PUBLISH_SET_STORY "sb_publish_set_story"
#define STMT_COMPLETE_SET_STORY "sb_complete_set_story"
#define STMT_SETTLE_SET_STORY "sb_settle_set_story"

/* Who sent or received: a link of one of the emulator's connections
 * (borrowed for the call). */
struct store_peer {
    uint64_t connection;
    const char *link;
};
typedef struct store_peer store_peer;

/* The queries below. */
#define STMT_STORY_OF_MESSAGE "sb_story_of_message"
#define STMT_STORY_OF_MESSAGE_IN "sb_story_of_message_in"
#define STMT_STORY_OF_SEQUENCE "sb_story_of_sequence"
#define STMT_STORY_OF_ENTITY "sb_story_of_entity"
/* link itself, or NULL when the story cannot keep it whole (too long, or
 * not UTF-8: ent_story_text_keep). */
const char *store_story_link(const char *link);

/* Prunes events older than before_ms, at most STORE_SWEEP_BATCH rows ($1
 * before_ms): a statement of the sweep. */
#define STMT_STORY_PRUNE "sb_story_prune"

/* Prepares the twins and the story's own statements: -1 with the cause in
 * err (a twin whose base statement changed so that one of its edits no
 * longer applies is named, with the edit). */
int store_story_statements_prepare(PGconn *conn, char *err, size_t errlen);
/* The statements it prepares (NULL, *n = 0 when a twin could not be built;
 * store_story_build_error says why), for test_store_plans. */
const stmt_def *store_story_statement_defs(size_t *n);
const char *store_story_build_error(void);

/* ---- the queries ---- */

/* One event of one message, as an answer holds it; strings point into the
 * answer and live until the callback returns. */
typedef struct store_story_event {
    int64_t id, ord; /* where it is: the row, and the message's place in it (a cursor) */
    int64_t at_ms;
    int kind;        /* ENT_STORY_* */
    int64_t entity_id;
    int subqueue;    /* 1: the dead-letter subqueue */
    bool has_sequence_number;
    int64_t sequence_number;
    const char *message_id;
    const char *note, *description; /* NULL: none */
    bool has_number;
    int64_t number;
    bool has_lock_token;
    uint8_t lock_token[16];
    int64_t connection; /* 0: none */
    const char *link;   /* NULL: none */
    int64_t locked_until_ms; /* 0: none */
    int64_t other_entity_id; /* 0: none */
} store_story_event;

typedef void (*store_story_cb)(void *ctx, sb_status st, const store_story_event *events, size_t n);
/* Where a query looks: an entity, and its topic when it is a subscription
 * (a publish tells its copies in the topic's rows: ENT_STORY_ROUTED). */
typedef struct store_story_place {
    int64_t entity_id;
    int64_t topic_id; /* 0: none */
} store_story_place;
/* A message's events, oldest first, at most max: by MessageId (at.entity_id
 * 0: across the whole story, a scan of it; else from its first event in at
 * on), or of the message that at's sequence number seq names (from its first
 * event there on). */
void store_story_of_message(store *s, store_story_place at, const char *message_id, int max, store_story_cb cb,
                            void *ctx);
void store_story_of_sequence(store *s, store_story_place at, int64_t seq, int max, store_story_cb cb, void *ctx);
/* An entity's events, newest first, from below cursor (0, 0: the newest), at most max. */
void store_story_of_entity(store *s, store_story_place at, ent_story_cursor below, int max, store_story_cb cb,
                           void *ctx);

#endif
