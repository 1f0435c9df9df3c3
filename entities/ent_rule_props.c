/* Rule properties (declared in ent_props.h): the filter, its correlation
 * fields and user properties, the action. Unlike the other props, rules own
 * heap strings, hence init/free/copy. */
#include "ent_props.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void copy_text(char *dst, size_t dstsize, const char *src)
{
    snprintf(dst, dstsize, "%s", src ? src : "");
}

/* ---- Filter type names -------------------------------------------------- */

static const char *const filter_names[] = {
    [ENT_FILTER_TYPE_TRUE] = "True",
    [ENT_FILTER_TYPE_FALSE] = "False",
    [ENT_FILTER_TYPE_SQL] = "Sql",
    [ENT_FILTER_TYPE_CORRELATION] = "Correlation",
};
#define FILTER_COUNT (sizeof filter_names / sizeof filter_names[0])

const char *ent_filter_type_name(ent_filter_type t)
{
    return (unsigned)t < FILTER_COUNT ? filter_names[t] : "Unknown";
}

int ent_filter_type_parse(const char *name, ent_filter_type *out)
{
    if (!name)
        return -1;
    size_t n = strlen(name);
    /* "SqlFilter" and friends are the SDK type names. */
    if (n > 6 && !strcasecmp(name + n - 6, "Filter"))
        n -= 6;
    for (unsigned i = 0; i < FILTER_COUNT; i++)
        if (strlen(filter_names[i]) == n && !strncasecmp(name, filter_names[i], n)) {
            *out = (ent_filter_type)i;
            return 0;
        }
    return -1;
}

/* ---- Rule --------------------------------------------------------------- */

typedef struct who_buf {
    char text[ENT_ENTITY_PATH_SIZE + ENT_SUBSCRIPTION_NAME_SIZE + ENT_RULE_NAME_SIZE + 64];
} who_buf;

static void rule_who(const ent_rule_props *r, who_buf *w)
{
    snprintf(w->text, sizeof w->text, "rule \"%s/Subscriptions/%s/Rules/%s\"", r->topic, r->subscription, r->name);
}

sb_status ent_rule_props_init(ent_rule_props *r, const char *topic, const char *subscription, const char *name,
                              char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->filter_type = ENT_FILTER_TYPE_TRUE;
    sb_status st = ent_check_entity_path("topic name", topic, err, errlen);
    if (st != SB_OK)
        return st;
    char sub[512];
    st = ent_check_child_name("subscription name", subscription, ENT_SUBSCRIPTION_NAME_MAX, sub, sizeof sub);
    if (st != SB_OK)
        return ent_fail_status(st, err, errlen, "topic \"%s\": %s", topic, sub);
    copy_text(r->topic, sizeof r->topic, topic);
    copy_text(r->subscription, sizeof r->subscription, subscription);
    st = ent_check_child_name("rule name", name, ENT_RULE_NAME_MAX, sub, sizeof sub);
    if (st != SB_OK)
        return ent_fail_status(st, err, errlen, "subscription \"%s/Subscriptions/%s\": %s", topic, subscription, sub);
    copy_text(r->name, sizeof r->name, name);
    return SB_OK;
}

/* The correlation filter's system fields, by Config.json name. */
typedef struct corr_field {
    const char *name;
    const char *alias;
    size_t offset;
} corr_field;

static const corr_field corr_fields[] = {
    {"ContentType", NULL, offsetof(ent_correlation_filter, content_type)},
    {"CorrelationId", NULL, offsetof(ent_correlation_filter, correlation_id)},
    {"Label", "Subject", offsetof(ent_correlation_filter, subject)},
    {"MessageId", NULL, offsetof(ent_correlation_filter, message_id)},
    {"ReplyTo", NULL, offsetof(ent_correlation_filter, reply_to)},
    {"ReplyToSessionId", NULL, offsetof(ent_correlation_filter, reply_to_session_id)},
    {"SessionId", NULL, offsetof(ent_correlation_filter, session_id)},
    {"To", NULL, offsetof(ent_correlation_filter, to)},
};

static char **corr_slot(ent_correlation_filter *c, const corr_field *f)
{
    return (char **)((char *)c + f->offset);
}

static void free_property(ent_correlation_property *p)
{
    ent_free(p->name);
    if (p->value.type == ENT_VALUE_STRING)
        ent_free((char *)p->value.u.s);
}

void ent_rule_props_free(ent_rule_props *r)
{
    if (!r)
        return;
    ent_free(r->sql_expression);
    ent_free(r->action_expression);
    for (size_t i = 0; i < COUNT(corr_fields); i++)
        ent_free(*corr_slot(&r->correlation, &corr_fields[i]));
    for (size_t i = 0; i < r->correlation.nproperties; i++)
        free_property(&r->correlation.properties[i]);
    ent_free(r->correlation.properties);
    r->sql_expression = r->action_expression = NULL;
    memset(&r->correlation, 0, sizeof r->correlation);
}

static int dup_opt(char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = ent_strdup(src);
    return *dst ? 0 : -1;
}

int ent_rule_props_copy(ent_rule_props *dst, const ent_rule_props *src)
{
    *dst = *src;
    dst->sql_expression = dst->action_expression = NULL;
    memset(&dst->correlation, 0, sizeof dst->correlation);
    int bad = dup_opt(&dst->sql_expression, src->sql_expression) |
              dup_opt(&dst->action_expression, src->action_expression);
    for (size_t i = 0; i < COUNT(corr_fields); i++)
        bad |= dup_opt(corr_slot(&dst->correlation, &corr_fields[i]),
                       *corr_slot((ent_correlation_filter *)&src->correlation, &corr_fields[i]));
    if (src->correlation.nproperties) {
        dst->correlation.properties = ent_calloc(src->correlation.nproperties, sizeof *dst->correlation.properties);
        if (!dst->correlation.properties)
            bad = -1;
        for (size_t i = 0; !bad && i < src->correlation.nproperties; i++) {
            const ent_correlation_property *sp = &src->correlation.properties[i];
            ent_correlation_property *dp = &dst->correlation.properties[i];
            dst->correlation.nproperties = i + 1;
            dp->value = sp->value;
            dp->value.u.s = NULL;
            if (sp->value.type != ENT_VALUE_STRING)
                dp->value = sp->value;
            else if (dup_opt((char **)&dp->value.u.s, sp->value.u.s))
                bad = -1;
            if (dup_opt(&dp->name, sp->name))
                bad = -1;
        }
    }
    if (bad) {
        ent_rule_props_free(dst);
        return -1;
    }
    return 0;
}

/* Replaces *slot with a copy of s (NULL clears). */
static sb_status set_owned(char **slot, const char *s, const char *who, const char *prop, char *err, size_t errlen)
{
    char *copy = NULL;
    if (s && !(copy = ent_strdup(s)))
        return ent_fail_status(SB_ERR_INTERNAL, err, errlen, "%s: %s: out of memory", who, prop);
    ent_free(*slot);
    *slot = copy;
    return SB_OK;
}

static sb_status check_expression(const char *who, const char *prop, const char *s, char *err, size_t errlen)
{
    long chars = ent_utf8_length(s);
    if (chars < 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s is not valid UTF-8", who, prop);
    if (chars > ENT_SQL_EXPRESSION_MAX)
        return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s is %ld characters, above the maximum %d",
                               who, prop, chars, ENT_SQL_EXPRESSION_MAX);
    return SB_OK;
}

static int blank(const char *s)
{
    if (!s)
        return 1;
    while (isspace((unsigned char)*s))
        s++;
    return !*s;
}

static sb_status set_correlation_property(ent_rule_props *r, const char *who, const char *pname, ent_value v,
                                          char *err, size_t errlen)
{
    ent_correlation_filter *c = &r->correlation;
    if (!*pname)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "%s: CorrelationFilter.Properties has an empty property name", who);
    size_t at = c->nproperties;
    for (size_t i = 0; i < c->nproperties; i++)
        if (!strcmp(c->properties[i].name, pname))
            at = i;
    if (v.type == ENT_VALUE_NULL) {
        if (at < c->nproperties) {
            free_property(&c->properties[at]);
            memmove(&c->properties[at], &c->properties[at + 1], (c->nproperties - at - 1) * sizeof *c->properties);
            c->nproperties--;
        }
        return SB_OK;
    }
    ent_correlation_property np = {.value = v};
    np.name = ent_strdup(pname);
    if (v.type == ENT_VALUE_STRING)
        np.value.u.s = ent_strdup(v.u.s);
    if (!np.name || (v.type == ENT_VALUE_STRING && !np.value.u.s)) {
        free_property(&np);
        return ent_fail_status(SB_ERR_INTERNAL, err, errlen, "%s: CorrelationFilter.Properties.%s: out of memory", who,
                               pname);
    }
    if (at == c->nproperties) {
        ent_correlation_property *grown = ent_realloc(c->properties, (c->nproperties + 1) * sizeof *grown);
        if (!grown) {
            free_property(&np);
            return ent_fail_status(SB_ERR_INTERNAL, err, errlen, "%s: CorrelationFilter.Properties.%s: out of memory",
                                   who, pname);
        }
        c->properties = grown;
        c->nproperties++;
    } else {
        free_property(&c->properties[at]);
    }
    c->properties[at] = np;
    return SB_OK;
}

static int has_prefix_ci(const char *s, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncasecmp(s, prefix, n))
        return 0;
    *rest = s + n;
    return 1;
}

sb_status ent_rule_set(ent_rule_props *r, const char *property, ent_value v, char *err, size_t errlen)
{
    who_buf w;
    rule_who(r, &w);
    const char *who = w.text;
    const char *rest;
    if (!property)
        property = "(null)";
    if (!strcasecmp(property, "FilterType")) {
        ent_filter_type t;
        if (v.type != ENT_VALUE_STRING)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s: FilterType must be \"Sql\" or \"Correlation\", got %s", who,
                                   ent_value_type_name(v.type));
        if (ent_filter_type_parse(v.u.s, &t))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s: FilterType \"%s\" is not one of Sql, Correlation, True, False", who, v.u.s);
        r->filter_type = t;
        return SB_OK;
    }
    if (!strcasecmp(property, "SqlFilter.SqlExpression") || !strcasecmp(property, "Action.SqlExpression")) {
        int is_action = !strncasecmp(property, "Action", 6);
        const char *canon = is_action ? "Action.SqlExpression" : "SqlFilter.SqlExpression";
        if (v.type != ENT_VALUE_STRING && v.type != ENT_VALUE_NULL)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s must be a string, got %s", who, canon,
                                   ent_value_type_name(v.type));
        const char *s = v.type == ENT_VALUE_STRING ? v.u.s : NULL;
        if (s) {
            sb_status st = check_expression(who, canon, s, err, errlen);
            if (st != SB_OK)
                return st;
        }
        /* An empty or blank action is no action. */
        if (is_action && blank(s))
            s = NULL;
        return set_owned(is_action ? &r->action_expression : &r->sql_expression, s, who, canon, err, errlen);
    }
    if (has_prefix_ci(property, "CorrelationFilter.Properties.", &rest)) {
        if (v.type != ENT_VALUE_NULL && v.type != ENT_VALUE_STRING && v.type != ENT_VALUE_INT &&
            v.type != ENT_VALUE_DOUBLE && v.type != ENT_VALUE_BOOL)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s: CorrelationFilter.Properties.%s has an unusable type", who, rest);
        return set_correlation_property(r, who, rest, v, err, errlen);
    }
    if (has_prefix_ci(property, "CorrelationFilter.", &rest)) {
        for (size_t i = 0; i < COUNT(corr_fields); i++) {
            const corr_field *f = &corr_fields[i];
            if (strcasecmp(rest, f->name) && !(f->alias && !strcasecmp(rest, f->alias)))
                continue;
            if (v.type != ENT_VALUE_STRING && v.type != ENT_VALUE_NULL)
                return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                       "%s: CorrelationFilter.%s must be a string, got %s", who, f->name,
                                       ent_value_type_name(v.type));
            return set_owned(corr_slot(&r->correlation, f), v.type == ENT_VALUE_STRING ? v.u.s : NULL, who,
                             f->name, err, errlen);
        }
    }
    return ent_fail_status(SB_ERR_NOT_FOUND, err, errlen, "%s: unknown property \"%s\" for a rule", who, property);
}

static int correlation_empty(const ent_correlation_filter *c)
{
    for (size_t i = 0; i < COUNT(corr_fields); i++)
        if (*corr_slot((ent_correlation_filter *)c, &corr_fields[i]))
            return 0;
    return c->nproperties == 0;
}

sb_status ent_rule_validate(const ent_rule_props *r, char *err, size_t errlen)
{
    char sub[512];
    sb_status st = ent_check_entity_path("topic name", r->topic, err, errlen);
    if (st != SB_OK)
        return st;
    st = ent_check_child_name("subscription name", r->subscription, ENT_SUBSCRIPTION_NAME_MAX, sub, sizeof sub);
    if (st != SB_OK)
        return ent_fail_status(st, err, errlen, "topic \"%s\": %s", r->topic, sub);
    st = ent_check_child_name("rule name", r->name, ENT_RULE_NAME_MAX, sub, sizeof sub);
    if (st != SB_OK)
        return ent_fail_status(st, err, errlen, "subscription \"%s/Subscriptions/%s\": %s", r->topic, r->subscription,
                               sub);
    who_buf w;
    rule_who(r, &w);
    switch (r->filter_type) {
    case ENT_FILTER_TYPE_SQL:
        if (blank(r->sql_expression))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: FilterType Sql needs a SqlFilter.SqlExpression",
                                   w.text);
        if ((st = check_expression(w.text, "SqlFilter.SqlExpression", r->sql_expression, err, errlen)) != SB_OK)
            return st;
        break;
    case ENT_FILTER_TYPE_CORRELATION:
        if (correlation_empty(&r->correlation))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s: FilterType Correlation needs at least one CorrelationFilter property", w.text);
        break;
    case ENT_FILTER_TYPE_TRUE:
    case ENT_FILTER_TYPE_FALSE:
        break;
    default:
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: FilterType %d is unknown", w.text,
                               (int)r->filter_type);
    }
    if (r->action_expression)
        return check_expression(w.text, "Action.SqlExpression", r->action_expression, err, errlen);
    return SB_OK;
}
