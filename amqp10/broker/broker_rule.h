/* A rule as a front door defines it (broker_rule.c): an add-rule request
 * on $management (amqp10/mgmt_rule_decode.c reads it) or a RuleDescription
 * through the ATOM API (amqp10/http/http_apply.c), checked the same way. */
#ifndef BROKER_RULE_H
#define BROKER_RULE_H

#include <stddef.h>

#include "ent_filter.h"
#include "ent_status.h"
#include "store_rules.h"

/* Service Bus limits (common-limits.md): filters per topic, over all its
 * subscriptions; True and False filters count as SQL filters. */
#define BROKER_RULES_SQL_FILTERS_PER_TOPIC 2000
#define BROKER_RULES_CORRELATION_FILTERS_PER_TOPIC 100000

/* Bytes of a rule-name as it may arrive, before its characters are counted
 * against ENT_RULE_NAME_MAX. */
#define BROKER_RULE_NAME_BYTES_MAX 1024

/* The correlation filter's string fields (ent_filter_correlation's order). */
#define BROKER_RULE_CORRELATION_FIELDS 8

/* A rule definition as read by a front door. Owns every string it points to;
 * free with broker_rule_def_free. `row` is what the store is given. */
typedef struct broker_rule_def {
    char name[BROKER_RULE_NAME_BYTES_MAX];
    ent_filter_kind kind;
    char *sql;                           /* ENT_FILTER_KIND_SQL */
    char *correlation_fields[BROKER_RULE_CORRELATION_FIELDS]; /* NULL: not set */
    ent_filter_prop *correlation_props;  /* names and strings from ent_malloc */
    size_t ncorrelation_props;
    ent_filter_prop *filter_params;
    size_t nfilter_params;
    char *action;                        /* NULL: no action */
    ent_filter_prop *action_params;
    size_t naction_params;
    char *correlation_json, *filter_params_json, *action_params_json;
    store_rule row;
} broker_rule_def;

/* Frees a list of named values and their strings (ent_malloc'd). */
void broker_rule_props_free(ent_filter_prop *p, size_t n);

/* The checks and the row of a definition filled by another reader (the ATOM
 * API, http_apply.c): its name, whether its filter and action compile, and
 * the JSON texts. Same answers as broker_rule_def_decode. */
int broker_rule_def_finish(broker_rule_def *o, sb_status *st, char *err, size_t errlen);
void broker_rule_def_free(broker_rule_def *d);

/* 0 when name may name a rule; else -1, *st and a reason in err. */
int broker_rule_name_check(const char *name, size_t len, sb_status *st, char *err, size_t errlen);

#endif
