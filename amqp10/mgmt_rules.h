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
#include "broker_rule.h"
#include "mgmt_internal.h"
#include "store_rules.h"

/* Rules one enumerate-rules answer carries at most. The SDKs page (.NET and
 * JS listRules ask 100 at a time and go on until a page comes back empty);
 * this only bounds what one response may weigh. */
#define MGMT_RULES_PAGE_MAX 1000
/* The compatibility-level the service reports for SQL filters and actions. */
#define MGMT_RULES_COMPATIBILITY_LEVEL 20

/* .NET types carried as described values (AmqpMessageConstants), as the
 * SDKs put them in application properties and correlation-filter properties. */
#define MGMT_DESC_TIMESPAN "com.microsoft:timespan"               /* long: TimeSpan ticks */
#define MGMT_DESC_DATETIME_OFFSET "com.microsoft:datetime-offset" /* long: UtcTicks */
#define MGMT_DESC_URI "com.microsoft:uri"                         /* string */

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

/* mgmt_rule_decode.c: reads rule-name and rule-description from an add-rule body (a map at the
 * top), checks the name, parses the filter and the action with the rule
 * language, and fills out (also on failure: free it either way). 0, or -1
 * with the status to answer in *st and its description in err (a bad
 * expression's description carries the parser's message and column). */
int mgmt_rule_def_decode(pn_data_t *body, broker_rule_def *out, sb_status *st, char *err, size_t errlen);

/* mgmt_rule_encode.c: writes the enumerate-rules answer {"rules": [{"rule-description": ...}]}
 * into an empty body. 0, or -1 with err naming the rule that could not be
 * encoded (a row written with plain SQL whose JSON does not read). */
int mgmt_rules_encode(pn_data_t *body, const store_rule *rules, size_t n, char *err, size_t errlen);

#endif
