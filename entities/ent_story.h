/* Each message's story: what happened to it, as events (README "Each
 * message's story"). This file decides what an event is: its kinds and their
 * names, what each of an event's columns means for each kind (and so the key
 * it is shown under), which application properties carry a trace context, how
 * long events are kept, and what a query may ask. Pure C.
 *
 * Events are rows of sbemu_story (migration 016), written by the very
 * statements that make the changes they record (sql/store_story_statements.c),
 * one row per statement, entity and kind, with arrays: per message its
 * sequence number, MessageId, a note, a description, a number and a lock
 * token; per row the time, the connection and link, the time a lock ends,
 * the subqueue and another entity. What each of those means is below. */
#ifndef ENT_STORY_H
#define ENT_STORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_filter.h"
#include "ent_lengths.h"
#include "ent_status.h"

/* The kinds, as the column sbemu_story.kind holds them. Macros, not an enum:
 * the statements of sql/ splice them into their text. Never renumber one
 * (rows written by an older emulator keep their numbers). */
#define ENT_STORY_SENT 1          /* a client sent it (connection, link, traceparent) */
#define ENT_STORY_SCHEDULED 2     /* a client sent it with a ScheduledEnqueueTime */
#define ENT_STORY_ROUTED 3        /* a topic gave a subscription a copy (the rule); in the topic's row */
#define ENT_STORY_NOT_ROUTED 4    /* a subscription's filters did not match (its rules); in the topic's row */
#define ENT_STORY_FORWARDED 5     /* auto-forwarded (ForwardTo): from another entity to this one */
#define ENT_STORY_LOCKED 6        /* delivered under a lock (connection, link, until, delivery count) */
#define ENT_STORY_ABANDONED 7
#define ENT_STORY_DEFERRED 8
#define ENT_STORY_DEAD_LETTERED 9 /* reason and description; where it went if forwarded */
#define ENT_STORY_EXPIRED 10
#define ENT_STORY_LOCK_LAPSED 11  /* its lock ended unsettled: claimable again (or dead-lettered) */
#define ENT_STORY_COMPLETED 12
#define ENT_STORY_RECEIVED 13     /* received and deleted (ReceiveAndDelete) */
#define ENT_STORY_ACTIVATED 14    /* a scheduled message came due, with a new sequence number */
#define ENT_STORY_RELEASED 15     /* its lock was given back unsettled: as if never delivered */
#define ENT_STORY_CANCELLED 16    /* a scheduled message cancelled */
#define ENT_STORY_PURGED 17       /* deleted in bulk: $management's batch delete, the dashboard's purge */
#define ENT_STORY_DELETED 18      /* deleted one by one from the dashboard */
#define ENT_STORY_KIND_MAX 18

/* "sent", "dead-lettered", ...; NULL for a number that is no kind. */
const char *ent_story_kind_name(int kind);

/* How an event of a kind reads: under which JSON key each column is shown
 * (NULL: not shown for this kind). The per-message columns are note,
 * description and number; other names another entity. */
typedef struct ent_story_shape {
    const char *note;        /* "traceparent", "rule", "rules", "reason" */
    const char *description; /* "description" */
    const char *number;      /* "deliveryCount", "scheduledSequenceNumber" */
    const char *other;       /* "topic", "from", "forwardedTo" */
    bool peer;               /* "connection" and "link": who sent or received */
    bool lock;               /* "lockedUntil" and "lockToken" */
    /* The event is its number's entity's (a subscription), written in the
     * row of another (its topic, shown as other): a publish writes one row
     * for all its copies, whatever the number of subscriptions. */
    bool number_is_entity;
} ent_story_shape;
ent_story_shape ent_story_shape_of(int kind);

/* The application properties that carry a message's trace context, in the
 * order they are looked for: W3C's traceparent (which a sender may set
 * itself), then the Diagnostic-Id the Azure SDKs set when tracing is on. */
#define ENT_STORY_TRACE_PROPERTIES 2
extern const char *const ent_story_trace_properties[ENT_STORY_TRACE_PROPERTIES];
/* Bytes of a trace context kept (a traceparent is 55; longer is cut), and
 * of a link's name (the SDKs' are under 100). */
#define ENT_STORY_TRACE_MAX 256
#define ENT_STORY_LINK_MAX 256

/* How many bytes of a client's text p (len bytes: a trace context, a link's
 * name) an event keeps: the longest start of at most max bytes that ends
 * where a character does; 0 when p is not UTF-8 or holds a NUL, which
 * PostgreSQL would refuse, and the send or receive the event rides with
 * would fail with it: the story never costs a client its operation. */
size_t ent_story_text_keep(const char *p, size_t len, size_t max);

/* How long events are kept, on the emulator's clock: the default of
 * --story-retention, and its bounds. On the emulator's clock (not the wall
 * clock) because an event's time is that clock's, like every time of the
 * message it tells of (its lock's end, its expiry): moving the clock ages
 * the story with the messages, and a test can see the window close. */
#define ENT_STORY_RETENTION_DEFAULT_S 3600
#define ENT_STORY_RETENTION_MIN_S 1
#define ENT_STORY_RETENTION_MAX_S (30 * 86400)
/* Events written before this are pruned (by the background sweep). */
int64_t ent_story_prune_before(int64_t now_ms, int64_t retention_ms);

/* ---- what a query may ask (GET /$sbemu/story) ---- */

/* Events one answer holds: an entity's page by default and at most, and a
 * message's story at most (a message that lived longer is cut, and says so). */
#define ENT_STORY_PAGE_DEFAULT 100
#define ENT_STORY_PAGE_MAX 1000
#define ENT_STORY_MESSAGE_EVENTS_MAX 1000

typedef enum ent_story_query_kind {
    ENT_STORY_BY_MESSAGE_ID, /* messageId: its whole story, across entities */
    ENT_STORY_BY_SEQUENCE,   /* entity and sequenceNumber: the story of the message it names */
    ENT_STORY_OF_ENTITY,     /* entity alone: its latest events, newest first, paged */
} ent_story_query_kind;

/* Where an entity's page starts: below event (id, ord), or from the newest. */
typedef struct ent_story_cursor {
    int64_t id, ord; /* 0, 0: from the newest */
} ent_story_cursor;

typedef struct ent_story_query {
    ent_story_query_kind kind;
    const char *entity;     /* borrowed; NULL when not given */
    const char *message_id; /* borrowed */
    int64_t sequence_number;
    int top;
    ent_story_cursor page;
} ent_story_query;

/* The query the arguments make (each NULL when absent): SB_OK, or
 * SB_ERR_ARGUMENT with why naming the argument and what it must be. */
sb_status ent_story_query_parse(const char *entity, const char *sequence_number, const char *message_id,
                                const char *top, const char *page, ent_story_query *out, char *why, size_t whylen);
/* The page argument that continues below event (id, ord): "id-ord". */
void ent_story_cursor_format(ent_story_cursor c, char *out, size_t n);

/* ---- what a subscription that took no copy is told ---- */

/* The names of a subscription's rules, ", "-separated, as the note of its
 * not-routed event (cut to fit n, "" for none). */
void ent_story_rule_names(const ent_filter_rule *rules, size_t nrules, char *out, size_t n);
/* Room for that note: every rule of a subscription listed is rare beyond a few. */
#define ENT_STORY_RULES_NOTE_SIZE 512

#endif
