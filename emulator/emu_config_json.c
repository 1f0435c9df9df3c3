/* Config.json -> ent_config (see emu_config_json.h). The walk is strict about
 * types and values (through the entities/ setters) and lenient about shape:
 * what sbemu does not know is warned about and skipped, never fatal. */
#include "emu_config_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "ent_alloc.h"
#include "ent_log.h"
#include "ent_namespace.h"
#include "store_config.h"
#include "store_faults.h"

/* Room for `subscription "<260-char topic>/Subscriptions/<50-char name>"` and
 * the like, and for an error text built around one. */
#define WHO_SIZE 1600
#define MSG_SIZE 2048

/* Everything the walk needs: the output, the error buffer, the source name. */
typedef struct walk {
    ent_config *cfg;
    const char *source;
    char *err;
    size_t errlen;
} walk;

__attribute__((format(printf, 2, 3)))
static int walk_fail(walk *w, const char *fmt, ...)
{
    char msg[MSG_SIZE + WHO_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(w->err, w->errlen, "%s: %s", w->source, msg);
    return -1;
}

/* ---- Comments ----------------------------------------------------------- */

char *emu_config_strip_comments(const char *text, size_t len, char *err, size_t errlen)
{
    char *out = ent_malloc(len + 1);
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(out, text, len);
    out[len] = '\0';
    /* A UTF-8 byte order mark (Windows editors write one). */
    if (len >= 3 && !memcmp(out, "\xEF\xBB\xBF", 3))
        memset(out, ' ', 3);

    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < len; i++) {
        char c = out[i];
        if (c == '\n') {
            line++;
            line_start = i + 1;
        } else if (c == '"') {
            /* Skip the string, honouring backslash escapes. */
            for (i++; i < len && out[i] != '"'; i++) {
                if (out[i] == '\\' && i + 1 < len)
                    i++;
                else if (out[i] == '\n') {
                    line++;
                    line_start = i + 1;
                }
            }
        } else if (c == '/' && i + 1 < len && out[i + 1] == '/') {
            while (i < len && out[i] != '\n')
                out[i++] = ' ';
            i--; /* let the loop see the newline */
        } else if (c == '/' && i + 1 < len && out[i + 1] == '*') {
            int start_line = line;
            size_t start_col = i - line_start + 1;
            out[i++] = ' ';
            out[i++] = ' ';
            while (i < len && !(out[i] == '*' && i + 1 < len && out[i + 1] == '/')) {
                if (out[i] == '\n') {
                    line++;
                    line_start = i + 1;
                } else {
                    out[i] = ' ';
                }
                i++;
            }
            if (i >= len) {
                snprintf(err, errlen, "line %d, column %zu: unterminated /* comment", start_line, start_col);
                ent_free(out);
                return NULL;
            }
            out[i] = out[i + 1] = ' ';
            i++;
        }
    }

    /* Trailing commas, now that comments are blank: ",  }" -> "   }". */
    for (size_t i = 0; i < len; i++) {
        if (out[i] == '"') {
            for (i++; i < len && out[i] != '"'; i++)
                if (out[i] == '\\' && i + 1 < len)
                    i++;
        } else if (out[i] == ',') {
            size_t j = i + 1;
            while (j < len && (out[j] == ' ' || out[j] == '\t' || out[j] == '\r' || out[j] == '\n'))
                j++;
            if (j < len && (out[j] == '}' || out[j] == ']'))
                out[i] = ' ';
        }
    }
    return out;
}

/* ---- JSON helpers ------------------------------------------------------- */

/* Case-insensitive member lookup, as .NET configuration binding does. */
static json_t *get_ci(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (v)
        return v;
    const char *k;
    json_object_foreach(obj, k, v) {
        if (!strcasecmp(k, key))
            return v;
    }
    return NULL;
}

static int is_one_of(const char *key, const char *const *names)
{
    for (; *names; names++)
        if (!strcasecmp(key, *names))
            return 1;
    return 0;
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "something else";
}

/* A scalar as an ent_value; -1 for objects and arrays. */
static int to_value(json_t *j, ent_value *v)
{
    switch (json_typeof(j)) {
    case JSON_STRING: *v = ent_value_string(json_string_value(j)); return 0;
    case JSON_INTEGER: *v = ent_value_int(json_integer_value(j)); return 0;
    case JSON_REAL: *v = ent_value_double(json_real_value(j)); return 0;
    case JSON_TRUE: *v = ent_value_bool(1); return 0;
    case JSON_FALSE: *v = ent_value_bool(0); return 0;
    case JSON_NULL: *v = ent_value_null(); return 0;
    default: return -1;
    }
}

/* The array under key, or NULL when absent or null. Other types are errors. */
static int get_array(walk *w, json_t *obj, const char *key, const char *where, json_t **out)
{
    json_t *a = get_ci(obj, key);
    *out = NULL;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return walk_fail(w, "%s: \"%s\" must be an array, got %s", where, key, json_kind(a));
    *out = a;
    return 0;
}

static int get_object(walk *w, json_t *obj, const char *key, const char *where, json_t **out)
{
    json_t *o = get_ci(obj, key);
    *out = NULL;
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return walk_fail(w, "%s: \"%s\" must be an object, got %s", where, key, json_kind(o));
    *out = o;
    return 0;
}

/* The "Name" of the i-th element of `list` (e.g. "Queues[2]"). */
static int get_name(walk *w, json_t *item, const char *where, const char **name)
{
    if (!json_is_object(item))
        return walk_fail(w, "%s must be an object, got %s", where, json_kind(item));
    json_t *n = get_ci(item, "Name");
    if (!n)
        return walk_fail(w, "%s has no \"Name\"", where);
    if (!json_is_string(n))
        return walk_fail(w, "%s: \"Name\" must be a string, got %s", where, json_kind(n));
    *name = json_string_value(n);
    return 0;
}

static void warn_unknown_keys(json_t *obj, const char *where, const char *const *known)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        if (!is_one_of(k, known))
            LOG_WARN("Config.json: %s: unknown key \"%s\" ignored", where, k);
    }
}

/* Properties that exist in some Service Bus API but that sbemu does not model. */
static const char *const ignored_properties[] = {
    "MaxMessageSizeInKilobytes", "EnableExpress", "AuthorizationRules", "RequiresPreprocessing",
    "IsAnonymousAccessible", "EnableSubscriptionPartitioning", "FilteringMessagesBeforePublishing", NULL,
};

/* ---- Properties through the entities/ setters --------------------------- */

typedef sb_status (*setter_fn)(void *props, const char *property, ent_value v, char *err, size_t errlen);

static sb_status set_queue(void *p, const char *k, ent_value v, char *e, size_t n) { return ent_queue_set(p, k, v, e, n); }
static sb_status set_topic(void *p, const char *k, ent_value v, char *e, size_t n) { return ent_topic_set(p, k, v, e, n); }
static sb_status set_subscription(void *p, const char *k, ent_value v, char *e, size_t n)
{
    return ent_subscription_set(p, k, v, e, n);
}
static sb_status set_rule(void *p, const char *k, ent_value v, char *e, size_t n) { return ent_rule_set(p, k, v, e, n); }

/* Files written for the official emulator may use a dup window down to PT5S;
 * the cloud's minimum is PT20S. Raise such values instead of refusing them. */
static ent_value compat_dup_window(const char *who, const char *key, ent_value v, char *buf, size_t buflen)
{
    if (strcasecmp(key, "DuplicateDetectionHistoryTimeWindow") || v.type != ENT_VALUE_STRING)
        return v;
    int64_t ms, min = ent_limits_get()->dup_window_min_ms;
    if (ent_duration_parse(v.u.s, &ms, NULL, 0) || ms >= min || ms < EMU_CONFIG_OFFICIAL_DUP_WINDOW_MIN_MS)
        return v;
    ent_duration_format(min, buf, buflen);
    LOG_WARN("Config.json: %s: DuplicateDetectionHistoryTimeWindow \"%s\" is below the Service Bus minimum; "
             "using %s",
             who, v.u.s, buf);
    return ent_value_string(buf);
}

/* Sets one property; unknown names warn. `who` is the entity for messages. */
static int set_one(walk *w, setter_fn set, void *props, const char *who, const char *key, json_t *jv)
{
    ent_value v;
    int structured = to_value(jv, &v) != 0;
    if (structured)
        v = (ent_value){.type = ENT_VALUE_STRUCTURED};
    char compat[ENT_DURATION_TEXT_MAX];
    v = compat_dup_window(who, key, v, compat, sizeof compat);
    char msg[MSG_SIZE];
    sb_status st = set(props, key, v, msg, sizeof msg);
    if (st == SB_OK)
        return 0;
    if (st != SB_ERR_NOT_FOUND && structured)
        return walk_fail(w, "%s: %s must be a single value, got %s", who, key, json_kind(jv));
    if (st == SB_ERR_NOT_FOUND) {
        const char *leaf = strrchr(key, '.');
        leaf = leaf ? leaf + 1 : key;
        if (is_one_of(leaf, ignored_properties))
            LOG_WARN("Config.json: %s: %s is not supported by sbemu; ignored", who, key);
        else
            LOG_WARN("Config.json: %s: unknown property \"%s\" ignored", who, key);
        return 0;
    }
    return walk_fail(w, "%s", msg);
}

static int set_all(walk *w, setter_fn set, void *props, const char *who, json_t *properties)
{
    const char *k;
    json_t *v;
    json_object_foreach(properties, k, v) {
        if (set_one(w, set, props, who, k, v))
            return -1;
    }
    return 0;
}

/* ---- Rules -------------------------------------------------------------- */

/* prefix + name into key; a name too long for it is an error, not a cut. */
static int make_key(walk *w, char *key, size_t size, const char *who, const char *prefix, const char *name)
{
    if ((size_t)snprintf(key, size, "%s%s", prefix, name) >= size)
        return walk_fail(w, "%s: property name \"%.40s...\" is too long", who, name);
    return 0;
}

/* Flattens {"CorrelationFilter": {"To": .., "Properties": {..}}} and friends
 * into the dotted names ent_rule_set takes. */
static int set_rule_properties(walk *w, ent_rule_props *r, const char *who, json_t *props)
{
    json_t *filter_type = get_ci(props, "FilterType");
    json_t *sql = NULL, *corr = NULL, *action = NULL;
    if (get_object(w, props, "SqlFilter", who, &sql) || get_object(w, props, "CorrelationFilter", who, &corr) ||
        get_object(w, props, "Action", who, &action))
        return -1;

    if (filter_type) {
        if (set_one(w, set_rule, r, who, "FilterType", filter_type))
            return -1;
    } else if (sql && !corr) {
        r->filter_type = ENT_FILTER_TYPE_SQL;
    } else if (corr && !sql) {
        r->filter_type = ENT_FILTER_TYPE_CORRELATION;
    } else {
        return walk_fail(w, "%s: FilterType is missing (expected \"Sql\" or \"Correlation\")", who);
    }
    /* .NET Aspire writes "FilterType": "Sql" beside a CorrelationFilter and no
     * SqlFilter: the filter given is the one meant */
    if (r->filter_type == ENT_FILTER_TYPE_SQL && corr && !sql) {
        LOG_INFO("Config.json: %s: FilterType is Sql but only a CorrelationFilter is given: it is the filter", who);
        r->filter_type = ENT_FILTER_TYPE_CORRELATION;
    } else if (r->filter_type == ENT_FILTER_TYPE_CORRELATION && sql && !corr) {
        LOG_INFO("Config.json: %s: FilterType is Correlation but only a SqlFilter is given: it is the filter", who);
        r->filter_type = ENT_FILTER_TYPE_SQL;
    }
    if (r->filter_type == ENT_FILTER_TYPE_SQL && corr)
        LOG_WARN("Config.json: %s: CorrelationFilter ignored because FilterType is Sql", who);
    if (r->filter_type == ENT_FILTER_TYPE_CORRELATION && sql)
        LOG_WARN("Config.json: %s: SqlFilter ignored because FilterType is Correlation", who);

    char key[1024];
    const char *k;
    json_t *v;
    if (sql && r->filter_type == ENT_FILTER_TYPE_SQL) {
        json_object_foreach(sql, k, v) {
            if (make_key(w, key, sizeof key, who, "SqlFilter.", k))
                return -1;
            if (set_one(w, set_rule, r, who, key, v))
                return -1;
        }
    }
    if (corr && r->filter_type == ENT_FILTER_TYPE_CORRELATION) {
        json_object_foreach(corr, k, v) {
            if (!strcasecmp(k, "Properties")) {
                if (json_is_null(v))
                    continue;
                if (!json_is_object(v))
                    return walk_fail(w, "%s: CorrelationFilter.Properties must be an object, got %s", who,
                                     json_kind(v));
                const char *pk;
                json_t *pv;
                json_object_foreach(v, pk, pv) {
                    if (make_key(w, key, sizeof key, who, "CorrelationFilter.Properties.", pk))
                        return -1;
                    if (json_is_null(pv))
                        return walk_fail(w, "%s: %s must be a string, number or boolean, got null", who, key);
                    if (set_one(w, set_rule, r, who, key, pv))
                        return -1;
                }
                continue;
            }
            if (make_key(w, key, sizeof key, who, "CorrelationFilter.", k))
                return -1;
            if (set_one(w, set_rule, r, who, key, v))
                return -1;
        }
    }
    if (action) {
        json_object_foreach(action, k, v) {
            if (make_key(w, key, sizeof key, who, "Action.", k))
                return -1;
            if (set_one(w, set_rule, r, who, key, v))
                return -1;
        }
    }
    static const char *const known[] = {"FilterType", "SqlFilter", "CorrelationFilter", "Action", NULL};
    json_object_foreach(props, k, v) {
        if (!is_one_of(k, known)) {
            if (is_one_of(k, ignored_properties))
                LOG_WARN("Config.json: %s: %s is not supported by sbemu; ignored", who, k);
            else
                LOG_WARN("Config.json: %s: unknown property \"%s\" ignored", who, k);
        }
    }
    return 0;
}

/* ---- Queues, topics, subscriptions and rules: one reader ----------------- */

/* One item of any kind, read in place. */
typedef union item_props {
    ent_queue_props queue;
    ent_topic_props topic;
    ent_subscription_props subscription;
    ent_rule_props rule;
} item_props;

/* What differs between the kinds of item a Config.json declares; read_items
 * does the rest, in one order for all: the name, the defaults, the name is
 * free, the properties, the children's array, validation, then the item is
 * added and its children read under it. `parent` is where the item goes: the
 * ent_config, the topic's ent_topic_config or the subscription's
 * ent_subscription_config. */
typedef struct item_kind {
    const char *kind;            /* "queue": errors about the name say it */
    const char *list;            /* "Queues": places an item before its name is known */
    const char *children;        /* the array under each item ("Subscriptions"), or NULL */
    const struct item_kind *child_kind;
    const char *const *known;    /* the keys an item may have */
    bool init_error_needs_place; /* init's errors do not say which item */
    bool properties_required;    /* rules: FilterType and a filter */
    sb_status (*init)(item_props *p, const void *parent, const char *name, char *err, size_t errlen);
    void (*name_it)(const item_props *p, char *who, size_t size); /* how errors name it: queue "orders" */
    /* -1 (through walk_fail) when the parent already holds the name */
    int (*check_free)(walk *w, const struct item_kind *k, const void *parent, const char *name, const char *who);
    setter_fn set;               /* one property by name, or: */
    int (*set_properties)(walk *w, item_props *p, const char *who, json_t *props); /* all of them */
    sb_status (*validate)(const item_props *p, char *err, size_t errlen);
    void *(*add)(void *parent, const item_props *p); /* NULL when out of memory */
    void (*free)(item_props *p);                     /* NULL: nothing to free */
} item_kind;

static int read_items(walk *w, const item_kind *k, void *parent, json_t *items, const char *prefix);

static int set_properties(walk *w, const item_kind *k, item_props *p, const char *who, json_t *props)
{
    return k->set_properties ? k->set_properties(w, p, who, props) : set_all(w, k->set, p, who, props);
}

static int read_item(walk *w, const item_kind *k, void *parent, json_t *item, const char *where, item_props *p)
{
    const char *name = NULL;
    char msg[MSG_SIZE], who[WHO_SIZE];
    if (get_name(w, item, where, &name))
        return -1;
    if (k->init(p, parent, name, msg, sizeof msg) != SB_OK)
        return k->init_error_needs_place ? walk_fail(w, "%s: %s", where, msg) : walk_fail(w, "%s", msg);
    k->name_it(p, who, sizeof who);
    if (k->check_free(w, k, parent, name, who))
        return -1;
    json_t *props = get_ci(item, "Properties"), *children = NULL;
    if (k->properties_required && (!props || json_is_null(props)))
        return walk_fail(w, "%s has no \"Properties\" (FilterType and a filter are required)", who);
    if (get_object(w, item, "Properties", who, &props) || (props && set_properties(w, k, p, who, props)) ||
        (k->children && get_array(w, item, k->children, who, &children)))
        return -1;
    if (k->validate(p, msg, sizeof msg) != SB_OK)
        return walk_fail(w, "%s", msg);
    warn_unknown_keys(item, who, k->known);
    void *added = k->add(parent, p);
    if (!added)
        return walk_fail(w, "%s: out of memory", who);
    if (!children)
        return 0;
    char child_prefix[WHO_SIZE + 2];
    snprintf(child_prefix, sizeof child_prefix, "%s: ", who);
    return read_items(w, k->child_kind, added, children, child_prefix);
}

/* Every item of a JSON array; prefix places the array ("Namespaces[1].",
 * "topic \"t\": "). */
static int read_items(walk *w, const item_kind *k, void *parent, json_t *items, const char *prefix)
{
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item) {
        char where[WHO_SIZE + 64];
        snprintf(where, sizeof where, "%s%s[%zu]", prefix, k->list, i);
        item_props p;
        memset(&p, 0, sizeof p);
        int rc = read_item(w, k, parent, item, where, &p);
        if (k->free)
            k->free(&p);
        if (rc)
            return -1;
    }
    return 0;
}

/* Service Bus queues and topics share one namespace of paths. */
static int path_free(walk *w, const item_kind *k, const void *cfg, const char *name, const char *who)
{
    (void)who;
    if (ent_config_find_queue(cfg, name))
        return walk_fail(w, "%s \"%s\" is declared twice (a queue already has that name)", k->kind, name);
    if (ent_config_find_topic(cfg, name))
        return walk_fail(w, "%s \"%s\" is declared twice (a topic already has that name)", k->kind, name);
    return 0;
}

static int sub_free(walk *w, const item_kind *k, const void *topic, const char *name, const char *who)
{
    (void)k;
    return ent_config_find_subscription(topic, name) ? walk_fail(w, "%s is declared twice", who) : 0;
}

static int rule_free(walk *w, const item_kind *k, const void *sub, const char *name, const char *who)
{
    (void)k;
    return ent_config_find_rule(sub, name) ? walk_fail(w, "%s is declared twice", who) : 0;
}

static sb_status queue_init(item_props *p, const void *cfg, const char *name, char *err, size_t errlen)
{
    (void)cfg;
    return ent_queue_props_init(&p->queue, name, err, errlen);
}

static sb_status topic_init(item_props *p, const void *cfg, const char *name, char *err, size_t errlen)
{
    (void)cfg;
    return ent_topic_props_init(&p->topic, name, err, errlen);
}

static sb_status sub_init(item_props *p, const void *topic, const char *name, char *err, size_t errlen)
{
    const ent_topic_config *tc = topic;
    return ent_subscription_props_init(&p->subscription, tc->props.name, name, err, errlen);
}

static sb_status rule_init(item_props *p, const void *sub, const char *name, char *err, size_t errlen)
{
    const ent_subscription_config *sc = sub;
    return ent_rule_props_init(&p->rule, sc->props.topic, sc->props.name, name, err, errlen);
}

static void queue_name(const item_props *p, char *who, size_t n) { snprintf(who, n, "queue \"%s\"", p->queue.name); }
static void topic_name(const item_props *p, char *who, size_t n) { snprintf(who, n, "topic \"%s\"", p->topic.name); }
static void sub_name(const item_props *p, char *who, size_t n)
{
    snprintf(who, n, "subscription \"%s/Subscriptions/%s\"", p->subscription.topic, p->subscription.name);
}
static void rule_name(const item_props *p, char *who, size_t n)
{
    snprintf(who, n, "rule \"%s/Subscriptions/%s/Rules/%s\"", p->rule.topic, p->rule.subscription, p->rule.name);
}

static int rule_set(walk *w, item_props *p, const char *who, json_t *props)
{
    return set_rule_properties(w, &p->rule, who, props);
}

static sb_status queue_check(const item_props *p, char *e, size_t n) { return ent_queue_validate(&p->queue, e, n); }
static sb_status topic_check(const item_props *p, char *e, size_t n) { return ent_topic_validate(&p->topic, e, n); }
static sb_status sub_check(const item_props *p, char *e, size_t n)
{
    return ent_subscription_validate(&p->subscription, e, n);
}
static sb_status rule_check(const item_props *p, char *e, size_t n) { return ent_rule_validate(&p->rule, e, n); }

static void *queue_add(void *cfg, const item_props *p) { return ent_config_add_queue(cfg, &p->queue); }
static void *topic_add(void *cfg, const item_props *p) { return ent_config_add_topic(cfg, &p->topic); }
static void *sub_add(void *topic, const item_props *p) { return ent_config_add_subscription(topic, &p->subscription); }
static void *rule_add(void *sub, const item_props *p) { return ent_config_add_rule(sub, &p->rule); }
static void rule_release(item_props *p) { ent_rule_props_free(&p->rule); }

static const char *const leaf_keys[] = {"Name", "Properties", NULL};
static const char *const topic_keys[] = {"Name", "Properties", "Subscriptions", NULL};
static const char *const sub_keys[] = {"Name", "Properties", "Rules", NULL};

static const item_kind rule_kind = {"rule", "Rules", NULL, NULL, leaf_keys, false, true, rule_init, rule_name,
                                    rule_free, NULL, rule_set, rule_check, rule_add, rule_release};
static const item_kind sub_kind = {"subscription", "Subscriptions", "Rules", &rule_kind, sub_keys, false, false,
                                   sub_init, sub_name, sub_free, set_subscription, NULL, sub_check, sub_add, NULL};
static const item_kind topic_kind = {"topic", "Topics", "Subscriptions", &sub_kind, topic_keys, true, false,
                                     topic_init, topic_name, path_free, set_topic, NULL, topic_check, topic_add, NULL};
static const item_kind queue_kind = {"queue", "Queues", NULL, NULL, leaf_keys, true, false, queue_init, queue_name,
                                     path_free, set_queue, NULL, queue_check, queue_add, NULL};

/* Which ent_config Namespaces[i] fills: the first is the default namespace
 * (w->cfg itself); another is its own (merged into an earlier one of the
 * same name, the default's included). NULL with the walk failed. */
static ent_config *namespace_target(walk *w, size_t i, json_t *name, const char *where)
{
    if (i == 0)
        return w->cfg;
    if (!name) {
        walk_fail(w, "%s has no \"Name\": every namespace but the first (the default one) needs one", where);
        return NULL;
    }
    const char *n = json_string_value(name);
    if (ent_namespace_is_default(n, w->cfg->namespace_name))
        return w->cfg;
    char why[256];
    if (ent_namespace_name_check(n, why, sizeof why) != SB_OK) {
        walk_fail(w, "%s: %s", where, why);
        return NULL;
    }
    ent_config *other = ent_config_find_namespace(w->cfg, n);
    if (!other && !(other = ent_config_add_namespace(w->cfg, n)))
        walk_fail(w, "%s: out of memory", where);
    return other;
}

static int read_namespaces(walk *w, json_t *namespaces)
{
    size_t i;
    json_t *ns;
    json_array_foreach(namespaces, i, ns) {
        char where[64];
        snprintf(where, sizeof where, "Namespaces[%zu]", i);
        if (!json_is_object(ns))
            return walk_fail(w, "%s must be an object, got %s", where, json_kind(ns));
        json_t *name = get_ci(ns, "Name");
        if (name && !json_is_string(name))
            return walk_fail(w, "%s: \"Name\" must be a string, got %s", where, json_kind(name));
        if (name && i == 0) {
            if (strcasecmp(json_string_value(name), ENT_CONFIG_DEFAULT_NAMESPACE))
                /* .NET Aspire names it after its resource: no cause for a warning */
                LOG_DEBUG("Config.json: namespace \"%s\": the official schema names only \"%s\"; accepted",
                         json_string_value(name), ENT_CONFIG_DEFAULT_NAMESPACE);
            snprintf(w->cfg->namespace_name, sizeof w->cfg->namespace_name, "%s", json_string_value(name));
        }
        ent_config *target = namespace_target(w, i, name, where);
        if (!target)
            return -1;
        if (get_ci(ns, "Properties"))
            LOG_WARN("Config.json: %s: namespace \"Properties\" are not used by sbemu; ignored", where);
        static const char *const known[] = {"Name", "Queues", "Topics", "Properties", NULL};
        warn_unknown_keys(ns, where, known);
        /* Error texts name entities by name; the index helps only without one. */
        char prefix[80] = "";
        if (json_array_size(namespaces) > 1)
            snprintf(prefix, sizeof prefix, "%s.", where);
        json_t *queues, *topics;
        if (get_array(w, ns, "Queues", where, &queues) || get_array(w, ns, "Topics", where, &topics))
            return -1;
        if (queues && read_items(w, &queue_kind, target, queues, prefix))
            return -1;
        if (topics && read_items(w, &topic_kind, target, topics, prefix))
            return -1;
    }
    return 0;
}

/* UserConfig.Faults: fault rules in the API's JSON shape, each with its
 * "name" (README "Faults on demand"). Strict, unlike the entities: a rule
 * that names nothing known refuses the start, with the reason. */
static int read_faults(walk *w, json_t *faults)
{
    size_t i;
    json_t *item;
    json_array_foreach(faults, i, item) {
        char where[96];
        snprintf(where, sizeof where, "UserConfig.Faults[%zu]", i);
        if (!json_is_object(item))
            return walk_fail(w, "%s must be an object, got %s", where, json_kind(item));
        json_t *name = get_ci(item, "name");
        if (name && json_is_string(name))
            snprintf(where + strlen(where), sizeof where - strlen(where), " (\"%.40s\")", json_string_value(name));
        ent_fault_rule r;
        ent_fault_rule_init(&r, NULL);
        char msg[ENT_FAULT_ERR_MAX];
        const char *k;
        json_t *v;
        json_object_foreach(item, k, v) {
            ent_value value;
            if (to_value(v, &value))
                return walk_fail(w, "%s: \"%s\" must be a single value, got %s", where, k, json_kind(v));
            if (ent_fault_set(&r, k, value, msg, sizeof msg) != SB_OK)
                return walk_fail(w, "%s: %s", where, msg);
        }
        if (!name)
            return walk_fail(w, "%s has no \"name\"", where);
        if (ent_fault_validate(&r, w->cfg->namespace_name, msg, sizeof msg) != SB_OK)
            return walk_fail(w, "%s: %s", where, msg);
        for (size_t j = 0; j < w->cfg->nfaults; j++)
            if (!strcasecmp(w->cfg->faults[j].name, r.name))
                return walk_fail(w, "%s: a fault rule named \"%s\" is given twice", where, r.name);
        if (w->cfg->nfaults == ENT_FAULT_RULES_MAX)
            return walk_fail(w, "%s: more than %d fault rules, the most the emulator holds", where,
                             ENT_FAULT_RULES_MAX);
        if (!ent_config_add_fault(w->cfg, &r))
            return walk_fail(w, "out of memory");
    }
    return 0;
}

static int read_root(walk *w, json_t *root)
{
    if (!json_is_object(root))
        return walk_fail(w, "the top level must be an object, got %s", json_kind(root));
    json_t *uc = get_ci(root, "UserConfig");
    if (!uc)
        return walk_fail(w, "no \"UserConfig\" object at the top level");
    if (!json_is_object(uc))
        return walk_fail(w, "\"UserConfig\" must be an object, got %s", json_kind(uc));
    static const char *const root_known[] = {"UserConfig", NULL};
    warn_unknown_keys(root, "top level", root_known);
    static const char *const uc_known[] = {"Namespaces", "Logging", "Faults", NULL};
    warn_unknown_keys(uc, "UserConfig", uc_known);

    json_t *logging;
    if (get_object(w, uc, "Logging", "UserConfig", &logging))
        return -1;
    if (logging) {
        json_t *type = get_ci(logging, "Type");
        if (type && !json_is_string(type))
            return walk_fail(w, "UserConfig.Logging: \"Type\" must be a string, got %s", json_kind(type));
        if (type)
            snprintf(w->cfg->logging_type, sizeof w->cfg->logging_type, "%s", json_string_value(type));
    }

    json_t *namespaces = get_ci(uc, "Namespaces");
    if (!namespaces)
        return walk_fail(w, "UserConfig has no \"Namespaces\" array");
    if (!json_is_array(namespaces))
        return walk_fail(w, "UserConfig: \"Namespaces\" must be an array, got %s", json_kind(namespaces));
    if (json_array_size(namespaces) == 0)
        LOG_WARN("Config.json: \"Namespaces\" is empty: no entities to create");
    json_t *faults;
    if (read_namespaces(w, namespaces) || get_array(w, uc, "Faults", "UserConfig", &faults))
        return -1;
    return faults ? read_faults(w, faults) : 0; /* after the namespaces: a rule names one of them */
}

int emu_config_parse(const char *text, size_t len, const char *source, ent_config *out, char *err, size_t errlen)
{
    ent_config_init(out);
    walk w = {out, source ? source : "Config.json", err, errlen};
    char why[256];
    char *clean = emu_config_strip_comments(text, len, why, sizeof why);
    if (!clean)
        return walk_fail(&w, "%s", why);
    json_error_t jerr;
    json_t *root = json_loadb(clean, len, 0, &jerr);
    ent_free(clean);
    if (!root)
        return walk_fail(&w, "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = read_root(&w, root);
    json_decref(root);
    if (rc)
        ent_config_free(out);
    return rc;
}

int emu_config_load(const char *path, ent_config *out, char *err, size_t errlen)
{
    ent_config_init(out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= EMU_CONFIG_MAX_FILE_SIZE) {
                snprintf(err, errlen, "%s: larger than %d bytes; is it the right file?", path,
                         EMU_CONFIG_MAX_FILE_SIZE);
                rc = -1;
                break;
            }
            cap = cap ? cap * 2 : 16384;
            char *grown = ent_realloc(buf, cap);
            if (!grown) {
                snprintf(err, errlen, "%s: out of memory", path);
                rc = -1;
                break;
            }
            buf = grown;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
                rc = -1;
            }
            break;
        }
    }
    fclose(f);
    if (!rc)
        rc = emu_config_parse(buf ? buf : "", len, path, out, err, errlen);
    ent_free(buf);
    return rc;
}

/* What emu_config_namespace_name answers: set once, by the start-up's apply. */
static char applied_namespace[sizeof(((ent_config *)0)->namespace_name)] = ENT_CONFIG_DEFAULT_NAMESPACE;

const char *emu_config_namespace_name(void) { return applied_namespace; }

/* Logs what one namespace of the file declared. */
static void log_applied(const char *path, const ent_config *ns, bool is_default)
{
    size_t nsubs = 0, nrules = 0;
    for (size_t i = 0; i < ns->ntopics; i++) {
        nsubs += ns->topics[i].nsubscriptions;
        for (size_t j = 0; j < ns->topics[i].nsubscriptions; j++)
            nrules += ns->topics[i].subscriptions[j].nrules;
    }
    LOG_INFO("%s: applied %zu queue(s), %zu topic(s), %zu subscription(s), %zu rule(s)%s%s%s", path, ns->nqueues,
             ns->ntopics, nsubs, nrules, is_default ? "" : " to namespace '", is_default ? "" : ns->namespace_name,
             is_default ? "" : "'");
}

/* Applies cfg (and frees it); source names it in the log and in errors. */
static int apply_config(struct pg_conn *conn, ent_config *cfg_in, const char *path, char *err, size_t errlen)
{
    ent_config cfg = *cfg_in;
    char why[MSG_SIZE];
    int rc = store_config_apply(conn, &cfg, why, sizeof why);
    if (!rc && cfg.namespace_name[0])
        snprintf(applied_namespace, sizeof applied_namespace, "%s", cfg.namespace_name);
    if (!rc)
        rc = store_faults_config_apply(conn, cfg.faults, cfg.nfaults, why, sizeof why);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, why);
    } else {
        log_applied(path, &cfg, true);
        for (size_t i = 0; i < cfg.nothers; i++)
            log_applied(path, &cfg.others[i], false);
        if (cfg.nfaults)
            LOG_INFO("%s: applied %zu fault rule(s)", path, cfg.nfaults);
    }
    ent_config_free(&cfg);
    return rc;
}

int emu_config_load_and_apply(struct pg_conn *conn, const char *path, char *err, size_t errlen)
{
    ent_config cfg;
    if (emu_config_load(path, &cfg, err, errlen))
        return -1;
    return apply_config(conn, &cfg, path, err, errlen);
}

int emu_config_parse_and_apply(struct pg_conn *conn, const char *text, const char *source, char *err, size_t errlen)
{
    ent_config cfg;
    if (emu_config_parse(text, strlen(text), source, &cfg, err, errlen))
        return -1;
    return apply_config(conn, &cfg, source, err, errlen);
}
