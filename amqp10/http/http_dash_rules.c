/* A subscription's rules, and the rule box of the dashboard:
 *
 *   GET  rules?entity=<topic>/Subscriptions/<name>
 *        its rules as the rules table keeps them (filter, @parameters,
 *        correlation, action);
 *   POST rules/test {"filter": {"type": "Sql"|"Correlation"|"True"|"False",
 *                               "sqlExpression", "parameters", "correlation"},
 *                    "action": {"sqlExpression", "parameters"}}
 *                or {"rule": {"subscription", "name"}} (a rule in force)
 *              with {"message": {"system": {...}, "properties": {...}}} (as
 *                    `sbemu filter` reads it)
 *                or {"pick": {"entity", "subqueue", "sequenceNumber"}} (a
 *                    stored message, seen exactly as routing sees it)
 *        says "match", "no match" or "unknown" (a missing property makes a
 *        comparison unknown: no match either), or the evaluation error a
 *        topic would dead-letter the copy for, and the message after the
 *        action when there is one and it matched. Nothing changes. The rule
 *        language is entities/' (filter_*.c), the same as routing's. */
#include <string.h>
#include <strings.h>

#include "amqp_filter_msg.h"
#include "amqp_message.h"
#include "amqp_rule_action.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "http_dash.h"
#include "store_dash.h"
#include "store_rule_json.h"
#include "store_rules.h"

/* Rules of one subscription listed at most (Service Bus allows 2000 filters per topic). */
#define DASH_RULES_LIST_MAX 2000

/* ---- the list ---- */

/* A JSON text column as JSON (null for NULL). */
static json_t *json_column(const char *text)
{
    if (!text)
        return json_null();
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
    return j ? j : json_string(text);
}

static void on_rules(void *ctx, sb_status st, const store_rule *rules, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the rules");
        return;
    }
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const store_rule *x = &rules[i];
        json_t *filter = json_pack("{s:s}", "type", x->filter_type ? x->filter_type : "");
        if (x->sql_expression)
            json_object_set_new(filter, "sqlExpression", json_string(x->sql_expression));
        if (x->correlation)
            json_object_set_new(filter, "correlation", json_column(x->correlation));
        if (x->filter_parameters)
            json_object_set_new(filter, "parameters", json_column(x->filter_parameters));
        json_t *rule = json_pack("{s:s, s:o, s:o}", "name", x->name, "filter", filter, "createdAt",
                                 http_dash_time(x->created_ms));
        if (x->action_expression && *x->action_expression) {
            json_t *action = json_pack("{s:s}", "sqlExpression", x->action_expression);
            if (x->action_parameters)
                json_object_set_new(action, "parameters", json_column(x->action_parameters));
            json_object_set_new(rule, "action", action);
        } else {
            json_object_set_new(rule, "action", json_null());
        }
        json_array_append_new(list, rule);
    }
    http_dash_json(r, SB_OK, json_pack("{s:s, s:o}", "entity", r->entity, "rules", list));
}

static void rules_of(http_req *r, const ent_entity *e, const ent_route *route)
{
    (void)route;
    if (e->kind != ENT_KIND_SUBSCRIPTION) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'%s' is a %s: rules belong to subscriptions "
                                            "(<topic>/Subscriptions/<name>).", e->name, http_dash_kind_name(e->kind));
        return;
    }
    snprintf(r->entity, sizeof r->entity, "%s", e->name);
    store_rule_list(broker_store(r->broker), e->id, 0, DASH_RULES_LIST_MAX, on_rules, r);
}

void http_dash_rules(http_req *r)
{
    http_dash_with_entity(r, http_req_arg(r, "entity"), "the query parameter 'entity'", rules_of);
}

/* ---- the test ---- */

typedef struct test_work {
    json_t *body;
    int subqueue;
    int64_t seq;
} test_work;

static void test_work_free(void *p)
{
    test_work *w = p;
    json_decref(w->body);
    ent_free(w);
}

/* Filter and action to try, compiled; owned. */
typedef struct trial {
    ent_filter *filter;
    ent_filter_action *action;
    char name[ENT_RULE_NAME_SIZE]; /* the rule's, for RuleName; "" for a filter given here */
} trial;

static void trial_free(trial *t)
{
    ent_filter_free(t->filter);
    ent_filter_action_free(t->action);
}

/* @parameters of a JSON object, in the rules table's value forms. 0, or -1 with err. */
static int params_of(json_t *o, store_rule_props *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return ent_fail(err, errlen, "'parameters' must be an object of @name: value");
    char *text = store_json_text(o, JSON_COMPACT);
    if (!text)
        return ent_fail(err, errlen, "out of memory");
    int rc = store_rule_props_parse(text, out, err, errlen);
    ent_free(text);
    return rc;
}

static int expression_of(json_t *o, const char *what, const char **out, char *err, size_t errlen)
{
    json_t *x = json_object_get(o, "sqlExpression");
    if (!json_is_string(x) || !json_string_length(x))
        return ent_fail(err, errlen, "%s needs 'sqlExpression' (a string)", what);
    *out = json_string_value(x);
    return 0;
}

/* The filter and action given in the body. 0, or -1 with err (a syntax error says where). */
static int compile_given(json_t *body, trial *t, char *err, size_t errlen)
{
    json_t *f = json_object_get(body, "filter"), *a = json_object_get(body, "action");
    if (!json_is_object(f))
        return ent_fail(err, errlen, "'filter' must be an object: {\"type\": \"Sql\", \"sqlExpression\": \"...\"}");
    const char *type = json_string_value(json_object_get(f, "type"));
    if (!type)
        type = json_object_get(f, "correlation") ? "Correlation" : "Sql";
    ent_filter_error e;
    store_rule_props params;
    if (params_of(json_object_get(f, "parameters"), &params, err, errlen))
        return -1;
    int rc = 0;
    if (!strcasecmp(type, "Sql")) {
        const char *text;
        if (expression_of(f, "An Sql filter", &text, err, errlen))
            rc = -1;
        else if (ent_filter_parse(text, strlen(text), params.props, params.n, &t->filter, &e) < 0)
            rc = ent_fail(err, errlen, "filter: %s", e.message);
    } else if (!strcasecmp(type, "True")) {
        t->filter = ent_filter_new_true();
    } else if (!strcasecmp(type, "False")) {
        t->filter = ent_filter_new_false();
    } else if (!strcasecmp(type, "Correlation")) {
        json_t *c = json_object_get(f, "correlation");
        char *text = json_is_object(c) ? store_json_text(c, JSON_COMPACT) : NULL;
        ent_filter_correlation spec;
        char *storage = NULL;
        store_rule_props props;
        memset(&props, 0, sizeof props);
        if (!text)
            rc = ent_fail(err, errlen, "A Correlation filter needs 'correlation': {\"CorrelationId\": ..., "
                                       "\"Label\": ..., \"Properties\": {...}}");
        else if (store_rule_correlation_parse(text, &spec, &storage, &props, err, errlen))
            rc = -1;
        else if (ent_filter_new_correlation(&spec, &t->filter, &e) < 0)
            rc = ent_fail(err, errlen, "filter: %s", e.message);
        ent_free(text);
        ent_free(storage);
        store_rule_props_free(&props);
    } else {
        rc = ent_fail(err, errlen, "filter 'type' must be Sql, Correlation, True or False, not \"%.32s\"", type);
    }
    store_rule_props_free(&params);
    if (rc)
        return -1;
    if (!t->filter)
        return ent_fail(err, errlen, "out of memory");
    if (a && !json_is_null(a)) {
        const char *text;
        if (!json_is_object(a))
            return ent_fail(err, errlen, "'action' must be an object with 'sqlExpression'");
        if (expression_of(a, "An action", &text, err, errlen))
            return -1;
        if (params_of(json_object_get(a, "parameters"), &params, err, errlen))
            return -1;
        rc = ent_filter_action_parse(text, strlen(text), params.props, params.n, &t->action, &e);
        store_rule_props_free(&params);
        if (rc < 0)
            return ent_fail(err, errlen, "action: %s", e.message);
    }
    return 0;
}

/* The rule in force named by {"rule": {"subscription", "name"}}: its
 * filter and action are the cache's (compiled when the cache was filled), so
 * they are referred to, not owned: *borrowed set. 0, or -1 with st and err. */
static int find_rule(const http_req *r, json_t *spec, const ent_filter_rule **out, sb_status *st, char *err,
                     size_t errlen)
{
    const char *sub = json_string_value(json_object_get(spec, "subscription")),
               *name = json_string_value(json_object_get(spec, "name"));
    *st = SB_ERR_ARGUMENT;
    if (!sub || !name)
        return ent_fail(err, errlen, "'rule' needs 'subscription' (<topic>/Subscriptions/<name>) and 'name'");
    const ent_cache *cache = broker_cache(r->broker);
    const ent_entity *e = cache ? ent_cache_find(cache, ENT_NAMESPACE_DEFAULT_ID, sub) : NULL;
    *st = SB_ERR_NOT_FOUND;
    if (!e || e->kind != ENT_KIND_SUBSCRIPTION)
        return ent_fail(err, errlen, "No subscription '%s'", sub);
    size_t n;
    const ent_filter_rule *rules = ent_cache_rules(cache, e, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(rules[i].name, name)) {
            *out = &rules[i];
            return 0;
        }
    return ent_fail(err, errlen, "Subscription '%s' has no rule '%s'", sub, name);
}

static const char *result_name(ent_filter_result res)
{
    return res == ENT_FILTER_TRUE ? "match" : res == ENT_FILTER_UNKNOWN ? "unknown" : "no match";
}

/* ---- messages pasted as JSON ---- */

static int load_system(ent_filter_kvmsg *m, json_t *sys, char *err, size_t errlen)
{
    const char *key;
    json_t *j;
    json_object_foreach(sys, key, j) {
        int id = ent_filter_sys_lookup(key, strlen(key));
        if (id < 0)
            return ent_fail(err, errlen, "message.system: unknown system property \"%.64s\"", key);
        if (json_is_null(j))
            continue;
        ent_fv_type want = ent_filter_sys_type((ent_filter_sys)id);
        ent_filter_value v = {0};
        const char *s = json_string_value(j);
        size_t slen = s ? json_string_length(j) : 0;
        int64_t ms;
        bool ok = false;
        switch (want) {
        case ENT_FV_STRING: ok = s != NULL; if (ok) v = ent_fv_string(s, slen); break;
        case ENT_FV_INT: ok = json_is_integer(j); if (ok) v = ent_fv_int(json_integer_value(j)); break;
        case ENT_FV_TIME:
            if (json_is_integer(j))
                ok = true, v = ent_fv_time(json_integer_value(j));
            else if (s && !ent_fv_parse_time(s, slen, &ms))
                ok = true, v = ent_fv_time(ms);
            break;
        case ENT_FV_DURATION: ok = json_is_integer(j); if (ok) v = ent_fv_duration(json_integer_value(j)); break;
        case ENT_FV_UUID: v.type = ENT_FV_UUID; ok = s && !ent_fv_parse_uuid(s, slen, v.u.uuid); break;
        default: break;
        }
        if (!ok)
            return ent_fail(err, errlen, "message.system.%s must be %s", key,
                            want == ENT_FV_STRING ? "a string" : want == ENT_FV_INT ? "an integer"
                            : want == ENT_FV_TIME ? "an ISO 8601 time or milliseconds"
                            : want == ENT_FV_DURATION ? "milliseconds" : "a GUID");
        if (ent_filter_kvmsg_set_sys(m, (ent_filter_sys)id, &v) < 0)
            return ent_fail(err, errlen, "out of memory");
    }
    return 0;
}

static int load_message(ent_filter_kvmsg *m, json_t *msg, char *err, size_t errlen)
{
    if (!json_is_object(msg))
        return ent_fail(err, errlen, "'message' must be an object: {\"system\": {...}, \"properties\": {...}}");
    const char *key;
    json_t *j;
    json_object_foreach(msg, key, j) {
        if (strcmp(key, "system") && strcmp(key, "properties"))
            return ent_fail(err, errlen, "message: unknown member \"%.64s\" (it has \"system\" and \"properties\")",
                            key);
        if (!json_is_object(j))
            return ent_fail(err, errlen, "message.%s must be an object", key);
    }
    if (json_object_get(msg, "system") && load_system(m, json_object_get(msg, "system"), err, errlen))
        return -1;
    json_object_foreach(json_object_get(msg, "properties"), key, j) {
        ent_filter_value v;
        switch (json_typeof(j)) {
        case JSON_STRING: v = ent_fv_string(json_string_value(j), json_string_length(j)); break;
        case JSON_INTEGER: v = ent_fv_int(json_integer_value(j)); break;
        case JSON_REAL: v = ent_fv_double(json_real_value(j)); break;
        case JSON_TRUE: v = ent_fv_bool(1); break;
        case JSON_FALSE: v = ent_fv_bool(0); break;
        case JSON_NULL: v = ent_fv_null(); break;
        default: return ent_fail(err, errlen, "message.properties.%s must be a string, number, boolean or null", key);
        }
        if (ent_filter_kvmsg_set_user(m, key, strlen(key), &v) < 0)
            return ent_fail(err, errlen, "out of memory");
    }
    return 0;
}

static json_t *fv_json(const ent_filter_value *v)
{
    char buf[64];
    switch (v->type) {
    case ENT_FV_NULL: return json_null();
    case ENT_FV_BOOL: return json_boolean(v->u.b);
    case ENT_FV_INT:
    case ENT_FV_DURATION: return json_integer(v->u.i);
    case ENT_FV_DOUBLE: return json_real(v->u.d);
    case ENT_FV_STRING: return json_stringn_nocheck(v->u.s.ptr, v->u.s.len);
    case ENT_FV_TIME: ent_fv_format_time(v->u.i, buf, sizeof buf); return json_string(buf);
    case ENT_FV_UUID: ent_fv_format_uuid(v->u.uuid, buf, sizeof buf); return json_string(buf);
    }
    return json_null();
}

static json_t *kvmsg_json(const ent_filter_kvmsg *m)
{
    json_t *sys = json_object(), *props = json_object();
    for (int i = 0; i < ENT_SYS_COUNT; i++)
        if (m->sys_set[i])
            json_object_set_new(sys, ent_filter_sys_name((ent_filter_sys)i), fv_json(&m->sys[i]));
    for (size_t i = 0; i < m->nuser; i++)
        json_object_set_new(props, m->user[i].name, fv_json(&m->user[i].value));
    return json_pack("{s:o, s:o}", "system", sys, "properties", props);
}

/* ---- evaluation ---- */

/* Evaluates filter (and action) against a pasted message or a stored one
 * (bytes non-NULL: enqueued_ms its EnqueuedTimeUtc); answers r. */
static void evaluate(http_req *r, const ent_filter *filter, const ent_filter_action *action, const char *rule_name,
                     const uint8_t *bytes, size_t len, int64_t enqueued_ms)
{
    test_work *w = r->work;
    char err[512] = "";
    ent_filter_kvmsg kv;
    ent_filter_kvmsg_init(&kv);
    amqp_msg parsed;
    amqp_filter_view view;
    ent_filter_msg msg;
    if (bytes) {
        if (amqp_msg_parse(bytes, len, &parsed, err, sizeof err)) {
            http_dash_error(r, SB_ERR_ARGUMENT, "The picked message cannot be read: %s.", err);
            return;
        }
        amqp_filter_view_init(&view, bytes, len, &parsed, enqueued_ms);
        msg = amqp_filter_view_msg(&view);
    } else {
        if (load_message(&kv, json_object_get(w->body, "message"), err, sizeof err)) {
            ent_filter_kvmsg_free(&kv);
            http_dash_error(r, SB_ERR_ARGUMENT, "%s.", err);
            return;
        }
        msg = ent_filter_kvmsg_view(&kv);
    }
    ent_filter_error e;
    ent_filter_result res = ent_filter_eval(filter, &msg, &e);
    json_t *doc = json_object();
    if (res == ENT_FILTER_ERROR) {
        json_object_set_new(doc, "result", json_string("error"));
        json_object_set_new(doc, "error", json_string(e.message));
        json_object_set_new(doc, "note", json_string("A topic dead-letters this copy when the subscription has "
                                                     "DeadLetteringOnFilterEvaluationExceptions, else skips it."));
    } else {
        json_object_set_new(doc, "result", json_string(result_name(res)));
    }
    if (res == ENT_FILTER_TRUE && action) {
        if (bytes) {
            uint8_t *out = NULL;
            size_t outlen = 0;
            if (amqp_rule_apply(bytes, len, &parsed, enqueued_ms, action, rule_name, &out, &outlen, &e) < 0) {
                json_object_set_new(doc, "actionError", json_string(e.message));
            } else {
                json_object_set_new(doc, "after", http_dash_message_json(out, outlen));
                ent_free(out);
            }
        } else {
            ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&kv);
            if (ent_filter_action_exec(action, &mut, &e) < 0)
                json_object_set_new(doc, "actionError", json_string(e.message));
            else
                json_object_set_new(doc, "after", kvmsg_json(&kv));
        }
    }
    ent_filter_kvmsg_free(&kv);
    http_dash_json(r, SB_OK, doc);
}

/* Compiles or finds what to try, then evaluates it on the message. */
static void run_test(http_req *r, const uint8_t *bytes, size_t len, int64_t enqueued_ms)
{
    test_work *w = r->work;
    char err[512] = "";
    json_t *rule = json_object_get(w->body, "rule");
    if (rule) {
        const ent_filter_rule *found = NULL;
        sb_status st = SB_ERR_ARGUMENT;
        if (find_rule(r, rule, &found, &st, err, sizeof err)) {
            http_dash_error(r, st, "%s.", err);
            return;
        }
        evaluate(r, found->filter, found->action, found->name, bytes, len, enqueued_ms);
        return;
    }
    trial t;
    memset(&t, 0, sizeof t);
    if (compile_given(w->body, &t, err, sizeof err)) {
        trial_free(&t);
        http_dash_error(r, SB_ERR_ARGUMENT, "%s.", err);
        return;
    }
    evaluate(r, t.filter, t.action, NULL, bytes, len, enqueued_ms);
    trial_free(&t);
}

static void on_picked(void *ctx, sb_status st, const store_dash_msg *msgs, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    test_work *w = r->work;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the picked message");
        return;
    }
    if (!n) {
        http_dash_error(r, SB_ERR_MESSAGE_NOT_FOUND, "No message %lld in '%s'%s.", (long long)w->seq, r->entity,
                        w->subqueue ? " (its dead-letter subqueue)" : "");
        return;
    }
    run_test(r, msgs[0].bytes, msgs[0].len, msgs[0].enqueued_ms);
}

static void pick_from(http_req *r, const ent_entity *e, const ent_route *route)
{
    (void)route;
    test_work *w = r->work;
    snprintf(r->entity, sizeof r->entity, "%s", e->name);
    store_dash_pick(broker_store(r->broker), e->id, w->subqueue, &w->seq, 1, false, ent_clock_now_ms(), on_picked, r);
}

void http_dash_rule_test(http_req *r)
{
    json_t *body = http_dash_body(r);
    if (!body)
        return;
    test_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        json_decref(body);
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    w->body = body;
    r->work = w;
    r->work_free = test_work_free;
    json_t *pick = json_object_get(body, "pick"), *message = json_object_get(body, "message");
    bool has_rule = json_object_get(body, "rule") != NULL, has_filter = json_object_get(body, "filter") != NULL;
    if (has_rule == has_filter) {
        http_dash_error(r, SB_ERR_ARGUMENT, "Give either 'filter' (and optionally 'action') to try, or 'rule': "
                                            "{\"subscription\", \"name\"} for a rule in force.");
        return;
    }
    if (!pick == !message) {
        http_dash_error(r, SB_ERR_ARGUMENT, "Give either 'message' ({\"system\": {...}, \"properties\": {...}}) or "
                                            "'pick' ({\"entity\", \"subqueue\", \"sequenceNumber\"}).");
        return;
    }
    if (message) {
        run_test(r, NULL, 0, 0);
        return;
    }
    json_t *seq = json_object_get(pick, "sequenceNumber"), *sq = json_object_get(pick, "subqueue");
    if (!json_is_object(pick) || !json_is_string(json_object_get(pick, "entity")) || !json_is_integer(seq) ||
        json_integer_value(seq) <= 0 || (sq && !json_is_string(sq))) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'pick' must be {\"entity\": <path>, \"subqueue\": \"active\" or "
                                            "\"deadletter\", \"sequenceNumber\": <number above 0>}.");
        return;
    }
    w->seq = json_integer_value(seq);
    if (http_dash_subqueue(r, json_string_value(sq), false, "pick.subqueue", &w->subqueue))
        return;
    http_dash_with_entity(r, json_string_value(json_object_get(pick, "entity")), "'pick.entity'", pick_from);
}
