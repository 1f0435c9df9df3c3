/* The entities an emulator knows, in process: every queue, topic and
 * subscription with the properties a link acts on, found by namespace and
 * name (case-insensitive, as Service Bus names are; a subscription's name is
 * its path `topic/Subscriptions/sub`) or by id (ids are one space for every
 * namespace), and every subscription's rules,
 * compiled once per refill (entities/ent_topic.h routes with them). It is refilled whole from the database at start and whenever the
 * entity tables change (sbemu_entities), so a row changed with plain SQL, by
 * the management plane or by another emulator is what links act on next.
 *
 * Decisions that follow from entity properties are made here, not in SQL:
 * where a send lands (the end of the ForwardTo chain) and whether that end
 * takes it. Pure C, no I/O: the store fills it (store_load_entities, sql/store_entities.c). */
#ifndef ENT_CACHE_H
#define ENT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_address.h"
#include "ent_filter.h"
#include "ent_namespace.h"

/* Longest status column value ("ReceiveDisabled") and its NUL. */
#define ENT_STATUS_MAX 24

typedef enum ent_kind { ENT_KIND_QUEUE = 0, ENT_KIND_TOPIC, ENT_KIND_SUBSCRIPTION } ent_kind;

/* One entity row, as the cache holds it. Durations in milliseconds, -1 for
 * unlimited; empty strings for "not set". A topic's delivery fields (lock
 * duration, delivery count) are unused; a subscription's max_size_mb is its
 * topic's. */
typedef struct ent_entity {
    int64_t id;
    /* The namespace it is in (ent_namespace.h); its subscriptions are in
     * their topic's. 0 reads as the default namespace (ENT_NAMESPACE_DEFAULT_ID). */
    int32_t namespace_id;
    ent_kind kind;
    int64_t topic_id; /* subscriptions: their topic; else 0 */
    bool dead_lettering_on_filter_exceptions; /* subscriptions */
    char name[ENT_ENTITY_PATH_MAX + 1];
    char status[ENT_STATUS_MAX];
    bool requires_session;
    int64_t lock_duration_ms;
    int32_t max_delivery_count;
    int64_t default_ttl_ms;
    bool dead_lettering_on_expiration;
    int64_t max_size_mb;
    bool requires_duplicate_detection;
    int64_t duplicate_window_ms;
    char forward_to[ENT_ENTITY_PATH_MAX + 1];
    char forward_dead_lettered_to[ENT_ENTITY_PATH_MAX + 1];
} ent_entity;

/* Where a link's messages go, resolved from the cache: the entity's own
 * properties are the ent_entity next to it. A copy (owned by the link),
 * refreshed when the cache is. */
typedef struct ent_route {
    /* Where sends go: the end of the ForwardTo chain (the entity when none). */
    int64_t send_target_id;
    ent_kind send_target_kind; /* a topic routes to its subscriptions (broker_publish) */
    int64_t send_target_default_ttl_ms;
    bool send_target_requires_session; /* its sends must carry a SessionId */
    char send_target_status[ENT_STATUS_MAX]; /* whether the chain's end takes the send */
    bool forward_hops_exceeded;              /* the chain is longer than ENT_MAX_FORWARD_HOPS */
    /* Where its dead letters go (ForwardDeadLetteredMessagesTo); 0: its own
     * dead-letter subqueue. */
    int64_t dead_letter_target_id;
} ent_route;

/* One row of the rules table, as the store read it; everything borrowed for
 * the call that takes it. */
typedef struct ent_rule_def {
    int64_t subscription_id;
    const char *name;
    const char *filter_type;            /* "Sql", "Correlation", "True", "False" */
    const char *sql_expression;         /* Sql */
    ent_filter_correlation correlation; /* Correlation */
    const ent_filter_prop *filter_params;
    size_t nfilter_params;
    const char *action_expression; /* NULL or "": no action */
    const ent_filter_prop *action_params;
    size_t naction_params;
} ent_rule_def;

/* Owned by its creator; holds copies of what it was given. */
typedef struct ent_cache ent_cache;

ent_cache *ent_cache_new(void);
void ent_cache_free(ent_cache *c);
/* Replaces everything with these n entities (copied) and their rules
 * (compiled; a rule that does not compile, which only plain SQL can insert,
 * is logged and matches nothing; a rule of an unknown subscription is
 * ignored). -1 when out of memory (the old content stays). */
int ent_cache_replace(ent_cache *c, const ent_entity *list, size_t n, const ent_rule_def *rules, size_t nrules);
size_t ent_cache_count(const ent_cache *c);
/* Increases at every replace: a reader can tell it has seen the newest. */
uint64_t ent_cache_generation(const ent_cache *c);

/* The entity of that name in namespace ns (0: the default namespace); NULL
 * when unknown. Pointers stay valid until the next replace. */
const ent_entity *ent_cache_find(const ent_cache *c, int32_t ns, const char *name);
const ent_entity *ent_cache_get(const ent_cache *c, int64_t id);

/* Where a send to e lands: the end of its ForwardTo chain (names are e's
 * namespace's: a chain never leaves it), following at most
 * ENT_MAX_FORWARD_HOPS hops (hops_exceeded set when the chain is longer or
 * loops; the send then dead-letters in e). A ForwardTo naming no entity ends
 * the chain where it is. Never NULL. */
const ent_entity *ent_cache_send_target(const ent_cache *c, const ent_entity *e, bool *hops_exceeded);
/* Where e's dead letters go: the entity its ForwardDeadLetteredMessagesTo
 * names, or NULL for its own dead-letter subqueue (unset, unknown, itself). */
const ent_entity *ent_cache_dead_letter_target(const ent_cache *c, const ent_entity *e);
/* Entity i, 0 <= i < count, in no particular order (to walk them all). */
const ent_entity *ent_cache_at(const ent_cache *c, size_t i);

/* Where e's sends and dead letters go. */
void ent_cache_route(const ent_cache *c, const ent_entity *e, ent_route *out);

/* The subscriptions of a topic (by id), in name order; *n = 0 for none. */
const ent_entity *const *ent_cache_subscriptions(const ent_cache *c, const ent_entity *topic, size_t *n);
/* A subscription's rules in the order they were created; *n = 0 for none. */
const ent_filter_rule *ent_cache_rules(const ent_cache *c, const ent_entity *subscription, size_t *n);

#endif
