/* The entities a configuration file declares, as plain data: what
 * emulator/emu_config_json.c reads from Config.json and sql/store_config.c
 * upserts into PostgreSQL. No I/O here.
 *
 * Ownership: an ent_config owns everything it points to. Start from
 * ent_config_init (or a zeroed struct), grow it with the ent_config_add_*
 * functions, release it with ent_config_free. Pointers returned by the add
 * functions stay valid only until the next add on the same array. */
#ifndef ENT_CONFIG_H
#define ENT_CONFIG_H

#include <stddef.h>

#include "ent_fault.h"
#include "ent_props.h"

#define ENT_CONFIG_DEFAULT_NAMESPACE "sbemulatorns"

typedef struct ent_subscription_config {
    ent_subscription_props props;
    ent_rule_props *rules;
    size_t nrules;   /* 0: the store gives it $Default (1=1) if it has no rule yet */
} ent_subscription_config;

typedef struct ent_topic_config {
    ent_topic_props props;
    ent_subscription_config *subscriptions;
    size_t nsubscriptions;
} ent_topic_config;

/* Room for a namespace's name as Config.json gives it (Service Bus allows 50 characters). */
#define ENT_CONFIG_NAMESPACE_NAME_SIZE 64

/* One namespace's entities, and (in the whole file's) the other namespaces'. */
typedef struct ent_config {
    char namespace_name[ENT_CONFIG_NAMESPACE_NAME_SIZE]; /* the first namespace's Name, "" if none */
    char logging_type[32];     /* Logging.Type as given ("File", "Console", ...), "" if absent */
    ent_queue_props *queues;
    size_t nqueues;
    ent_topic_config *topics;
    size_t ntopics;
    ent_fault_rule *faults;    /* UserConfig.Faults: fault rules for a fixed setup, checked */
    size_t nfaults;
    /* The file's other namespaces (Namespaces[1..], each named; one named as
     * an earlier one is merged into it), each its own ent_config with its
     * namespace_name; theirs have none of their own. The first namespace
     * (this struct's entities) is the default namespace. */
    struct ent_config *others;
    size_t nothers;
} ent_config;

void ent_config_init(ent_config *cfg);
void ent_config_free(ent_config *cfg);

/* Each appends an entry initialised from the given props (copied; rules are
 * deep-copied) and returns it, or NULL when out of memory. */
ent_queue_props *ent_config_add_queue(ent_config *cfg, const ent_queue_props *q);
ent_topic_config *ent_config_add_topic(ent_config *cfg, const ent_topic_props *t);
ent_subscription_config *ent_config_add_subscription(ent_topic_config *t, const ent_subscription_props *s);
ent_rule_props *ent_config_add_rule(ent_subscription_config *s, const ent_rule_props *r);
ent_fault_rule *ent_config_add_fault(ent_config *cfg, const ent_fault_rule *r);
/* Another namespace of that name (copied), with no entities; NULL when out of memory. */
ent_config *ent_config_add_namespace(ent_config *cfg, const char *name);
/* The other namespace of that name (any letter case), NULL when absent. */
ent_config *ent_config_find_namespace(const ent_config *cfg, const char *name);

/* Case-insensitive lookups (Service Bus names are). NULL when absent. */
ent_queue_props *ent_config_find_queue(const ent_config *cfg, const char *name);
ent_topic_config *ent_config_find_topic(const ent_config *cfg, const char *name);
ent_subscription_config *ent_config_find_subscription(const ent_topic_config *t, const char *name);
ent_rule_props *ent_config_find_rule(const ent_subscription_config *s, const char *name);

#endif
