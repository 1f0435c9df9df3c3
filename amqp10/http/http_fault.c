/* Fault rules over HTTP (http_router.h; README "Faults on demand"), behind
 * the management API's SAS check:
 *
 *   PUT    /$sbemu/faults/<name>   creates (201) or replaces (200) the rule its JSON body gives
 *   GET    /$sbemu/faults          {"faults": [every rule, with "fired"]}
 *   GET    /$sbemu/faults/<name>   one rule
 *   DELETE /$sbemu/faults/<name>   removes it: {"deleted": 1}
 *   DELETE /$sbemu/faults          removes every rule: {"deleted": N}
 *
 * The rule's keys and checks are entities/ent_fault.h's (Config.json's
 * UserConfig.Faults reads the same way). A write is answered once this
 * emulator has reloaded the rules, so the client's next operation meets
 * them; other emulators on the database follow the table's NOTIFY. Every
 * refusal is JSON {"error": "..."}: 400 saying exactly what is wrong (and
 * nothing is changed), 404 for a rule that is not there, 405 for a method
 * the resource does not take. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ent_alloc.h"
#include "ent_config.h"
#include "ent_log.h"
#include "http_router.h"
#include "store_faults.h"

typedef enum fault_step { STEP_GET_ALL, STEP_GET_ONE, STEP_PUT, STEP_DELETE } fault_step;

/* What a request keeps between its store steps (r->work). */
typedef struct fault_work {
    fault_step step;
    ent_fault_rule rule; /* PUT: the rule; GET and DELETE of one: its name */
    bool created;
    int64_t deleted;
} fault_work;

static const char *method_name(const http_req *r)
{
    return r->method == HTTP_GET ? "GET" : r->method == HTTP_PUT ? "PUT" : r->method == HTTP_DELETE ? "DELETE"
                                                                                                   : "POST";
}

__attribute__((format(printf, 3, 4))) static void refuse(http_req *r, sb_status st, const char *fmt, ...)
{
    char msg[ENT_FAULT_ERR_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->wsi)
        LOG_INFO("http: %s /%s: %d %s", method_name(r), r->path, sb_status_http_code(st), msg);
    http_respond_json_value(r, st, json_pack("{s:s}", "error", msg));
}

/* The store failed doing what `doing` says: server-busy while PostgreSQL is
 * away (the SDKs' and scripts' cue to retry), else an internal error. */
static void refuse_store(http_req *r, sb_status st, const char *doing)
{
    refuse(r, st == SB_ERR_SERVER_BUSY ? st : SB_ERR_INTERNAL, "The emulator's store could not %s (%s); retry.", doing,
           sb_status_name(st));
}

static void iso_time(int64_t ms, char *out, size_t n)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, n, "%s.%03dZ", day, (int)(ms % 1000));
}

/* A rule in the API's shape: what was given, and how it has fired. */
static json_t *rule_json(const ent_fault_rule *f)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "name", json_string(f->name));
    if (f->namespace_name[0])
        json_object_set_new(o, "namespace", json_string(f->namespace_name));
    json_object_set_new(o, "entity", json_string(f->entity));
    json_object_set_new(o, "operation", json_string(ent_fault_operation_text(f)));
    json_object_set_new(o, "effect", json_string(ent_fault_effect_name(f->effect)));
    if (f->error != SB_OK)
        json_object_set_new(o, "error", json_string(sb_status_condition(f->error)));
    if (f->description[0])
        json_object_set_new(o, "description", json_string(f->description));
    if (f->delay_ms >= 0)
        json_object_set_new(o, "delayMs", json_integer(f->delay_ms));
    if (f->after_ms >= 0)
        json_object_set_new(o, "afterMs", json_integer(f->after_ms));
    if (f->times >= 0) {
        json_object_set_new(o, "times", json_integer(f->times));
        json_object_set_new(o, "remaining", json_integer(f->remaining < 0 ? 0 : f->remaining));
    }
    if (f->probability < 1 || f->seed) {
        json_object_set_new(o, "probability", json_real(f->probability));
        json_object_set_new(o, "seed", json_integer(f->seed));
    }
    if (f->until_ms) {
        char until[48];
        iso_time(f->until_ms, until, sizeof until);
        json_object_set_new(o, "until", json_string(until));
    }
    json_object_set_new(o, "fired", json_integer(f->fired));
    return o;
}

/* ---- the steps' answers ---- */

static void on_reloaded(void *ctx, sb_status st)
{
    (void)st; /* the change is committed whatever this emulator's reload did */
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    fault_work *w = r->work;
    if (w->step == STEP_PUT)
        http_respond_json_value(r, w->created ? SB_CREATED : SB_OK, rule_json(&w->rule));
    else
        http_respond_json_value(r, SB_OK, json_pack("{s:I}", "deleted", (json_int_t)w->deleted));
}

static void on_put(void *ctx, sb_status st, bool created)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    fault_work *w = r->work;
    if (st != SB_OK) {
        char doing[ENT_FAULT_NAME_SIZE + 32];
        snprintf(doing, sizeof doing, "save fault rule '%s'", w->rule.name);
        refuse_store(r, st, doing);
        return;
    }
    w->created = created;
    broker_faults_reload(r->broker, on_reloaded, r);
}

static void on_deleted(void *ctx, sb_status st, int64_t removed)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    fault_work *w = r->work;
    if (st == SB_ERR_NOT_FOUND) {
        refuse(r, st, "There is no fault rule named '%s'.", w->rule.name);
        return;
    }
    if (st != SB_OK) {
        refuse_store(r, st, "remove fault rules");
        return;
    }
    w->deleted = removed;
    broker_faults_reload(r->broker, on_reloaded, r);
}

static void on_loaded(void *ctx, sb_status st, const ent_fault_rule *rules, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    fault_work *w = r->work;
    if (st != SB_OK) {
        refuse_store(r, st, "read the fault rules");
        return;
    }
    if (w->step == STEP_GET_ONE) {
        for (size_t i = 0; i < n; i++)
            if (!strcasecmp(rules[i].name, w->rule.name)) {
                http_respond_json_value(r, SB_OK, rule_json(&rules[i]));
                return;
            }
        refuse(r, SB_ERR_NOT_FOUND, "There is no fault rule named '%s'.", w->rule.name);
        return;
    }
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if (json_array_append_new(list, rule_json(&rules[i]))) {
            json_decref(list);
            list = NULL;
        }
    http_respond_json_value(r, SB_OK, list ? json_pack("{s:o}", "faults", list) : NULL);
}

/* ---- the request ---- */

/* The PUT body into w->rule (named name); -1 when refused (answered). */
static int read_body(http_req *r, const char *name, ent_fault_rule *rule)
{
    if (!r->body.len) {
        refuse(r, SB_ERR_ARGUMENT, "A PUT needs a body: the rule as a JSON object, e.g. "
               "{\"operation\":\"send\",\"effect\":\"error\",\"error\":\"com.microsoft:server-busy\",\"times\":2}.");
        return -1;
    }
    json_error_t jerr;
    json_t *body = json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &jerr);
    if (!body) {
        refuse(r, SB_ERR_ARGUMENT, "The body is not JSON: line %d, column %d: %s.", jerr.line, jerr.column, jerr.text);
        return -1;
    }
    if (!json_is_object(body)) {
        json_decref(body);
        refuse(r, SB_ERR_ARGUMENT, "The body must be a JSON object (the rule), not an array or a single value.");
        return -1;
    }
    ent_fault_rule_init(rule, name);
    char err[ENT_FAULT_ERR_MAX];
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v) {
        ent_value value;
        switch (json_typeof(v)) {
        case JSON_STRING: value = ent_value_string(json_string_value(v)); break;
        case JSON_INTEGER: value = ent_value_int(json_integer_value(v)); break;
        case JSON_REAL: value = ent_value_double(json_real_value(v)); break;
        case JSON_TRUE: value = ent_value_bool(1); break;
        case JSON_FALSE: value = ent_value_bool(0); break;
        case JSON_NULL: value = ent_value_null(); break;
        default: value = (ent_value){.type = ENT_VALUE_STRUCTURED}; break;
        }
        if (!strcasecmp(key, "name") && value.type == ENT_VALUE_STRING && strcasecmp(value.u.s, name)) {
            refuse(r, SB_ERR_ARGUMENT, "The body names the rule '%.64s', the URL '%s': they must agree (or leave "
                   "\"name\" out).", value.u.s, name);
            json_decref(body);
            return -1;
        }
        if (ent_fault_set(rule, key, value, err, sizeof err) != SB_OK) {
            refuse(r, SB_ERR_ARGUMENT, "%s.", err);
            json_decref(body);
            return -1;
        }
    }
    json_decref(body);
    snprintf(rule->name, sizeof rule->name, "%s", name); /* the URL's spelling */
    const char *ns = broker_settings_of(r->broker)->namespace_name;
    if (ent_fault_validate(rule, ns && *ns ? ns : ENT_CONFIG_DEFAULT_NAMESPACE, err, sizeof err) != SB_OK) {
        refuse(r, SB_ERR_ARGUMENT, "%s.", err);
        return -1;
    }
    return 0;
}

/* Whether a rule named name may be added: a replacement always may; a new
 * one only while fewer than ENT_FAULT_RULES_MAX are in force (answered 403
 * when not). */
static bool room_for(http_req *r, const char *name)
{
    const ent_fault_list *in_force = broker_faults(r->broker);
    if (in_force->n < ENT_FAULT_RULES_MAX)
        return true;
    for (size_t i = 0; i < in_force->n; i++)
        if (!strcasecmp(in_force->rules[i].name, name))
            return true;
    refuse(r, SB_ERR_QUOTA_EXCEEDED, "There are %d fault rules already, the most the emulator holds; remove one first.",
           ENT_FAULT_RULES_MAX);
    return false;
}

void http_faults(http_req *r, const char *name)
{
    char err[ENT_FAULT_ERR_MAX];
    if (name && ent_fault_name_check(name, err, sizeof err) != SB_OK) {
        refuse(r, SB_ERR_ARGUMENT, "%s.", err);
        return;
    }
    bool allowed = r->method == HTTP_GET || r->method == HTTP_DELETE || (name && r->method == HTTP_PUT);
    if (!allowed) {
        refuse(r, SB_ERR_METHOD_NOT_ALLOWED, name ? "A fault rule takes GET, PUT and DELETE, not %s."
                                                  : "The fault rules take GET and DELETE (PUT names a rule: "
                                                    "/$sbemu/faults/<name>), not %s.",
               method_name(r));
        return;
    }
    fault_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        refuse(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    r->work = w;
    r->work_free = ent_free;
    ent_fault_rule_init(&w->rule, name);
    store *st = broker_store(r->broker);
    switch (r->method) {
    case HTTP_PUT:
        w->step = STEP_PUT;
        if (read_body(r, name, &w->rule) == 0 && room_for(r, name))
            store_fault_put(st, &w->rule, on_put, r);
        break;
    case HTTP_DELETE:
        w->step = STEP_DELETE;
        store_fault_delete(st, name, on_deleted, r);
        break;
    default:
        w->step = name ? STEP_GET_ONE : STEP_GET_ALL;
        store_faults_load(st, on_loaded, r);
        break;
    }
}
