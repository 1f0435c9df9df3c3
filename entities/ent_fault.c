/* Faults on demand: a rule's shape, its checks and the decision (ent_fault.h). */
#include "ent_fault.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ent_filter.h"   /* ent_fv_parse_time: the ISO-8601 times rules and filters share */
#include "ent_namespace.h" /* which names a namespace may have, and the default's */

#define RENEW_LOCK_OPERATION "com.microsoft:renew-lock"

static const char *const op_names[ENT_FAULT_OP_COUNT] = {
    [ENT_FAULT_CONNECT] = "connect",         [ENT_FAULT_ATTACH] = "attach",
    [ENT_FAULT_SEND] = "send",               [ENT_FAULT_RECEIVE] = "receive",
    [ENT_FAULT_COMPLETE] = "complete",       [ENT_FAULT_ABANDON] = "abandon",
    [ENT_FAULT_DEFER] = "defer",             [ENT_FAULT_DEAD_LETTER] = "dead-letter",
    [ENT_FAULT_RENEW_LOCK] = "renew-lock",   [ENT_FAULT_MANAGEMENT] = "management",
    [ENT_FAULT_CBS] = "cbs",
};

static const char *const effect_names[ENT_FAULT_EFFECT_COUNT] = {
    [ENT_FAULT_NONE] = "none",         [ENT_FAULT_ERROR] = "error",   [ENT_FAULT_DELAY] = "delay",
    [ENT_FAULT_NEVER] = "never",       [ENT_FAULT_DETACH] = "detach", [ENT_FAULT_CLOSE] = "close",
    [ENT_FAULT_LOSE_LOCK] = "lose-lock",
};

/* The $management operations amqp10/mgmt_node.c serves (keep the two lists
 * in step): a rule may name any of them, and nothing else. */
static const char *const management_names[] = {
    "com.microsoft:peek-message",         "com.microsoft:renew-lock",
    "com.microsoft:receive-by-sequence-number", "com.microsoft:update-disposition",
    "com.microsoft:schedule-message",     "com.microsoft:cancel-scheduled-message",
    "com.microsoft:batch-delete-messages", "com.microsoft:add-rule",
    "com.microsoft:remove-rule",          "com.microsoft:enumerate-rules",
    "com.microsoft:renew-session-lock",   "com.microsoft:get-session-state",
    "com.microsoft:set-session-state",    "com.microsoft:get-message-sessions",
};

#define OPERATIONS_HELP                                                                                                \
    "connect, attach, send, receive, complete, abandon, defer, dead-letter, renew-lock, cbs, management (every "     \
    "$management request) or one $management operation by its name, such as com.microsoft:peek-message"
#define EFFECTS_HELP "error, delay, never, detach, close or lose-lock"

const char *ent_fault_op_name(ent_fault_op op) { return (unsigned)op < ENT_FAULT_OP_COUNT ? op_names[op] : "?"; }

const char *ent_fault_effect_name(ent_fault_effect effect)
{
    return (unsigned)effect < ENT_FAULT_EFFECT_COUNT ? effect_names[effect] : "?";
}

const char *ent_fault_operation_text(const ent_fault_rule *r)
{
    return r->op == ENT_FAULT_MANAGEMENT && r->management[0] ? r->management : ent_fault_op_name(r->op);
}

ent_fault_op ent_fault_op_of_settle(ent_settle_kind kind)
{
    switch (kind) {
    case ENT_SETTLE_COMPLETE: return ENT_FAULT_COMPLETE;
    case ENT_SETTLE_DEADLETTER: return ENT_FAULT_DEAD_LETTER;
    case ENT_SETTLE_DEFER: return ENT_FAULT_DEFER;
    case ENT_SETTLE_ABANDON:
    case ENT_SETTLE_RELEASE: break;
    }
    return ENT_FAULT_ABANDON;
}

bool ent_fault_management_known(const char *name)
{
    for (size_t i = 0; i < sizeof management_names / sizeof management_names[0]; i++)
        if (!strcmp(management_names[i], name))
            return true;
    return false;
}

/* ---- building a rule ---- */

void ent_fault_rule_init(ent_fault_rule *r, const char *name)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    snprintf(r->entity, sizeof r->entity, "*");
    r->op = ENT_FAULT_OP_COUNT;
    r->effect = ENT_FAULT_NONE;
    r->error = SB_OK;
    r->delay_ms = -1;
    r->after_ms = -1;
    r->times = -1;
    r->remaining = -1;
    r->probability = 1;
}

/* Copies a string value into a fixed field; refuses other types and texts
 * longer than max bytes. */
static sb_status set_text(const char *key, ent_value v, char *out, size_t size, size_t max, char *err, size_t errlen)
{
    if (v.type != ENT_VALUE_STRING)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"%s\" must be a string, not %s", key,
                               ent_value_type_name(v.type));
    size_t n = strlen(v.u.s);
    if (n > max || n >= size)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"%s\" is %zu bytes long; the most is %zu", key, n, max);
    memcpy(out, v.u.s, n + 1);
    return SB_OK;
}

/* A whole number from min to max. */
static sb_status set_whole(const char *key, ent_value v, int64_t min, int64_t max, int64_t *out, char *err,
                           size_t errlen)
{
    if (v.type != ENT_VALUE_INT)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"%s\" must be a whole number, not %s", key,
                               ent_value_type_name(v.type));
    if (v.u.i < min || v.u.i > max)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"%s\" must be from %lld to %lld, not %lld", key,
                               (long long)min, (long long)max, (long long)v.u.i);
    *out = v.u.i;
    return SB_OK;
}

static sb_status set_operation(ent_fault_rule *r, ent_value v, char *err, size_t errlen)
{
    char text[ENT_FAULT_MANAGEMENT_SIZE];
    if (v.type != ENT_VALUE_STRING)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"operation\" must be a string (" OPERATIONS_HELP
                               "), not %s", ent_value_type_name(v.type));
    for (int op = 0; op < ENT_FAULT_OP_COUNT; op++)
        if (!strcasecmp(v.u.s, op_names[op])) {
            r->op = (ent_fault_op)op;
            r->management[0] = 0;
            return SB_OK;
        }
    if (strlen(v.u.s) < sizeof text && ent_fault_management_known(v.u.s)) {
        r->op = ENT_FAULT_MANAGEMENT;
        snprintf(r->management, sizeof r->management, "%s", v.u.s);
        return SB_OK;
    }
    return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "unknown operation '%.80s': use " OPERATIONS_HELP, v.u.s);
}

static sb_status set_effect(ent_fault_rule *r, ent_value v, char *err, size_t errlen)
{
    if (v.type == ENT_VALUE_STRING)
        for (int e = ENT_FAULT_ERROR; e < ENT_FAULT_EFFECT_COUNT; e++)
            if (!strcasecmp(v.u.s, effect_names[e])) {
                r->effect = (ent_fault_effect)e;
                return SB_OK;
            }
    if (v.type != ENT_VALUE_STRING)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"effect\" must be a string (" EFFECTS_HELP "), not %s",
                               ent_value_type_name(v.type));
    return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "unknown effect '%.80s': use " EFFECTS_HELP, v.u.s);
}

/* The error names the status table knows (its conditions), for a refusal. */
static void error_names(char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = 0;
    for (int st = 0; st < SB_STATUS_COUNT && used < outlen; st++) {
        const char *c = sb_status_condition((sb_status)st);
        if (!c || sb_status_from_name(c) != (sb_status)st)
            continue; /* a success, or a condition an earlier row already gave */
        int n = snprintf(out + used, outlen - used, "%s%s", used ? ", " : "", c);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static sb_status set_error(ent_fault_rule *r, ent_value v, char *err, size_t errlen)
{
    if (v.type != ENT_VALUE_STRING)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"error\" must be a string, not %s",
                               ent_value_type_name(v.type));
    sb_status st = sb_status_from_name(v.u.s);
    if (st != SB_OK) {
        r->error = st;
        return SB_OK;
    }
    char names[ENT_FAULT_ERR_MAX / 2 + 256];
    error_names(names, sizeof names);
    return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                           "unknown error '%.80s': name a Service Bus error condition (%s) or its short name "
                           "(server-busy, quota-exceeded, timeout, lock-lost, ...)",
                           v.u.s, names);
}

static sb_status set_probability(ent_fault_rule *r, ent_value v, char *err, size_t errlen)
{
    double p;
    if (v.type == ENT_VALUE_INT)
        p = (double)v.u.i;
    else if (v.type == ENT_VALUE_DOUBLE)
        p = v.u.d;
    else
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"probability\" must be a number, not %s",
                               ent_value_type_name(v.type));
    if (!(p > 0 && p <= 1)) /* NaN fails too */
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "\"probability\" must be above 0 and at most 1 (1: every time), not %g", p);
    r->probability = p;
    return SB_OK;
}

static sb_status set_until(ent_fault_rule *r, ent_value v, char *err, size_t errlen)
{
    int64_t ms;
    if (v.type != ENT_VALUE_STRING)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"until\" must be a string (an ISO-8601 time), not %s",
                               ent_value_type_name(v.type));
    if (ent_fv_parse_time(v.u.s, strlen(v.u.s), &ms) || ms <= 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "\"until\" '%.80s' is not an ISO-8601 time such as 2030-01-01T00:00:00Z", v.u.s);
    r->until_ms = ms;
    return SB_OK;
}

sb_status ent_fault_set(ent_fault_rule *r, const char *key, ent_value v, char *err, size_t errlen)
{
    bool null = v.type == ENT_VALUE_NULL;
    if (!strcasecmp(key, "name"))
        return null ? ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"name\" must not be null")
                    : set_text("name", v, r->name, sizeof r->name, ENT_FAULT_NAME_MAX, err, errlen);
    if (!strcasecmp(key, "namespace")) {
        r->namespace_name[0] = 0;
        return null ? SB_OK
                    : set_text("namespace", v, r->namespace_name, sizeof r->namespace_name, ENT_FAULT_NAMESPACE_MAX,
                               err, errlen);
    }
    if (!strcasecmp(key, "entity")) {
        snprintf(r->entity, sizeof r->entity, "*");
        return null ? SB_OK : set_text("entity", v, r->entity, sizeof r->entity, ENT_FAULT_ENTITY_MAX, err, errlen);
    }
    if (!strcasecmp(key, "operation")) {
        r->op = ENT_FAULT_OP_COUNT;
        return null ? SB_OK : set_operation(r, v, err, errlen);
    }
    if (!strcasecmp(key, "effect")) {
        r->effect = ENT_FAULT_NONE;
        return null ? SB_OK : set_effect(r, v, err, errlen);
    }
    if (!strcasecmp(key, "error")) {
        r->error = SB_OK;
        return null ? SB_OK : set_error(r, v, err, errlen);
    }
    if (!strcasecmp(key, "description")) {
        r->description[0] = 0;
        return null ? SB_OK
                    : set_text("description", v, r->description, sizeof r->description, ENT_FAULT_DESCRIPTION_MAX,
                               err, errlen);
    }
    if (!strcasecmp(key, "delayMs")) {
        r->delay_ms = -1;
        return null ? SB_OK : set_whole("delayMs", v, 1, ENT_FAULT_MS_MAX, &r->delay_ms, err, errlen);
    }
    if (!strcasecmp(key, "afterMs")) {
        r->after_ms = -1;
        return null ? SB_OK : set_whole("afterMs", v, 0, ENT_FAULT_MS_MAX, &r->after_ms, err, errlen);
    }
    if (!strcasecmp(key, "times")) {
        r->times = r->remaining = -1;
        if (null)
            return SB_OK;
        sb_status st = set_whole("times", v, 1, ENT_FAULT_TIMES_MAX, &r->times, err, errlen);
        r->remaining = r->times; /* a new rule has all of them left */
        return st;
    }
    if (!strcasecmp(key, "probability")) {
        r->probability = 1;
        return null ? SB_OK : set_probability(r, v, err, errlen);
    }
    if (!strcasecmp(key, "seed")) {
        r->seed = 0;
        return null ? SB_OK : set_whole("seed", v, 0, INT64_MAX, &r->seed, err, errlen);
    }
    if (!strcasecmp(key, "until")) {
        r->until_ms = 0;
        return null ? SB_OK : set_until(r, v, err, errlen);
    }
    return ent_fail_status(SB_ERR_NOT_FOUND, err, errlen,
                           "unknown key \"%.64s\": a fault rule has name, namespace, entity, operation, effect, error, "
                           "description, delayMs, afterMs, times, probability, seed and until",
                           key);
}

/* ---- checking a rule ---- */

sb_status ent_fault_name_check(const char *name, char *err, size_t errlen)
{
    size_t n = strlen(name);
    if (n == 0 || n > ENT_FAULT_NAME_MAX)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "a fault rule's name must be 1 to %d characters long, not %zu", ENT_FAULT_NAME_MAX, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!isalnum(c) && c != '.' && c != '_' && c != '-')
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "a fault rule's name may hold letters, digits, '.', '_' and '-' only; '%.80s' has "
                                   "'%c' at position %zu",
                                   name, isprint(c) ? c : '?', i + 1);
    }
    return SB_OK;
}

static bool glob_char(unsigned char c)
{
    return isalnum(c) || c == '.' || c == '-' || c == '_' || c == '~' || c == '$' || c == '*' || c == '?';
}

sb_status ent_fault_glob_check(const char *glob, char *err, size_t errlen)
{
    size_t n = strlen(glob);
    if (n == 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "\"entity\" must not be empty: leave it out, or give \"*\", for every entity");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)glob[i];
        if (c == '/') {
            if (i == 0 || i + 1 == n || glob[i + 1] == '/')
                return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                       "entity glob '%.300s' has an empty path segment (a '/' at its start, its end "
                                       "or beside another)",
                                       glob);
        } else if (!glob_char(c)) {
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "entity glob '%.300s' has '%c' at position %zu: a glob is an entity path (letters, "
                                   "digits, '.', '-', '_', '~', '$', '/') with '*' for any run of characters and '?' "
                                   "for one",
                                   glob, isprint(c) ? c : '?', i + 1);
        }
    }
    return SB_OK;
}

static bool error_effect(ent_fault_effect e) { return e == ENT_FAULT_ERROR || e == ENT_FAULT_DETACH || e == ENT_FAULT_CLOSE; }

sb_status ent_fault_validate(const ent_fault_rule *r, const char *namespace_name, char *err, size_t errlen)
{
    sb_status st = ent_fault_name_check(r->name, err, errlen);
    if (st != SB_OK)
        return st;
    if (namespace_name && !ent_namespace_is_default(r->namespace_name, namespace_name) &&
        ent_namespace_name_check(r->namespace_name, err, errlen) != SB_OK) {
        size_t n = err && errlen ? strlen(err) : 0;
        if (n && err[n - 1] == '.')
            err[n - 1] = 0; /* the refusals here end without one */
        return SB_ERR_ARGUMENT; /* a rule that names nothing a namespace may be called: a bad rule */
    }
    if (r->op == ENT_FAULT_OP_COUNT)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "a fault rule needs an \"operation\": " OPERATIONS_HELP);
    if (r->effect == ENT_FAULT_NONE)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "a fault rule needs an \"effect\": " EFFECTS_HELP);
    if ((st = ent_fault_glob_check(r->entity, err, errlen)) != SB_OK)
        return st;
    const char *op = ent_fault_operation_text(r), *effect = ent_fault_effect_name(r->effect);
    if (r->op == ENT_FAULT_CONNECT && strcmp(r->entity, "*"))
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "the operation connect has no entity: leave \"entity\" out or give \"*\", not '%.300s'",
                               r->entity);
    if (r->effect == ENT_FAULT_LOSE_LOCK && r->op != ENT_FAULT_RECEIVE)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "the effect lose-lock applies only to the operation receive (the message is delivered "
                               "and its lock ends afterMs later), not to %s",
                               op);
    if (r->effect == ENT_FAULT_DETACH && r->op == ENT_FAULT_CONNECT)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "the effect detach needs a link, and the operation connect has none: use close");
    if (error_effect(r->effect) && r->error == SB_OK)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "the effect %s needs an \"error\", such as com.microsoft:server-busy", effect);
    if (!error_effect(r->effect) && r->error != SB_OK)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "\"error\" applies only to the effects error, detach and close, not to %s", effect);
    if (!error_effect(r->effect) && r->description[0])
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "\"description\" applies only to the effects error, detach and close, not to %s",
                               effect);
    if (r->effect == ENT_FAULT_DELAY && r->delay_ms < 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "the effect delay needs \"delayMs\" (1 to %lld)", (long long)ENT_FAULT_MS_MAX);
    if (r->effect != ENT_FAULT_DELAY && r->delay_ms >= 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"delayMs\" applies only to the effect delay, not to %s",
                               effect);
    if (r->effect == ENT_FAULT_LOSE_LOCK && r->after_ms < 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "the effect lose-lock needs \"afterMs\" (0 to %lld): how long the delivered message "
                               "keeps its lock",
                               (long long)ENT_FAULT_MS_MAX);
    if (r->effect != ENT_FAULT_LOSE_LOCK && r->after_ms >= 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "\"afterMs\" applies only to the effect lose-lock, not to %s", effect);
    return SB_OK;
}

/* ---- the decision ---- */

bool ent_fault_glob_match(const char *glob, const char *text)
{
    /* '*' backtracks to the last star only: linear enough for paths */
    const char *star = NULL, *resume = NULL;
    while (*text) {
        if (*glob == '*') {
            star = glob++;
            resume = text;
        } else if (*glob && (*glob == '?' || tolower((unsigned char)*glob) == tolower((unsigned char)*text))) {
            glob++;
            text++;
        } else if (star) {
            glob = star + 1;
            text = ++resume;
        } else {
            return false;
        }
    }
    while (*glob == '*')
        glob++;
    return !*glob;
}

bool ent_fault_draw(int64_t seed, uint64_t n, double probability)
{
    if (probability >= 1)
        return true;
    /* splitmix64 of (seed, n): a counter-based generator, so the n-th draw
     * needs no state but n, and the same seed always gives the same pattern */
    uint64_t z = (uint64_t)seed + (n + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 < probability;
}

static bool op_matches(const ent_fault_rule *r, const ent_fault_point *p)
{
    if (p->op != ENT_FAULT_MANAGEMENT)
        return r->op == p->op;
    const char *name = p->management ? p->management : "";
    if (r->op == ENT_FAULT_RENEW_LOCK)
        return !strcmp(name, RENEW_LOCK_OPERATION);
    return r->op == ENT_FAULT_MANAGEMENT && (!r->management[0] || !strcmp(r->management, name));
}

/* A rule of the default namespace (its names, or none) matches operations
 * of the default namespace; another, those of the namespace it names. */
static bool namespace_matches(const ent_fault_rule *r, const ent_fault_point *p)
{
    bool rule_default = ent_namespace_is_default(r->namespace_name, p->own_namespace);
    bool point_default = !p->namespace_name || !*p->namespace_name;
    return rule_default == point_default && (rule_default || !strcasecmp(r->namespace_name, p->namespace_name));
}

bool ent_fault_matches(const ent_fault_rule *r, const ent_fault_point *p, int64_t now_ms)
{
    if (r->remaining == 0 || (r->until_ms && now_ms >= r->until_ms) || !op_matches(r, p) || !namespace_matches(r, p))
        return false;
    return ent_fault_glob_match(r->entity, p->entity ? p->entity : "");
}

bool ent_fault_any_matches(const ent_fault_list *list, const ent_fault_point *p, int64_t now_ms)
{
    for (size_t i = 0; i < list->n; i++)
        if (ent_fault_matches(&list->rules[i], p, now_ms))
            return true;
    return false;
}

ent_fault_rule *ent_fault_decide(ent_fault_list *list, const ent_fault_point *p, int64_t now_ms)
{
    for (size_t i = 0; i < list->n; i++) {
        ent_fault_rule *r = &list->rules[i];
        if (!ent_fault_matches(r, p, now_ms))
            continue;
        if (ent_fault_draw(r->seed, r->draws++, r->probability))
            return r;
    }
    return NULL;
}

void ent_fault_describe(const ent_fault_rule *r, char *out, size_t outlen)
{
    if (r->description[0])
        snprintf(out, outlen, "%s", r->description);
    else
        snprintf(out, outlen, "Injected by sbemu fault rule '%s' (%s on '%s').", r->name, ent_fault_operation_text(r),
                 r->entity);
}
