/* Rules over `<topic>/Subscriptions/<sub>/$management` (wire-protocol §7.3):
 * com.microsoft:add-rule, remove-rule and enumerate-rules, and the pure parts
 * behind them (request decoding and validation, the described types of the
 * enumerate response), which the unit tests drive without a link. */
#ifndef MGMT_RULES_H
#define MGMT_RULES_H

#include <proton/codec.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_duration.h"
#include "ent_filter.h"
#include "ent_status.h"
#include "mgmt_internal.h"
#include "store_rules.h"

/* Service Bus limits (common-limits.md): filters per topic, over all its
 * subscriptions; True and False filters count as SQL filters. */
#define MGMT_RULES_SQL_FILTERS_PER_TOPIC 2000
#define MGMT_RULES_CORRELATION_FILTERS_PER_TOPIC 100000
/* Rules one enumerate-rules answer carries at most. The SDKs page (.NET and
 * JS listRules ask 100 at a time and go on until a page comes back empty);
 * this only bounds what one response may weigh. */
#define MGMT_RULES_PAGE_MAX 1000
/* The compatibility-level the service reports for SQL filters and actions. */
#define MGMT_RULES_COMPATIBILITY_LEVEL 20
/* Bytes of a rule-name as it may arrive, before its characters are counted
 * against ENT_RULE_NAME_MAX. */
#define MGMT_RULE_NAME_BYTES_MAX 1024

/* .NET types carried as described values (AmqpMessageConstants), as the
 * SDKs put them in application properties and correlation-filter properties. */
#define MGMT_DESC_TIMESPAN "com.microsoft:timespan"               /* long: TimeSpan ticks */
#define MGMT_DESC_DATETIME_OFFSET "com.microsoft:datetime-offset" /* long: UtcTicks */
#define MGMT_DESC_URI "com.microsoft:uri"                         /* string */

/* The correlation filter's string fields (ent_filter_correlation's order). */
#define MGMT_RULE_CORRELATION_FIELDS 8

/* Descriptor codes of the enumerate-rules answer (wire-protocol §7.3 table).
 * The filter codes are 0x...1370000006, not 0x...13700000006: .NET writes
 * them with 15 hex digits and JS's decimals agree. */
#define MGMT_DESC_RULE_DESCRIPTION UINT64_C(0x0000013700000004)
#define MGMT_DESC_SQL_FILTER UINT64_C(0x0000001370000006)
#define MGMT_DESC_TRUE_FILTER UINT64_C(0x0000001370000007)
#define MGMT_DESC_FALSE_FILTER UINT64_C(0x0000001370000008)
#define MGMT_DESC_CORRELATION_FILTER UINT64_C(0x0000001370000009)
#define MGMT_DESC_EMPTY_ACTION UINT64_C(0x0000013700000005)
#define MGMT_DESC_SQL_ACTION UINT64_C(0x0000013700000006)

/* The operations (mgmt_rules.c; mgmt_node.c dispatches to them). */
void mgmt_add_rule(mgmt_req *r);
void mgmt_remove_rule(mgmt_req *r);
void mgmt_enumerate_rules(mgmt_req *r);

/* A decoded, validated add-rule request. Owns every string it points to;
 * free with mgmt_rule_def_free. `row` is what the store is given. */
typedef struct mgmt_rule_def {
    char name[MGMT_RULE_NAME_BYTES_MAX];
    ent_filter_kind kind;
    char *sql;                           /* ENT_FILTER_KIND_SQL */
    char *correlation_fields[MGMT_RULE_CORRELATION_FIELDS]; /* NULL: not set */
    ent_filter_prop *correlation_props;  /* names and strings from ent_malloc */
    size_t ncorrelation_props;
    ent_filter_prop *filter_params;
    size_t nfilter_params;
    char *action;                        /* NULL: no action */
    ent_filter_prop *action_params;
    size_t naction_params;
    char *correlation_json, *filter_params_json, *action_params_json;
    store_rule row;
} mgmt_rule_def;

/* mgmt_rule_decode.c: reads rule-name and rule-description from an add-rule body (a map at the
 * top), checks the name, parses the filter and the action with the rule
 * language, and fills out (also on failure: free it either way). 0, or -1
 * with the status to answer in *st and its description in err (a bad
 * expression's description carries the parser's message and column). */
int mgmt_rule_def_decode(pn_data_t *body, mgmt_rule_def *out, sb_status *st, char *err, size_t errlen);
/* The checks and the row of a definition filled by another reader (the ATOM
 * API, http_apply.c): its name, whether its filter and action compile, and
 * the JSON texts. Same answers as mgmt_rule_def_decode. */
int mgmt_rule_def_finish(mgmt_rule_def *o, sb_status *st, char *err, size_t errlen);
void mgmt_rule_def_free(mgmt_rule_def *d);

/* 0 when name may name a rule; else -1, *st and a reason in err. */
int mgmt_rule_name_check(const char *name, size_t len, sb_status *st, char *err, size_t errlen);

/* mgmt_rule_encode.c: writes the enumerate-rules answer {"rules": [{"rule-description": ...}]}
 * into an empty body. 0, or -1 with err naming the rule that could not be
 * encoded (a row written with plain SQL whose JSON does not read). */
int mgmt_rules_encode(pn_data_t *body, const store_rule *rules, size_t n, char *err, size_t errlen);

#endif
