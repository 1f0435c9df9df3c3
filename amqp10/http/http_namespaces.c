/* Namespaces over HTTP (http_router.h), behind the management API's SAS
 * check:
 *
 *   GET    $sbemu/namespaces          every namespace (a token for another namespace: only its own)
 *   PUT    $sbemu/namespaces/{name}   make it (201), or replace its keys and idle time (200)
 *   GET    $sbemu/namespaces/{name}   one
 *   DELETE $sbemu/namespaces/{name}   delete it with everything in it
 *
 * A PUT's body (optional) is {"keys": [{"name": "...", "key": "..."}],
 * "autoDeleteOnIdle": "PT30M"}: the namespace's own SAS keys, all of them
 * (none: it takes the emulator's key, --sas-key, under any key name), and how
 * long it may be idle before it is deleted (null or absent: never). A token
 * may act on the namespace it is for, or on any when it is the default
 * namespace's. Answers are JSON: a namespace is {"name", "id", "createdAt",
 * "autoDeleteOnIdle", "entities", "keys"}; an error {"error": "..."} with its
 * HTTP status, and it changes nothing. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ent_alloc.h"
#include "ent_duration.h"
#include "ent_log.h"
#include "ent_namespace.h"
#include "http_router.h"
#include "store_namespace.h"
#include "store_rule_json.h"

/* What a request keeps between its steps (r->work). */
typedef struct ns_work {
    char name[ENT_NAMESPACE_NAME_SIZE];
    int64_t idle_ms;   /* PUT: 0 never */
    char *keys_json;   /* PUT: [{"name", "key"}], ent_malloc'd */
    json_t *answer;    /* PUT, DELETE: given once this emulator's namespaces are refilled */
    sb_status answer_st;
} ns_work;

static void work_free(void *p)
{
    ns_work *w = p;
    if (w) {
        ent_free(w->keys_json);
        json_decref(w->answer);
    }
    ent_free(w);
}

/* ---- answers ---- */

static void respond_doc(http_req *r, sb_status st, json_t *doc)
{
    char *text = doc ? store_json_text(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    http_respond_json(r, text ? st : SB_ERR_INTERNAL, text ? text : "{\"error\":\"The emulator ran out of memory.\"}");
    ent_free(text);
}

__attribute__((format(printf, 3, 4))) static void refuse(http_req *r, sb_status st, const char *fmt, ...)
{
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    respond_doc(r, st, json_pack("{ss}", "error", why));
}

static void refuse_store(http_req *r, sb_status st, const char *what)
{
    refuse(r, st == SB_ERR_SERVER_BUSY ? st : SB_ERR_INTERNAL,
           "The emulator's database could not %s (%s); nothing was changed. Retry.", what, sb_status_name(st));
}

static json_t *iso_time(int64_t ms)
{
    char day[32], out[48];
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, sizeof out, "%s.%03dZ", day, (int)(ms % 1000));
    return json_string(out);
}

static json_t *row_json(const http_req *r, const store_namespace_row *row)
{
    char idle[64];
    json_error_t jerr;
    json_t *keys = json_loads(row->keys_json ? row->keys_json : "[]", 0, &jerr);
    bool is_default = row->id == ENT_NAMESPACE_DEFAULT_ID;
    return json_pack("{ss sI so so sI so sb}", "name", is_default ? broker_default_namespace_name(r->broker) : row->name,
                     "id", (json_int_t)row->id, "createdAt", iso_time(row->created_ms), "autoDeleteOnIdle",
                     row->auto_delete_on_idle_ms > 0
                         ? json_string(ent_duration_format(row->auto_delete_on_idle_ms, idle, sizeof idle))
                         : json_null(),
                     "entities", (json_int_t)row->entities, "keys", keys ? keys : json_array(), "default", is_default);
}

static void on_listed(void *ctx, sb_status st, const store_namespace_row *rows, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    const ns_work *w = r->work;
    if (st != SB_OK) {
        refuse_store(r, st, "list the namespaces");
        return;
    }
    if (w->name[0]) {
        if (!n)
            refuse(r, SB_ERR_NOT_FOUND, "The namespace '%s' does not exist.", w->name);
        else
            respond_doc(r, SB_OK, row_json(r, &rows[0]));
        return;
    }
    /* a token for another namespace than the default sees its own only */
    const char *own = broker_default_namespace_name(r->broker);
    bool all = ent_namespace_is_default(r->token_ns, own);
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if ((all || !strcasecmp(rows[i].name, r->token_ns)) && json_array_append_new(list, row_json(r, &rows[i]))) {
            json_decref(list);
            list = NULL;
        }
    respond_doc(r, SB_OK, list ? json_pack("{so}", "namespaces", list) : NULL);
}

/* A change is answered once this emulator's namespaces have been refilled
 * after it: the client's next token is checked against the keys it gave. */
static void on_refilled(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)st, (void)e, (void)route; /* committed whatever the refill did */
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    ns_work *w = r->work;
    json_t *doc = w->answer;
    w->answer = NULL;
    respond_doc(r, w->answer_st, doc);
}

static void answer_after_refill(http_req *r, sb_status st, json_t *doc)
{
    ns_work *w = r->work;
    w->answer = doc;
    w->answer_st = st;
    broker_after_refill(r->broker, on_refilled, r);
}

static void on_put(void *ctx, sb_status st, const store_namespace_row *row, bool created)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK) {
        refuse_store(r, st, "make or change the namespace");
        return;
    }
    LOG_INFO("namespace '%s' (id %d) %s over HTTP (idle time %lld ms)", row->name, (int)row->id,
             created ? "made" : "changed", (long long)row->auto_delete_on_idle_ms);
    answer_after_refill(r, created ? SB_CREATED : SB_OK, row_json(r, row));
}

static void on_deleted(void *ctx, sb_status st)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    const ns_work *w = r->work;
    if (st == SB_ERR_NOT_FOUND) {
        refuse(r, st, "The namespace '%s' does not exist; nothing was deleted.", w->name);
        return;
    }
    if (st != SB_OK) {
        refuse_store(r, st, "delete the namespace");
        return;
    }
    LOG_INFO("namespace '%s' deleted over HTTP, with everything in it", w->name);
    answer_after_refill(r, SB_OK, json_pack("{ss}", "deleted", w->name));
}

/* ---- the PUT's body ---- */

/* Reads the body into w (keys_json, idle_ms); -1 when refused (answered). */
static int read_body(http_req *r, ns_work *w)
{
    w->idle_ms = 0;
    json_t *keys_out = json_array();
    if (!keys_out) {
        refuse(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return -1;
    }
    json_t *body = NULL;
    if (r->body.len) {
        json_error_t jerr;
        body = json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &jerr);
        if (!body) {
            json_decref(keys_out);
            refuse(r, SB_ERR_ARGUMENT, "The body is not JSON: line %d, column %d: %s.", jerr.line, jerr.column,
                   jerr.text);
            return -1;
        }
    }
    char why[512] = "";
    if (body && !json_is_object(body))
        snprintf(why, sizeof why, "The body must be a JSON object ({\"keys\": [...], \"autoDeleteOnIdle\": ...}).");
    const char *k;
    json_t *v;
    if (body && !why[0])
        json_object_foreach(body, k, v) {
            if (why[0])
                break;
            if (!strcasecmp(k, "autoDeleteOnIdle")) {
                char err[256];
                int64_t ms;
                if (json_is_null(v))
                    continue;
                if (!json_is_string(v) || ent_duration_parse(json_string_value(v), &ms, err, sizeof err) ||
                    ms == ENT_DURATION_UNLIMITED)
                    snprintf(why, sizeof why, "\"autoDeleteOnIdle\" must be an ISO-8601 duration such as PT30M, or "
                                              "null for never.");
                else if (ms < ENT_NAMESPACE_IDLE_MIN_MS)
                    snprintf(why, sizeof why, "\"autoDeleteOnIdle\" is %lld ms; the least is %d (PT1M).", (long long)ms,
                             ENT_NAMESPACE_IDLE_MIN_MS);
                else
                    w->idle_ms = ms;
            } else if (!strcasecmp(k, "keys")) {
                if (!json_is_array(v)) {
                    snprintf(why, sizeof why, "\"keys\" must be an array of {\"name\": ..., \"key\": ...}.");
                    continue;
                }
                if (json_array_size(v) > ENT_NAMESPACE_KEYS_MAX) {
                    snprintf(why, sizeof why, "A namespace has at most %d keys, not %zu.", ENT_NAMESPACE_KEYS_MAX,
                             json_array_size(v));
                    continue;
                }
                size_t i;
                json_t *e;
                json_array_foreach(v, i, e) {
                    json_t *n = json_is_object(e) ? json_object_get(e, "name") : NULL;
                    json_t *key = json_is_object(e) ? json_object_get(e, "key") : NULL;
                    if (!json_is_string(n) || !json_is_string(key) || json_object_size(e) != 2) {
                        snprintf(why, sizeof why, "keys[%zu] must be {\"name\": \"...\", \"key\": \"...\"}.", i);
                        break;
                    }
                    if (ent_namespace_key_check(json_string_value(n), json_string_value(key), why, sizeof why) !=
                        SB_OK)
                        break;
                    for (size_t j = 0; j < i && !why[0]; j++)
                        if (!strcmp(json_string_value(json_object_get(json_array_get(v, j), "name")),
                                    json_string_value(n)))
                            snprintf(why, sizeof why, "The key name '%s' is given twice.", json_string_value(n));
                    if (why[0])
                        break;
                    json_array_append(keys_out, e);
                }
            } else {
                snprintf(why, sizeof why,
                         "Unknown key \"%.64s\": a namespace's body has \"keys\" and \"autoDeleteOnIdle\".", k);
            }
        }
    json_decref(body);
    if (why[0]) {
        json_decref(keys_out);
        refuse(r, SB_ERR_ARGUMENT, "%s", why);
        return -1;
    }
    w->keys_json = store_json_text(keys_out, JSON_COMPACT);
    json_decref(keys_out);
    if (!w->keys_json) {
        refuse(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return -1;
    }
    return 0;
}

/* ---- the route ---- */

bool http_namespaces_route(http_req *r, const char *path)
{
    static const char root[] = "$sbemu/namespaces";
    size_t n = sizeof root - 1;
    if (strncmp(path, root, n) || (path[n] && path[n] != '/') || (path[n] == '/' && strchr(path + n + 1, '/')))
        return false; /* not ours, or a namespace's reset, snapshots or clock */
    r->json_errors = true;
    const char *name = path[n] ? path + n + 1 : "";
    ns_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        refuse(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return true;
    }
    r->work = w;
    r->work_free = work_free;
    snprintf(w->name, sizeof w->name, "%.*s", (int)(sizeof w->name - 1), name);
    store *st = broker_store(r->broker);
    if (!*name) {
        if (r->method != HTTP_GET)
            refuse(r, SB_ERR_METHOD_NOT_ALLOWED,
                   "The list of namespaces takes GET (PUT and DELETE name one: /$sbemu/namespaces/{name}).");
        else
            store_namespace_list(st, NULL, on_listed, r);
        return true;
    }
    char why[512];
    const char *own = broker_default_namespace_name(r->broker);
    bool is_default = ent_namespace_is_default(name, own);
    if (!is_default && ent_namespace_name_check(name, why, sizeof why) != SB_OK) {
        refuse(r, SB_ERR_ARGUMENT, "%s", why);
        return true;
    }
    if (!http_ns_token_allows(r, name))
        return true;
    switch (r->method) {
    case HTTP_GET: store_namespace_list(st, is_default ? own : name, on_listed, r); break;
    case HTTP_PUT:
    case HTTP_DELETE:
        if (is_default) {
            refuse(r, SB_ERR_ARGUMENT,
                   "'%s' is the default namespace, the emulator's own: its key is --sas-key, and it is never deleted.",
                   name);
            break;
        }
        if (r->method == HTTP_DELETE)
            store_namespace_delete(st, name, on_deleted, r);
        else if (read_body(r, w) == 0)
            store_namespace_put(st, name, w->idle_ms, w->keys_json, on_put, r);
        break;
    default: refuse(r, SB_ERR_METHOD_NOT_ALLOWED, "A namespace takes GET, PUT and DELETE, not this method."); break;
    }
    return true;
}
