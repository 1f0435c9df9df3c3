/* enumerate-rules' answer (mgmt_rules.h): `rules`, a list (not an array:
 * .NET reads List<AmqpMap>) of {rule-description: described list [filter,
 * action, name, created-at]}, each filter and action a described list with
 * the codes of wire-protocol §7.3 (AmqpRuleDescriptionCodec and friends in
 * .NET, Constants.descriptorCodes in JS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "mgmt_rules.h"
#include "store_rule_json.h"

static void put_string_or_null(pn_data_t *d, const char *s)
{
    if (s)
        mgmt_put_string(d, s);
    else
        pn_data_put_null(d);
}

/* Opens described(code, list[...]); close with described_end. */
static void described_begin(pn_data_t *d, uint64_t code)
{
    pn_data_put_described(d);
    pn_data_enter(d);
    pn_data_put_ulong(d, code);
    pn_data_put_list(d);
    pn_data_enter(d);
}

static void described_end(pn_data_t *d)
{
    pn_data_exit(d);
    pn_data_exit(d);
}

/* A value as the SDKs read it back: int64 as long, timespan as .NET sends
 * it (described long ticks). */
static void put_value(pn_data_t *d, const ent_filter_value *v)
{
    switch (v->type) {
    case ENT_FV_NULL: pn_data_put_null(d); break;
    case ENT_FV_BOOL: pn_data_put_bool(d, v->u.b); break;
    case ENT_FV_INT: pn_data_put_long(d, v->u.i); break;
    case ENT_FV_DOUBLE: pn_data_put_double(d, v->u.d); break;
    case ENT_FV_STRING: pn_data_put_string(d, pn_bytes(v->u.s.len, v->u.s.ptr)); break;
    case ENT_FV_TIME: pn_data_put_timestamp(d, v->u.i); break;
    case ENT_FV_DURATION:
        pn_data_put_described(d);
        pn_data_enter(d);
        pn_data_put_symbol(d, pn_bytes(strlen(MGMT_DESC_TIMESPAN), MGMT_DESC_TIMESPAN));
        pn_data_put_long(d, v->u.i * ENT_TICKS_PER_MS);
        pn_data_exit(d);
        break;
    case ENT_FV_UUID: {
        pn_uuid_t u;
        memcpy(u.bytes, v->u.uuid, 16);
        pn_data_put_uuid(d, u);
        break;
    }
    }
}

static int put_correlation(pn_data_t *d, const store_rule *x, char *err, size_t errlen)
{
    ent_filter_correlation c;
    char *storage = NULL;
    store_rule_props props;
    char why[200];
    if (store_rule_correlation_parse(x->correlation, &c, &storage, &props, why, sizeof why)) {
        snprintf(err, errlen, "Rule '%s' has a correlation filter the emulator cannot read: %s.", x->name, why);
        return -1;
    }
    described_begin(d, MGMT_DESC_CORRELATION_FILTER);
    const char *fields[BROKER_RULE_CORRELATION_FIELDS] = {c.correlation_id, c.message_id, c.to, c.reply_to,
                                              c.label, c.session_id, c.reply_to_session_id, c.content_type};
    for (size_t i = 0; i < BROKER_RULE_CORRELATION_FIELDS; i++)
        put_string_or_null(d, fields[i]);
    pn_data_put_map(d);
    pn_data_enter(d);
    for (size_t i = 0; i < props.n; i++) {
        mgmt_put_string(d, props.props[i].name);
        put_value(d, &props.props[i].value);
    }
    pn_data_exit(d);
    described_end(d);
    ent_free(storage);
    store_rule_props_free(&props);
    return 0;
}

static int put_filter(pn_data_t *d, const store_rule *x, char *err, size_t errlen)
{
    const char *t = x->filter_type ? x->filter_type : "";
    if (!strcmp(t, "Sql")) {
        described_begin(d, MGMT_DESC_SQL_FILTER);
        put_string_or_null(d, x->sql_expression);
        pn_data_put_int(d, MGMT_RULES_COMPATIBILITY_LEVEL);
        described_end(d);
    } else if (!strcmp(t, "True") || !strcmp(t, "False")) {
        described_begin(d, t[0] == 'T' ? MGMT_DESC_TRUE_FILTER : MGMT_DESC_FALSE_FILTER);
        described_end(d);
    } else if (!strcmp(t, "Correlation")) {
        return put_correlation(d, x, err, errlen);
    } else {
        snprintf(err, errlen, "Rule '%s' has a filter type '%s' the emulator does not know.", x->name, t);
        return -1;
    }
    return 0;
}

static void put_action(pn_data_t *d, const store_rule *x)
{
    if (!x->action_expression || !*x->action_expression) {
        described_begin(d, MGMT_DESC_EMPTY_ACTION);
        described_end(d);
        return;
    }
    described_begin(d, MGMT_DESC_SQL_ACTION);
    mgmt_put_string(d, x->action_expression);
    pn_data_put_int(d, MGMT_RULES_COMPATIBILITY_LEVEL);
    described_end(d);
}

int mgmt_rules_encode(pn_data_t *body, const store_rule *rules, size_t n, char *err, size_t errlen)
{
    pn_data_put_map(body);
    pn_data_enter(body);
    mgmt_put_string(body, "rules");
    pn_data_put_list(body);
    pn_data_enter(body);
    for (size_t i = 0; i < n; i++) {
        const store_rule *x = &rules[i];
        pn_data_put_map(body);
        pn_data_enter(body);
        mgmt_put_string(body, "rule-description");
        described_begin(body, MGMT_DESC_RULE_DESCRIPTION);
        if (put_filter(body, x, err, errlen))
            return -1;
        put_action(body, x);
        put_string_or_null(body, x->name);
        pn_data_put_timestamp(body, x->created_ms);
        described_end(body);
        pn_data_exit(body);
    }
    pn_data_exit(body);
    pn_data_exit(body);
    return 0;
}
