/* The rows of the management plane (the ATOM API, amqp10/http_*.c): queues,
 * topics and subscriptions read, listed, created, replaced and deleted by
 * name, with their runtime figures; rules go through store_rules.h once the
 * subscription's id is known. Same contract as store_queue.h: callbacks run
 * once the transaction is known; times are milliseconds from the emulator's
 * clock. Names match in any letter case, as Service Bus names do.
 *
 * The entity tables' triggers NOTIFY sbemu_entities on every change, so every
 * emulator on the database sees an entity made or changed here at once (the
 * caller waits for its own cache to refill before it answers).
 *
 * Entity rows are read and written through the column tables of
 * store_columns.h (which says how each property is encoded), as the
 * Config.json upsert's are. */
#ifndef STORE_ADMIN_H
#define STORE_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_props.h"
#include "ent_status.h"
#include "store.h"
#include "store_queue.h"
#include "store_rules.h"

/* Prepared statement names (SQL in store_admin_statements.c). */
#define STMT_ADMIN_NAME_LOCK "sb_admin_name_lock"
#define STMT_ADMIN_QUEUE_GET "sb_admin_queue_get"
#define STMT_ADMIN_QUEUE_LIST "sb_admin_queue_list"
#define STMT_ADMIN_QUEUE_CREATE "sb_admin_queue_create"
#define STMT_ADMIN_QUEUE_UPDATE "sb_admin_queue_update"
#define STMT_ADMIN_TOUCH_NEW "sb_admin_touch_new"
#define STMT_ADMIN_TOPIC_GET "sb_admin_topic_get"
#define STMT_ADMIN_TOPIC_LIST "sb_admin_topic_list"
#define STMT_ADMIN_TOPIC_CREATE "sb_admin_topic_create"
#define STMT_ADMIN_TOPIC_UPDATE "sb_admin_topic_update"
#define STMT_ADMIN_ENTITY_DELETE "sb_admin_entity_delete"
#define STMT_ADMIN_SUB_GET "sb_admin_subscription_get"
#define STMT_ADMIN_SUB_LIST "sb_admin_subscription_list"
#define STMT_ADMIN_SUB_CREATE "sb_admin_subscription_create"
#define STMT_ADMIN_SUB_DEFAULT_RULE "sb_admin_subscription_default_rule"
#define STMT_ADMIN_SUB_TOUCH_NEW "sb_admin_subscription_touch_new"
#define STMT_ADMIN_SUB_UPDATE "sb_admin_subscription_update"
#define STMT_ADMIN_SUB_DELETE "sb_admin_subscription_delete"
#define STMT_ADMIN_RULE_GET "sb_admin_rule_get"
#define STMT_ADMIN_RULE_UPDATE "sb_admin_rule_update"
#define STMT_ADMIN_NAMESPACE "sb_admin_namespace"
#define STMT_ADMIN_COUNTS "sb_admin_counts"

/* Messages counted in one range (an entity's active, dead-lettered or
 * scheduled ones) at most: a count walks an index range, and this bounds what
 * one request walks. Service Bus counts without a bound; an entity holding
 * more reports this many. */
#define STORE_ADMIN_COUNT_MAX INT64_C(10000000)

/* What the management API reports besides the properties. Counts follow
 * Service Bus: active holds deferred messages too; a topic holds only
 * scheduled ones; transfer counts are always 0 (no transfer queues here). */
typedef struct store_admin_runtime {
    int64_t id;
    int64_t created_ms, updated_ms, accessed_ms;
    int64_t size_in_bytes;  /* a topic: its own and its subscriptions' */
    int64_t active, dead_letter, scheduled;
    int64_t subscriptions;  /* topics */
    int64_t sql_filters, correlation_filters; /* topics: rules over all their subscriptions */
} store_admin_runtime;

typedef struct store_admin_queue {
    ent_queue_props props;
    store_admin_runtime rt;
} store_admin_queue;

typedef struct store_admin_topic {
    ent_topic_props props;
    store_admin_runtime rt;
} store_admin_topic;

typedef struct store_admin_subscription {
    ent_subscription_props props;
    store_admin_runtime rt;
} store_admin_subscription;

/* Rows handed to a callback belong to the store until it returns. A get
 * answers SB_OK with n = 0 when there is no such entity. total is how many
 * rows the list holds in all (a page is rows [skip, skip + n) of it). */
typedef void (*store_admin_queues_cb)(void *ctx, sb_status st, const store_admin_queue *rows, size_t n, int64_t total);
typedef void (*store_admin_topics_cb)(void *ctx, sb_status st, const store_admin_topic *rows, size_t n, int64_t total);
typedef void (*store_admin_subscriptions_cb)(void *ctx, sb_status st, const store_admin_subscription *rows, size_t n,
                                             int64_t total);

/* Every call that names entities names their namespace (ns: an id of the
 * namespaces table, ent_namespace.h); one namespace's entities are never
 * another's. */
void store_admin_get_queue(store *s, int32_t ns, const char *name, store_admin_queues_cb cb, void *ctx);
void store_admin_list_queues(store *s, int32_t ns, int64_t skip, int64_t top, store_admin_queues_cb cb, void *ctx);
void store_admin_get_topic(store *s, int32_t ns, const char *name, store_admin_topics_cb cb, void *ctx);
void store_admin_list_topics(store *s, int32_t ns, int64_t skip, int64_t top, store_admin_topics_cb cb, void *ctx);
void store_admin_get_subscription(store *s, int32_t ns, const char *topic, const char *name,
                                  store_admin_subscriptions_cb cb, void *ctx);
/* SB_ERR_NOT_FOUND when the topic does not exist. */
void store_admin_list_subscriptions(store *s, int32_t ns, const char *topic, int64_t skip, int64_t top,
                                    store_admin_subscriptions_cb cb, void *ctx);

/* Creates (update false) or replaces (update true) the entity with these
 * properties, created/updated at now_ms, and answers its row. Create:
 * SB_ERR_ALREADY_EXISTS when a queue or topic holds the name (a subscription:
 * its topic holds one of that name). Replace: SB_ERR_NOT_FOUND when there is
 * none; SB_ERR_NOT_ALLOWED, with the current row, when RequiresSession would
 * change (Service Bus refuses that on an existing queue or subscription).
 * Subscriptions: SB_ERR_NOT_FOUND with n = 0 also when the topic is missing.
 * A subscription created with default_rule (not NULL) gets that rule instead
 * of $Default. */
void store_admin_put_queue(store *s, int32_t ns, const ent_queue_props *q, bool update, int64_t now_ms,
                           store_admin_queues_cb cb, void *ctx);
void store_admin_put_topic(store *s, int32_t ns, const ent_topic_props *t, bool update, int64_t now_ms,
                           store_admin_topics_cb cb, void *ctx);
void store_admin_put_subscription(store *s, int32_t ns, const ent_subscription_props *sub,
                                  const store_rule *default_rule, bool update, int64_t now_ms,
                                  store_admin_subscriptions_cb cb, void *ctx);

/* Deletes the queue or topic of that name (with its subscriptions, rules and
 * messages); SB_ERR_NOT_FOUND when there is none. */
void store_admin_delete_entity(store *s, int32_t ns, const char *name, store_status_cb cb, void *ctx);
void store_admin_delete_subscription(store *s, int32_t ns, const char *topic, const char *name, store_status_cb cb,
                                     void *ctx);

/* One rule of a subscription by name (n = 0: none). */
typedef void (*store_admin_rule_cb)(void *ctx, sb_status st, const store_rule *rule, size_t n);
void store_admin_get_rule(store *s, int64_t subscription_id, const char *name, store_admin_rule_cb cb, void *ctx);
/* Replaces the filter and action of an existing rule; SB_ERR_NOT_FOUND when
 * there is none. */
void store_admin_update_rule(store *s, int64_t subscription_id, const store_rule *rule, int64_t now_ms,
                             store_rule_status_cb cb, void *ctx);

/* Every queue, topic and subscription with its counts, in one statement (GET
 * /metrics reads them at each scrape: the database's figures, which every
 * replica on it agrees on). The counts are the management API's (active holds
 * deferred messages too; each count stops at STORE_ADMIN_COUNT_MAX), with the
 * deferred ones also apart; a topic's size holds its subscriptions'.
 * store_admin_counts.c. */
typedef struct store_admin_counts_row {
    int64_t id;
    ent_kind kind;
    char path[ENT_ENTITY_PATH_MAX + 1]; /* a subscription's: topic/Subscriptions/name */
    int64_t size_in_bytes, active, dead_letter, scheduled, deferred;
    int32_t namespace_id;
} store_admin_counts_row;
/* rows belong to the store until cb returns. */
typedef void (*store_admin_counts_cb)(void *ctx, sb_status st, const store_admin_counts_row *rows, size_t n);
void store_admin_counts(store *s, store_admin_counts_cb cb, void *ctx);

/* Namespace ns: when it was made (the default's: its database) and when one
 * of its entities last changed. */
typedef void (*store_admin_namespace_cb)(void *ctx, sb_status st, int64_t created_ms, int64_t modified_ms);
void store_admin_namespace(store *s, int32_t ns, store_admin_namespace_cb cb, void *ctx);

#endif
