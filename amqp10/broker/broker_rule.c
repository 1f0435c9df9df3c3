/* A rule as a front door defines it (an add-rule request on $management, a
 * RuleDescription PUT through the ATOM API), checked the same way for both:
 * its name, whether its filter and action compile in the rule language
 * (entities/ent_filter.h), and the row the store is given (sql/store_rules.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker_rule.h"
#include "ent_alloc.h"
#include "ent_props.h"
#include "store_rule_json.h"

void broker_rule_props_free(ent_filter_prop *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ent_free((char *)p[i].name);
        if (p[i].value.type == ENT_FV_STRING)
            ent_free((char *)p[i].value.u.s.ptr);
    }
    ent_free(p);
}

int broker_rule_name_check(const char *name, size_t len, sb_status *st, char *err, size_t errlen)
{
    *st = SB_ERR_ARGUMENT;
    long chars = ent_utf8_length_n(name, len);
    bool blank = true;
    for (size_t i = 0; i < len && blank; i++)
        blank = name[i] == ' ' || (name[i] >= '\t' && name[i] <= '\r');
    if (blank) {
        snprintf(err, errlen, "The rule name is empty; a rule needs a name.");
        return -1;
    }
    if (chars < 0) {
        snprintf(err, errlen, "The rule name is not UTF-8 text.");
        return -1;
    }
    if (chars > ENT_RULE_NAME_MAX) {
        *st = SB_ERR_ARGUMENT_RANGE;
        snprintf(err, errlen, "The rule name '%.*s...' is %ld characters long; the limit is %d.",
                 ent_utf8_prefix(name, ENT_RULE_NAME_MAX), name, chars, ENT_RULE_NAME_MAX);
        return -1;
    }
    size_t bad = strcspn(name, ENT_CHILD_NAME_FORBIDDEN_CHARS);
    if (bad < len) {
        snprintf(err, errlen, "The rule name '%s' contains '%c', which a rule name may not hold (%s).", name, name[bad],
                 ENT_CHILD_NAME_FORBIDDEN_CHARS);
        return -1;
    }
    return 0;
}

static const char *filter_type_name(ent_filter_kind k)
{
    switch (k) {
    case ENT_FILTER_KIND_SQL: return "Sql";
    case ENT_FILTER_KIND_CORRELATION: return "Correlation";
    case ENT_FILTER_KIND_FALSE: return "False";
    default: return "True";
    }
}

/* Parses what was read with the rule language: the service refuses a rule
 * whose filter or action does not compile, with the parser's position. */
static int compile(broker_rule_def *o, sb_status *st, char *err, size_t errlen)
{
    ent_filter_error fe = {0};
    ent_filter *f = NULL;
    int rc = 0;
    if (o->kind == ENT_FILTER_KIND_SQL) {
        rc = ent_filter_parse(o->sql, strlen(o->sql), o->filter_params, o->nfilter_params, &f, &fe);
        if (rc)
            snprintf(err, errlen, "The SQL filter of rule '%s' is invalid: %s.", o->name, fe.message);
    } else if (o->kind == ENT_FILTER_KIND_CORRELATION) {
        char **c = o->correlation_fields;
        ent_filter_correlation spec = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                                       o->correlation_props, o->ncorrelation_props};
        rc = ent_filter_new_correlation(&spec, &f, &fe);
        if (rc)
            snprintf(err, errlen, "The correlation filter of rule '%s' is invalid: %s.", o->name, fe.message);
    }
    ent_filter_free(f);
    if (!rc && o->action) {
        ent_filter_action *a = NULL;
        rc = ent_filter_action_parse(o->action, strlen(o->action), o->action_params, o->naction_params, &a, &fe);
        if (rc)
            snprintf(err, errlen, "The SQL action of rule '%s' is invalid: %s.", o->name, fe.message);
        ent_filter_action_free(a);
    }
    if (rc)
        *st = ent_filter_error_status(&fe);
    return rc;
}

/* The JSON texts and the row the store is given. */
static int make_row(broker_rule_def *o)
{
    if (o->kind == ENT_FILTER_KIND_CORRELATION) {
        char **c = o->correlation_fields;
        ent_filter_correlation spec = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                                       o->correlation_props, o->ncorrelation_props};
        if (!(o->correlation_json = store_rule_correlation_json(&spec)))
            return -1;
    }
    if (o->nfilter_params && !(o->filter_params_json = store_rule_props_json(o->filter_params, o->nfilter_params)))
        return -1;
    if (o->naction_params && !(o->action_params_json = store_rule_props_json(o->action_params, o->naction_params)))
        return -1;
    o->row = (store_rule){
        .name = o->name,
        .filter_type = filter_type_name(o->kind),
        .sql_expression = o->kind == ENT_FILTER_KIND_SQL ? o->sql : NULL,
        .correlation = o->correlation_json,
        .filter_parameters = o->filter_params_json,
        .action_expression = o->action,
        .action_parameters = o->action_params_json,
    };
    return 0;
}

int broker_rule_def_finish(broker_rule_def *o, sb_status *st, char *err, size_t errlen)
{
    if (broker_rule_name_check(o->name, strlen(o->name), st, err, errlen) || compile(o, st, err, errlen))
        return -1;
    if (make_row(o)) {
        *st = SB_ERR_INTERNAL;
        snprintf(err, errlen, "The emulator ran out of memory storing rule '%s'.", o->name);
        return -1;
    }
    *st = SB_OK;
    return 0;
}

void broker_rule_def_free(broker_rule_def *o)
{
    ent_free(o->sql);
    ent_free(o->action);
    for (size_t i = 0; i < BROKER_RULE_CORRELATION_FIELDS; i++)
        ent_free(o->correlation_fields[i]);
    broker_rule_props_free(o->correlation_props, o->ncorrelation_props);
    broker_rule_props_free(o->filter_params, o->nfilter_params);
    broker_rule_props_free(o->action_params, o->naction_params);
    ent_free(o->correlation_json);
    ent_free(o->filter_params_json);
    ent_free(o->action_params_json);
    memset(o, 0, sizeof *o);
}
