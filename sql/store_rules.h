/* A subscription's rules as the $management node changes and lists them
 * (add-rule, remove-rule, enumerate-rules). Same contract as store_mgmt.h:
 * callbacks run after the transaction is known, times are milliseconds from
 * the emulator's clock, and add and remove stamp entity_runtime.accessed_at
 * (a new rule is subscription activity for AutoDeleteOnIdle).
 *
 * The store only keeps rows: whether a filter or action parses is decided by
 * entities/ent_filter.h before a row is written. The rules table's trigger
 * NOTIFYs sbemu_entities, so every emulator's cache reloads the rules and the
 * next message routed sees the change. */
#ifndef STORE_RULES_H
#define STORE_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "ent_filter.h"
#include "ent_status.h"
#include "store.h"

/* Prepared statement names (SQL in store_mgmt_statements.c). */
#define STMT_RULE_ADD "sb_rule_add"
#define STMT_RULE_REMOVE "sb_rule_remove"
#define STMT_RULE_LIST "sb_rule_list"

/* One row of the rules table (migration 001, 006). Strings are NUL-terminated;
 * NULL is SQL NULL. The JSON columns are the texts store_rule_json.h reads and
 * writes. In a list callback everything points into the store's result and is
 * valid until the callback returns. */
typedef struct store_rule {
    const char *name;
    const char *filter_type;       /* "Sql", "Correlation", "True", "False" */
    const char *sql_expression;    /* Sql */
    const char *correlation;       /* Correlation: {"CorrelationId": ..., "Properties": {...}} */
    const char *filter_parameters; /* {name: value} or NULL */
    const char *action_expression; /* NULL: no action */
    const char *action_parameters; /* {name: value} or NULL */
    int64_t created_ms;            /* list: created_at; add: ignored (now_ms is written) */
} store_rule;

/* What an add decided. SB_OK: stored. SB_ERR_NOT_FOUND: the subscription is
 * gone. SB_ERR_ALREADY_EXISTS: a rule of that name (case-insensitive) exists.
 * SB_ERR_QUOTA_EXCEEDED: the topic already holds `limit` filters of this
 * kind (SQL-like or correlation, counted over all its subscriptions); `count`
 * is how many it holds. */
typedef void (*store_rule_add_cb)(void *ctx, sb_status st, int64_t count);

/* Inserts rule (created_at = now_ms) into the subscription unless its name is
 * taken or the topic is at `limit` filters of the rule's kind: True, False
 * and Sql count together, Correlation apart (Service Bus counts SQL and
 * correlation filters per topic). */
void store_rule_add(store *s, int64_t subscription_id, const store_rule *rule, int64_t limit, int64_t now_ms,
                    store_rule_add_cb cb, void *ctx);

/* Deletes the rule of that name (case-insensitive); SB_ERR_NOT_FOUND when the
 * subscription has none. */
typedef void (*store_rule_status_cb)(void *ctx, sb_status st);
void store_rule_remove(store *s, int64_t subscription_id, const char *name, int64_t now_ms, store_rule_status_cb cb,
                       void *ctx);

/* Up to top rules after skipping skip, oldest first (created_at, then name). */
typedef void (*store_rules_cb)(void *ctx, sb_status st, const store_rule *rules, size_t n);
void store_rule_list(store *s, int64_t subscription_id, int64_t skip, int64_t top, store_rules_cb cb, void *ctx);

/* rules.correlation for a correlation filter: the eight fields that are set
 * and "Properties" when it has any (keys as Config.json spells them).
 * Malloc'd; NULL when out of memory. The counterpart of
 * store_rule_correlation_parse. */
char *store_rule_correlation_json(const ent_filter_correlation *c);

#endif
