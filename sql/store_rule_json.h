/* Rule values as the rules table keeps them (migration 006): @parameters and
 * correlation-filter properties are JSON objects {name: value}, where strings,
 * integers, doubles, booleans and null are themselves and the other Service
 * Bus types are {"type": "timestamp" | "timespan" | "guid", "value": text}
 * (ISO 8601, C# TimeSpan "c" form, 8-4-4-4-12). The cache reads them, the
 * management plane and Config.json write them. */
#ifndef STORE_RULE_JSON_H
#define STORE_RULE_JSON_H

#include <stddef.h>

#include "ent_alloc.h"
#include "ent_filter.h"

struct json_t;

/* j as JSON text (json_dumps flags) in memory of ent_malloc, so that every
 * string the store hands out is freed one way (ent_free), not some with
 * jansson's free. NULL when out of memory. */
char *store_json_text(const struct json_t *j, size_t flags);

/* A parsed object: props[i].name and string values point into storage the
 * list owns. Free with store_rule_props_free. */
typedef struct store_rule_props {
    ent_filter_prop *props;
    size_t n;
    char *storage;
} store_rule_props;

/* json NULL or "" gives an empty list. 0, or -1 with a reason in err (not an
 * object, a value of no known type). */
int store_rule_props_parse(const char *json, store_rule_props *out, char *err, size_t errlen);
void store_rule_props_free(store_rule_props *p);

/* rules.correlation: the filter's fields and properties. Strings point
 * into storage (fields) and props (properties), which the caller frees with
 * ent_free() and store_rule_props_free. 0, or -1 with a reason in err. */
int store_rule_correlation_parse(const char *json, ent_filter_correlation *out, char **storage,
                                 store_rule_props *props, char *err, size_t errlen);

/* The JSON text of n values (malloc'd, caller frees); NULL when out of memory. */
char *store_rule_props_json(const ent_filter_prop *props, size_t n);

#endif
