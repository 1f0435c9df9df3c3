/* add-rule's request body, read and checked (mgmt_rules.h): rule-name, and
 * rule-description {sql-filter {expression, parameters?} | correlation-filter
 * {correlation-id, message-id, to, reply-to, label, session-id,
 * reply-to-session-id, content-type, properties} | neither (TrueFilter,
 * RuleDescription's default), sql-rule-action {expression, parameters?} or
 * null}. The SDKs send no parameters (JS managementClient.addRule, .NET
 * AmqpMessageConverter.GetRuleDescriptionMap); a raw client may. What the
 * client sent is kept as sent: .NET's TrueRuleFilter arrives as sql-filter
 * "1=1" and stays a SQL filter, which both SDKs read back as the same filter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_props.h"
#include "mgmt_rules.h"
#include "store_rule_json.h"

/* Characters of a property name quoted in an error. */
#define ITEM_NAME_CHARS 64

/* The correlation-filter map's keys, in ent_filter_correlation's order
 * (.NET ManagementConstants.Properties; JS managementClient.addRule). */
static const char *const correlation_keys[BROKER_RULE_CORRELATION_FIELDS] = {
    "correlation-id", "message-id", "to", "reply-to", "label", "session-id", "reply-to-session-id", "content-type",
};

/* ---- reading the request ---- */

/* Positions d on the value of key in the map node `map`; false when the key
 * is absent or its value null. */
static bool map_get(pn_data_t *d, pn_handle_t map, const char *key)
{
    return pn_data_restore(d, map) && mgmt_map_seek(d, key);
}

/* The string or symbol at the current node, copied (NUL-terminated) into *out. */
static int take_string(pn_data_t *d, const char *what, char **out, size_t *outlen, char *err, size_t errlen)
{
    pn_type_t t = pn_data_type(d);
    if (t != PN_STRING && t != PN_SYMBOL) {
        snprintf(err, errlen, "%s must be a string, not %s.", what, mgmt_type_name(t));
        return -1;
    }
    pn_bytes_t b = t == PN_STRING ? pn_data_get_string(d) : pn_data_get_symbol(d);
    if (ent_utf8_length_n(b.start, b.size) < 0 || memchr(b.start, 0, b.size)) {
        snprintf(err, errlen, "%s is not UTF-8 text.", what);
        return -1;
    }
    if (!(*out = ent_malloc(b.size + 1))) {
        snprintf(err, errlen, "out of memory reading %s", what);
        return -1;
    }
    memcpy(*out, b.start, b.size);
    (*out)[b.size] = 0;
    if (outlen)
        *outlen = b.size;
    return 0;
}

static bool is_integer(pn_type_t t)
{
    return t == PN_BYTE || t == PN_UBYTE || t == PN_SHORT || t == PN_USHORT || t == PN_INT || t == PN_UINT ||
           t == PN_LONG;
}

/* A described .NET value (timespan, datetime-offset, uri) at the current node. */
static int take_described(pn_data_t *d, ent_filter_value *v, char *err, size_t errlen, const char *what)
{
    pn_data_enter(d);
    bool ok = pn_data_next(d) && pn_data_type(d) == PN_SYMBOL;
    pn_bytes_t desc = ok ? pn_data_get_symbol(d) : (pn_bytes_t){0, NULL};
    ok = ok && pn_data_next(d);
    pn_type_t t = ok ? pn_data_type(d) : PN_NULL;
    int rc = -1;
    if (ok && desc.size == strlen(MGMT_DESC_TIMESPAN) && !memcmp(desc.start, MGMT_DESC_TIMESPAN, desc.size) &&
        is_integer(t)) {
        *v = ent_fv_duration(mgmt_get_integer(d) / ENT_TICKS_PER_MS);
        rc = 0;
    } else if (ok && desc.size == strlen(MGMT_DESC_DATETIME_OFFSET) &&
               !memcmp(desc.start, MGMT_DESC_DATETIME_OFFSET, desc.size) && is_integer(t)) {
        *v = ent_fv_time((mgmt_get_integer(d) - ENT_TICKS_AT_UNIX_EPOCH) / ENT_TICKS_PER_MS);
        rc = 0;
    } else if (ok && desc.size == strlen(MGMT_DESC_URI) && !memcmp(desc.start, MGMT_DESC_URI, desc.size)) {
        char *s;
        size_t len;
        if (!take_string(d, what, &s, &len, err, errlen)) {
            *v = ent_fv_string(s, len);
            rc = 0;
        }
        pn_data_exit(d);
        return rc;
    }
    pn_data_exit(d);
    if (rc)
        snprintf(err, errlen, "%s is a described value a rule cannot hold (timespan, datetime-offset and uri are known).",
                 what);
    return rc;
}

/* The value at the current node as the rule language holds it. Strings are
 * malloc'd (freed by props_free). */
static int take_value(pn_data_t *d, ent_filter_value *v, char *err, size_t errlen, const char *what)
{
    pn_type_t t = pn_data_type(d);
    switch (t) {
    case PN_NULL: *v = ent_fv_null(); return 0;
    case PN_BOOL: *v = ent_fv_bool(pn_data_get_bool(d)); return 0;
    case PN_ULONG: {
        uint64_t u = pn_data_get_ulong(d);
        *v = u > INT64_MAX ? ent_fv_double((double)u) : ent_fv_int((int64_t)u);
        return 0;
    }
    case PN_FLOAT: *v = ent_fv_double(pn_data_get_float(d)); return 0;
    case PN_DOUBLE: *v = ent_fv_double(pn_data_get_double(d)); return 0;
    case PN_TIMESTAMP: *v = ent_fv_time(pn_data_get_timestamp(d)); return 0;
    case PN_UUID: *v = ent_fv_uuid((const unsigned char *)pn_data_get_uuid(d).bytes); return 0;
    case PN_STRING:
    case PN_SYMBOL: {
        char *s;
        size_t len;
        if (take_string(d, what, &s, &len, err, errlen))
            return -1;
        *v = ent_fv_string(s, len);
        return 0;
    }
    case PN_DESCRIBED: return take_described(d, v, err, errlen, what);
    default:
        if (is_integer(t)) {
            *v = ent_fv_int(mgmt_get_integer(d));
            return 0;
        }
        snprintf(err, errlen, "%s is %s, which a rule cannot hold (string, number, boolean, timestamp, uuid, null).",
                 what, mgmt_type_name(t));
        return -1;
    }
}

/* The map at the current node as named values ({name: value}). *out and *n
 * always describe what was read so far, so props_free releases it. */
static int take_props(pn_data_t *d, const char *what, ent_filter_prop **out, size_t *n, char *err, size_t errlen)
{
    if (pn_data_type(d) != PN_MAP) {
        snprintf(err, errlen, "%s must be a map, not %s.", what, mgmt_type_name(pn_data_type(d)));
        return -1;
    }
    size_t count = pn_data_get_map(d) / 2;
    if (!(*out = ent_calloc(count ? count : 1, sizeof **out))) {
        snprintf(err, errlen, "out of memory reading %s", what);
        return -1;
    }
    pn_data_enter(d);
    char item[ITEM_NAME_CHARS * 4 + 96];
    for (size_t i = 0; i < count; i++) {
        ent_filter_prop *p = &(*out)[i];
        snprintf(item, sizeof item, "A key of %s", what);
        if (!pn_data_next(d) || take_string(d, item, (char **)&p->name, NULL, err, errlen))
            return -1;
        p->value = ent_fv_null();
        *n = i + 1;
        snprintf(item, sizeof item, "The value of '%.*s' in %s", ent_utf8_prefix(p->name, ITEM_NAME_CHARS), p->name,
                 what);
        if (!pn_data_next(d) || take_value(d, &p->value, err, errlen, item))
            return -1;
    }
    pn_data_exit(d);
    return 0;
}

/* {expression: string, parameters?: map} at map handle h. */
static int take_expression(pn_data_t *d, pn_handle_t h, const char *what, char **expr, ent_filter_prop **params,
                           size_t *nparams, char *err, size_t errlen)
{
    if (!pn_data_restore(d, h) || pn_data_type(d) != PN_MAP) {
        snprintf(err, errlen, "The rule-description's '%s' must be a map, not %s.", what,
                 mgmt_type_name(pn_data_type(d)));
        return -1;
    }
    char label[96];
    snprintf(label, sizeof label, "The '%s' map's 'expression'", what);
    if (!map_get(d, h, "expression")) {
        snprintf(err, errlen, "The rule-description's '%s' has no 'expression' (a string).", what);
        return -1;
    }
    if (take_string(d, label, expr, NULL, err, errlen))
        return -1;
    snprintf(label, sizeof label, "the '%s' map's 'parameters'", what);
    if (map_get(d, h, "parameters") && take_props(d, label, params, nparams, err, errlen))
        return -1;
    return 0;
}

int mgmt_rule_def_decode(pn_data_t *body, broker_rule_def *o, sb_status *st, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    *st = SB_ERR_ARGUMENT;
    if (mgmt_arg_string(body, "rule-name", true, o->name, sizeof o->name, err, errlen) ||
        broker_rule_name_check(o->name, strlen(o->name), st, err, errlen))
        return -1;
    if (!mgmt_map_find(body, "rule-description") || pn_data_type(body) != PN_MAP) {
        snprintf(err, errlen, "The request body has no 'rule-description' map (it holds the rule's filter and action).");
        return -1;
    }
    pn_handle_t desc = pn_data_point(body);
    pn_handle_t sql = map_get(body, desc, "sql-filter") ? pn_data_point(body) : 0;
    pn_handle_t corr = map_get(body, desc, "correlation-filter") ? pn_data_point(body) : 0;
    pn_handle_t action = map_get(body, desc, "sql-rule-action") ? pn_data_point(body) : 0;
    if (sql && corr) {
        snprintf(err, errlen, "The rule-description holds both a 'sql-filter' and a 'correlation-filter'; a rule has one filter.");
        return -1;
    }
    /* neither: RuleDescription's default filter, TrueFilter */
    o->kind = sql ? ENT_FILTER_KIND_SQL : corr ? ENT_FILTER_KIND_CORRELATION : ENT_FILTER_KIND_TRUE;
    if (sql && take_expression(body, sql, "sql-filter", &o->sql, &o->filter_params, &o->nfilter_params, err, errlen))
        return -1;
    if (corr) {
        if (!pn_data_restore(body, corr) || pn_data_type(body) != PN_MAP) {
            snprintf(err, errlen, "The rule-description's 'correlation-filter' must be a map, not %s.",
                     mgmt_type_name(pn_data_type(body)));
            return -1;
        }
        char what[96];
        for (size_t i = 0; i < BROKER_RULE_CORRELATION_FIELDS; i++) {
            snprintf(what, sizeof what, "The correlation-filter's '%s'", correlation_keys[i]);
            if (map_get(body, corr, correlation_keys[i]) &&
                take_string(body, what, &o->correlation_fields[i], NULL, err, errlen))
                return -1;
        }
        if (map_get(body, corr, "properties") &&
            take_props(body, "the correlation-filter's 'properties'", &o->correlation_props,
                       &o->ncorrelation_props, err, errlen))
            return -1;
    }
    if (action &&
        take_expression(body, action, "sql-rule-action", &o->action, &o->action_params, &o->naction_params, err, errlen))
        return -1;
    return broker_rule_def_finish(o, st, err, errlen);
}

