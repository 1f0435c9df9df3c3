/* See http_apply.h. */
#include "http_apply.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_address.h"
#include "ent_alloc.h"
#include "ent_duration.h"

/* ---- what is taken but not kept ---- */

enum { K_QUEUE = 1, K_TOPIC = 2, K_SUBSCRIPTION = 4, K_ALL = 7 };

typedef enum accept_rule {
    ACCEPT_ANY,        /* read-only or without effect here: ignored */
    ACCEPT_FALSE,      /* a feature the emulator does not have: false only */
    ACCEPT_EMPTY,      /* a list the emulator keeps none of: empty only */
    ACCEPT_MESSAGE_KB, /* the emulator's own message size limit only */
} accept_rule;

typedef struct accepted {
    const char *name;
    unsigned kinds;
    accept_rule rule;
    const char *why; /* for the refusal */
} accepted;

static const accepted accepted_props[] = {
    /* runtime figures the SDKs send back on update */
    {"CreatedAt", K_ALL, ACCEPT_ANY, NULL},
    {"UpdatedAt", K_ALL, ACCEPT_ANY, NULL},
    {"AccessedAt", K_ALL, ACCEPT_ANY, NULL},
    {"SizeInBytes", K_ALL, ACCEPT_ANY, NULL},
    {"MessageCount", K_ALL, ACCEPT_ANY, NULL},
    {"CountDetails", K_ALL, ACCEPT_ANY, NULL},
    {"SubscriptionCount", K_TOPIC, ACCEPT_ANY, NULL},
    {"SqlFilterCount", K_TOPIC, ACCEPT_ANY, NULL},
    {"CorrelationFilterCount", K_TOPIC, ACCEPT_ANY, NULL},
    {"EntityAvailabilityStatus", K_ALL, ACCEPT_ANY, NULL},
    {"SkippedUpdate", K_ALL, ACCEPT_ANY, NULL},
    /* a queue is always ordered */
    {"SupportOrdering", K_QUEUE, ACCEPT_ANY, NULL},
    {"IsAnonymousAccessible", K_QUEUE | K_TOPIC, ACCEPT_FALSE, "anonymous access"},
    {"EnableExpress", K_QUEUE | K_TOPIC, ACCEPT_FALSE, "express entities"},
    {"FilteringMessagesBeforePublishing", K_TOPIC, ACCEPT_FALSE, "filtering before publishing"},
    {"EnableSubscriptionPartitioning", K_TOPIC, ACCEPT_FALSE, "subscription partitioning"},
    {"AuthorizationRules", K_QUEUE | K_TOPIC, ACCEPT_EMPTY,
     "authorization rules per entity (it has one namespace key, SharedAccessKeyName and its key)"},
    {"MaxMessageSizeInKilobytes", K_QUEUE | K_TOPIC, ACCEPT_MESSAGE_KB, NULL},
};

static const accepted *find_accepted(const char *name, unsigned kind)
{
    for (size_t i = 0; i < sizeof accepted_props / sizeof accepted_props[0]; i++)
        if ((accepted_props[i].kinds & kind) && !strcasecmp(accepted_props[i].name, name))
            return &accepted_props[i];
    return NULL;
}

static sb_status refuse(sb_status st, char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static sb_status refuse(sb_status st, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

static sb_status check_accepted(const accepted *a, const http_xml_prop *p, const char *desc, int64_t max_kb,
                                char *err, size_t errlen)
{
    switch (a->rule) {
    case ACCEPT_ANY: return SB_OK;
    case ACCEPT_FALSE:
        if (p->value && !strcasecmp(p->value, "false"))
            return SB_OK;
        return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: %s must be false: the emulator has no %s", desc, a->name,
                      a->why);
    case ACCEPT_EMPTY:
        if (p->value && !*p->value)
            return SB_OK;
        return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: %s must be empty: the emulator has no %s", desc, a->name,
                      a->why);
    case ACCEPT_MESSAGE_KB: {
        char *end;
        errno = 0;
        long long kb = p->value ? strtoll(p->value, &end, 10) : 0;
        if (p->value && *p->value && !*end && !errno && kb == max_kb)
            return SB_OK;
        return refuse(SB_ERR_ARGUMENT, err, errlen,
                      "%s: MaxMessageSizeInKilobytes \"%s\" is not the emulator's message size limit, %lld KB "
                      "(set with its --max-message-size)",
                      desc, p->value ? p->value : "", (long long)max_kb);
    }
    }
    return SB_OK;
}

/* ---- entities ---- */

int http_apply_forward_path(const char *value, char *out, size_t outlen)
{
    if (!strstr(value, "://")) {
        if (strlen(value) >= outlen)
            return -1;
        memcpy(out, value, strlen(value) + 1);
        return 0;
    }
    return ent_audience_path(value, out, outlen) || !*out ? -1 : 0; /* the namespace itself is no entity */
}

typedef sb_status (*set_fn)(void *props, const char *property, ent_value v, char *err, size_t errlen);

static sb_status set_queue(void *p, const char *n, ent_value v, char *e, size_t l) { return ent_queue_set(p, n, v, e, l); }
static sb_status set_topic(void *p, const char *n, ent_value v, char *e, size_t l) { return ent_topic_set(p, n, v, e, l); }
static sb_status set_subscription(void *p, const char *n, ent_value v, char *e, size_t l)
{
    return ent_subscription_set(p, n, v, e, l);
}

static sb_status apply_entity(const char *desc, unsigned kind, void *props, set_fn set, const http_xml_entry *e,
                              int64_t max_kb, bool *has_rule, char *err, size_t errlen)
{
    if (strcmp(e->description, desc))
        return refuse(SB_ERR_ARGUMENT, err, errlen, "this resource takes a <%s>, not a <%s>", desc, e->description);
    if (has_rule)
        *has_rule = false;
    for (size_t i = 0; i < e->n; i++) {
        const http_xml_prop *p = &e->props[i];
        if (strchr(p->path, '.') || !*p->path)
            continue; /* inside a structure taken (or refused) as a whole */
        if (p->key)
            return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: line %d: a key-value item outside any property", desc,
                          p->line);
        for (size_t k = 0; k < i; k++)
            if (!strchr(e->props[k].path, '.') && !strcasecmp(e->props[k].path, p->path))
                return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: %s is given twice (lines %d and %d)", desc, p->path,
                              e->props[k].line, p->line);
        const accepted *a = find_accepted(p->path, kind);
        if (a) {
            sb_status st = check_accepted(a, p, desc, max_kb, err, errlen);
            if (st != SB_OK)
                return st;
            continue;
        }
        if (has_rule && !strcasecmp(p->path, HTTP_APPLY_DEFAULT_RULE)) {
            *has_rule = true;
            continue;
        }
        if (!p->value)
            return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: %s must hold a value, not elements (line %d)", desc,
                          p->path, p->line);
        const char *value = p->value;
        char path[ENT_ENTITY_PATH_SIZE];
        if ((!strcasecmp(p->path, "ForwardTo") || !strcasecmp(p->path, "ForwardDeadLetteredMessagesTo")) && *value) {
            if (http_apply_forward_path(value, path, sizeof path))
                return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: %s \"%.300s\" names no entity", desc, p->path,
                              value);
            value = path;
        }
        char why[768];
        sb_status st = set(props, p->path, ent_value_string(value), why, sizeof why);
        if (st == SB_ERR_NOT_FOUND)
            return refuse(SB_ERR_ARGUMENT, err, errlen, "%s has no property %s (line %d)", desc, p->path, p->line);
        if (st != SB_OK)
            return refuse(st, err, errlen, "%s", why);
    }
    return SB_OK;
}

sb_status http_apply_queue(ent_queue_props *q, const http_xml_entry *e, int64_t max_message_kb, char *err,
                           size_t errlen)
{
    sb_status st = apply_entity(HTTP_APPLY_QUEUE, K_QUEUE, q, set_queue, e, max_message_kb, NULL, err, errlen);
    return st != SB_OK ? st : ent_queue_validate(q, err, errlen);
}

sb_status http_apply_topic(ent_topic_props *t, const http_xml_entry *e, int64_t max_message_kb, char *err,
                           size_t errlen)
{
    sb_status st = apply_entity(HTTP_APPLY_TOPIC, K_TOPIC, t, set_topic, e, max_message_kb, NULL, err, errlen);
    return st != SB_OK ? st : ent_topic_validate(t, err, errlen);
}

sb_status http_apply_subscription(ent_subscription_props *s, const http_xml_entry *e, bool *has_rule, char *err,
                                  size_t errlen)
{
    sb_status st = apply_entity(HTTP_APPLY_SUBSCRIPTION, K_SUBSCRIPTION, s, set_subscription, e, 0, has_rule, err,
                                errlen);
    return st != SB_OK ? st : ent_subscription_validate(s, err, errlen);
}

/* ---- rules ---- */

/* The correlation filter's elements, in broker_rule_def's field order. */
static const char *const correlation_elements[BROKER_RULE_CORRELATION_FIELDS] = {
    "CorrelationId", "MessageId", "To", "ReplyTo", "Label", "SessionId", "ReplyToSessionId", "ContentType",
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *c = ent_malloc(n + 1);
    if (c)
        memcpy(c, s, n + 1);
    return c;
}

/* A typed key-value item as the rule language holds it; strings malloc'd. */
static sb_status typed_value(const http_xml_prop *p, ent_filter_value *v, char *err, size_t errlen)
{
    const char *t = p->type ? p->type : "string", *s = p->value;
    char *end;
    errno = 0;
    if (!strcmp(t, "string")) {
        char *c = dup_str(s);
        if (!c)
            return refuse(SB_ERR_INTERNAL, err, errlen, "out of memory");
        *v = ent_fv_string(c, strlen(c));
        return SB_OK;
    }
    if (!strcmp(t, "int") || !strcmp(t, "long") || !strcmp(t, "short") || !strcmp(t, "byte")) {
        long long i = strtoll(s, &end, 10);
        if (!*s || *end || errno)
            goto bad;
        *v = ent_fv_int(i);
        return SB_OK;
    }
    if (!strcmp(t, "double") || !strcmp(t, "float") || !strcmp(t, "decimal")) {
        double d = !strcmp(s, "INF") ? INFINITY : !strcmp(s, "-INF") ? -INFINITY : strtod(s, &end);
        if (!*s || (strcmp(s, "INF") && strcmp(s, "-INF") && *end))
            goto bad;
        *v = ent_fv_double(d);
        return SB_OK;
    }
    if (!strcmp(t, "boolean")) {
        if (!strcasecmp(s, "true") || !strcmp(s, "1"))
            *v = ent_fv_bool(1);
        else if (!strcasecmp(s, "false") || !strcmp(s, "0"))
            *v = ent_fv_bool(0);
        else
            goto bad;
        return SB_OK;
    }
    if (!strcmp(t, "dateTime")) {
        int64_t ms;
        if (ent_fv_parse_time(s, strlen(s), &ms))
            goto bad;
        *v = ent_fv_time(ms);
        return SB_OK;
    }
    if (!strcmp(t, "duration")) {
        int64_t ms;
        char why[128];
        if (ent_duration_parse(s, &ms, why, sizeof why))
            goto bad;
        *v = ent_fv_duration(ms);
        return SB_OK;
    }
    if (!strcmp(t, "guid")) {
        unsigned char u[16];
        if (ent_fv_parse_uuid(s, strlen(s), u))
            goto bad;
        *v = ent_fv_uuid(u);
        return SB_OK;
    }
    return refuse(SB_ERR_ARGUMENT, err, errlen,
                  "the value of '%.64s' has the type '%.32s', which a rule cannot hold (string, int, long, double, "
                  "boolean, dateTime, duration, guid)",
                  p->key, t);
bad:
    return refuse(SB_ERR_ARGUMENT, err, errlen, "the value of '%.64s' is not a%s %s: \"%.64s\"", p->key,
                  strchr("aeiou", t[0]) ? "n" : "", t, s);
}

/* Appends a key-value item to a props array (names and strings malloc'd, as
 * broker_rule_def_free releases them). */
static sb_status add_item(ent_filter_prop **v, size_t *n, const http_xml_prop *p, const char *what, char *err,
                          size_t errlen)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i].name, p->key))
            return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: '%.64s' is given twice", what, p->key);
    ent_filter_prop *t = ent_realloc(*v, (*n + 1) * sizeof *t);
    if (!t)
        return refuse(SB_ERR_INTERNAL, err, errlen, "out of memory");
    *v = t;
    ent_filter_prop *x = &t[*n];
    x->name = dup_str(p->key);
    x->value = ent_fv_null();
    if (!x->name)
        return refuse(SB_ERR_INTERNAL, err, errlen, "out of memory");
    (*n)++;
    char why[256];
    sb_status st = typed_value(p, &x->value, why, sizeof why);
    if (st != SB_OK)
        return refuse(st, err, errlen, "%s: %s", what, why);
    return SB_OK;
}

/* path relative to the rule: "Filter.SqlExpression" for prefix "DefaultRuleDescription". */
static const char *relative(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (!n)
        return path;
    if (strncmp(path, prefix, n) || path[n] != '.')
        return NULL;
    return path + n + 1;
}

static const http_xml_prop *find_rel(const http_xml_entry *e, const char *prefix, const char *rel)
{
    for (size_t i = 0; i < e->n; i++) {
        const char *r = relative(e->props[i].path, prefix);
        if (r && !e->props[i].key && !strcmp(r, rel))
            return &e->props[i];
    }
    return NULL;
}

static bool filter_kind_of(const char *type, ent_filter_kind *k)
{
    static const struct {
        const char *type;
        ent_filter_kind kind;
    } kinds[] = {{"SqlFilter", ENT_FILTER_KIND_SQL},
                 {"CorrelationFilter", ENT_FILTER_KIND_CORRELATION},
                 {"TrueFilter", ENT_FILTER_KIND_TRUE},
                 {"FalseFilter", ENT_FILTER_KIND_FALSE}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(type, kinds[i].type)) {
            *k = kinds[i].kind;
            return true;
        }
    return false;
}

static sb_status copy_text(char **dst, const http_xml_prop *p, const char *what, char *err, size_t errlen)
{
    if (!p->value)
        return refuse(SB_ERR_ARGUMENT, err, errlen, "%s must hold text, not elements", what);
    ent_free(*dst);
    if (!(*dst = dup_str(p->value)))
        return refuse(SB_ERR_INTERNAL, err, errlen, "out of memory");
    return SB_OK;
}

/* Filter.* and Action.* children, each checked against what its type has. */
static sb_status rule_child(broker_rule_def *d, const http_xml_prop *p, const char *rel, bool sql_action, char *err,
                            size_t errlen)
{
    bool in_filter = !strncmp(rel, "Filter.", 7);
    const char *name = rel + (in_filter ? 7 : 7); /* "Filter." and "Action." are both 7 long */
    const char *owner = in_filter ? "Filter" : "Action";
    if (!strcmp(name, "CompatibilityLevel") || !strcmp(name, "RequiresPreprocessing"))
        return SB_OK;
    if (in_filter && d->kind == ENT_FILTER_KIND_CORRELATION) {
        for (size_t k = 0; k < BROKER_RULE_CORRELATION_FIELDS; k++)
            if (!strcmp(name, correlation_elements[k]))
                return copy_text(&d->correlation_fields[k], p, correlation_elements[k], err, errlen);
        if (!strcmp(name, "Properties"))
            return p->key ? add_item(&d->correlation_props, &d->ncorrelation_props, p,
                                     "the correlation filter's Properties", err, errlen)
                          : SB_OK;
    } else if (in_filter || sql_action) {
        if (!strcmp(name, "SqlExpression")) {
            if (in_filter && d->kind != ENT_FILTER_KIND_SQL)
                return SB_OK; /* a TrueFilter's "1=1", a FalseFilter's "1=0" */
            return copy_text(in_filter ? &d->sql : &d->action, p, "SqlExpression", err, errlen);
        }
        /* A TrueFilter and a FalseFilter are SqlFilters ("1=1", "1=0") to Service
         * Bus: the Java admin client sends theirs with an empty Parameters. */
        bool fixed_sql = in_filter && (d->kind == ENT_FILTER_KIND_TRUE || d->kind == ENT_FILTER_KIND_FALSE);
        if (!strcmp(name, "Parameters") && (!in_filter || d->kind == ENT_FILTER_KIND_SQL || (fixed_sql && !p->key))) {
            if (!p->key)
                return SB_OK;
            return in_filter ? add_item(&d->filter_params, &d->nfilter_params, p, "the filter's Parameters", err,
                                        errlen)
                             : add_item(&d->action_params, &d->naction_params, p, "the action's Parameters", err,
                                        errlen);
        }
    }
    return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: %s has no element %s (line %d)", HTTP_APPLY_RULE, owner, name,
                  p->line);
}

sb_status http_apply_rule(broker_rule_def *d, const http_xml_entry *e, const char *prefix, const char *name, char *err,
                          size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (!*prefix && strcmp(e->description, HTTP_APPLY_RULE))
        return refuse(SB_ERR_ARGUMENT, err, errlen, "this resource takes a <%s>, not a <%s>", HTTP_APPLY_RULE,
                      e->description);
    const http_xml_prop *filter = find_rel(e, prefix, "Filter"), *action = find_rel(e, prefix, "Action"),
                        *body_name = find_rel(e, prefix, "Name");
    if (!name)
        name = body_name && body_name->value && *body_name->value ? body_name->value : ENT_FILTER_DEFAULT_RULE_NAME;
    if (strlen(name) >= sizeof d->name)
        return refuse(SB_ERR_ARGUMENT, err, errlen, "the rule name is too long");
    memcpy(d->name, name, strlen(name) + 1);
    /* the filter's type: given, or what its elements say; none is TrueFilter */
    d->kind = ENT_FILTER_KIND_TRUE;
    if (filter && filter->type && !filter_kind_of(filter->type, &d->kind))
        return refuse(SB_ERR_ARGUMENT, err, errlen,
                      "%s: the Filter's type '%s' is not SqlFilter, CorrelationFilter, TrueFilter or FalseFilter",
                      HTTP_APPLY_RULE, filter->type);
    if (filter && !filter->type)
        d->kind = find_rel(e, prefix, "Filter.SqlExpression") ? ENT_FILTER_KIND_SQL : ENT_FILTER_KIND_CORRELATION;
    bool sql_action = false;
    if (action && action->type && strcmp(action->type, "EmptyRuleAction")) {
        if (strcmp(action->type, "SqlRuleAction"))
            return refuse(SB_ERR_ARGUMENT, err, errlen,
                          "%s: the Action's type '%s' is not SqlRuleAction or EmptyRuleAction", HTTP_APPLY_RULE,
                          action->type);
        sql_action = true;
    } else if (action && !action->type) {
        sql_action = find_rel(e, prefix, "Action.SqlExpression") != NULL;
    }
    for (size_t i = 0; i < e->n; i++) {
        const http_xml_prop *p = &e->props[i];
        const char *rel = relative(p->path, prefix);
        if (!rel)
            continue;
        sb_status st = SB_OK;
        if (!strncmp(rel, "Filter.", 7) || !strncmp(rel, "Action.", 7))
            st = rule_child(d, p, rel, sql_action, err, errlen);
        else if (p->key || (strcmp(rel, "Filter") && strcmp(rel, "Action") && strcmp(rel, "Name") &&
                            strcmp(rel, "CreatedAt")))
            st = refuse(SB_ERR_ARGUMENT, err, errlen, "%s has no property %s (line %d)", HTTP_APPLY_RULE, rel,
                        p->line);
        if (st != SB_OK)
            return st;
    }
    if (d->kind == ENT_FILTER_KIND_SQL && !d->sql)
        return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: a SqlFilter needs its SqlExpression", HTTP_APPLY_RULE);
    if (sql_action && !d->action)
        return refuse(SB_ERR_ARGUMENT, err, errlen, "%s: a SqlRuleAction needs its SqlExpression", HTTP_APPLY_RULE);
    sb_status st;
    if (broker_rule_def_finish(d, &st, err, errlen))
        return st;
    return SB_OK;
}
