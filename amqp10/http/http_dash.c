/* The dashboard's routes (see http_dash.h) and what every handler of its API
 * shares: the SAS check, read-only mode, JSON bodies and answers, arguments,
 * finding an entity. */
#include "http_dash.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ent_alloc.h"
#include "ent_filter.h"
#include "ent_log.h"
#include "http_router.h"

#define API_PREFIX "$sbemu/api/"
#define ASSET_PREFIX "$sbemu/dashboard/"

/* ---- answers ---- */

void http_dash_json(http_req *r, sb_status st, json_t *body)
{
    http_respond_json_value(r, st, body);
}

void http_dash_error(http_req *r, sb_status st, const char *fmt, ...)
{
    char detail[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (r->wsi)
        LOG_INFO("dashboard: /%s: %d %s", r->path, sb_status_http_code(st), detail);
    json_t *o = json_pack("{s:s, s:i, s:s}", "error", detail, "status", sb_status_http_code(st), "code",
                          sb_status_name(st));
    http_respond_json_value(r, st, o);
}

void http_dash_store_error(http_req *r, sb_status st, const char *what)
{
    if (st == SB_ERR_NOT_FOUND)
        http_dash_error(r, st, "%s no longer exists.", what);
    else if (st == SB_ERR_SERVER_BUSY)
        http_dash_error(r, st, "The emulator's database is away (%s); retry in a moment.", what);
    else
        http_dash_error(r, st == SB_OK ? SB_ERR_INTERNAL : st, "The emulator's store could not serve %s (%s); retry.",
                        what, sb_status_name(st));
}

json_t *http_dash_time(int64_t ms)
{
    if (!ms)
        return json_null();
    char buf[40];
    ent_fv_format_time(ms, buf, sizeof buf);
    return json_string(buf);
}

json_t *http_dash_uuid(const uint8_t uuid[16])
{
    char buf[ENT_FV_UUID_TEXT_LEN + 1];
    ent_fv_format_uuid(uuid, buf, sizeof buf);
    return json_string(buf);
}

const char *http_dash_kind_name(ent_kind k)
{
    return k == ENT_KIND_TOPIC ? "topic" : k == ENT_KIND_SUBSCRIPTION ? "subscription" : "queue";
}

/* ---- the request ---- */

json_t *http_dash_body(http_req *r)
{
    if (!r->body.len) {
        http_dash_error(r, SB_ERR_ARGUMENT, "This request needs a JSON object as its body (Content-Type: "
                                            "application/json).");
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &e);
    if (!j) {
        http_dash_error(r, SB_ERR_ARGUMENT, "The body is not valid JSON: line %d, column %d: %s.", e.line, e.column,
                        e.text);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        http_dash_error(r, SB_ERR_ARGUMENT, "The body must be a JSON object ({...}).");
        return NULL;
    }
    return j;
}

int http_dash_arg_i64(http_req *r, const char *name, int64_t dflt, int64_t min, int64_t max, int64_t *out)
{
    const char *v = http_req_arg(r, name);
    if (!v) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || errno || n < min || n > max) {
        http_dash_error(r, SB_ERR_ARGUMENT, "The query parameter '%s' must be a whole number from %lld to %lld, not "
                                            "'%.64s'.", name, (long long)min, (long long)max, v);
        return -1;
    }
    *out = n;
    return 0;
}

int http_dash_subqueue(http_req *r, const char *value, bool all_ok, const char *what, int *out)
{
    if (!value || !strcasecmp(value, "active"))
        *out = 0;
    else if (!strcasecmp(value, "deadletter"))
        *out = 1;
    else if (all_ok && !strcasecmp(value, "all"))
        *out = -1;
    else {
        http_dash_error(r, SB_ERR_ARGUMENT, "'%s' must be \"active\" or \"deadletter\"%s, not \"%.64s\".", what,
                        all_ok ? " or \"all\"" : "", value);
        return -1;
    }
    return 0;
}

int http_dash_seqs(http_req *r, json_t *arr, const char *what, int64_t **seqs, size_t *n)
{
    if (!json_is_array(arr) || !json_array_size(arr)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'%s' must be a non-empty array of sequence numbers.", what);
        return -1;
    }
    size_t count = json_array_size(arr);
    if (count > HTTP_DASH_SEQS_MAX) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'%s' names %zu messages; at most %d at once.", what, count,
                        HTTP_DASH_SEQS_MAX);
        return -1;
    }
    int64_t *v = ent_malloc(count * sizeof *v);
    if (!v) {
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *x = json_array_get(arr, i);
        if (!json_is_integer(x) || json_integer_value(x) <= 0) {
            ent_free(v);
            http_dash_error(r, SB_ERR_ARGUMENT, "'%s'[%zu] must be a sequence number (a whole number above 0).", what,
                            i);
            return -1;
        }
        v[i] = json_integer_value(x);
    }
    *seqs = v;
    *n = count;
    return 0;
}

/* ---- finding an entity ---- */

typedef struct entity_call {
    http_req *r;
    http_dash_entity_fn fn;
    char path[ENT_ENTITY_PATH_MAX + 1];
    char what[32];
} entity_call;

static void on_entity(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    entity_call *c = ctx;
    http_req *r = c->r;
    if (http_req_gone(r)) {
        ent_free(c);
        return;
    }
    if (st == SB_OK && e) {
        ent_entity copy = *e;
        ent_route rcopy = *route;
        c->fn(r, &copy, &rcopy);
    } else if (st == SB_ERR_NOT_FOUND || st == SB_OK) {
        http_dash_error(r, SB_ERR_NOT_FOUND, "No queue, topic or subscription '%s' (%s); a subscription is named "
                                             "<topic>/Subscriptions/<name>.", c->path, c->what);
    } else {
        http_dash_store_error(r, st, "the entities");
    }
    ent_free(c);
}

void http_dash_with_entity(http_req *r, const char *path, const char *what, http_dash_entity_fn fn)
{
    if (!path || !*path) {
        http_dash_error(r, SB_ERR_ARGUMENT, "%s must name a queue, topic or subscription.", what);
        return;
    }
    if (strlen(path) > ENT_ENTITY_PATH_MAX) {
        http_dash_error(r, SB_ERR_NOT_FOUND, "No entity has a path that long (%zu bytes; %s).", strlen(path), what);
        return;
    }
    entity_call *c = ent_calloc(1, sizeof *c);
    if (!c) {
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    c->r = r;
    c->fn = fn;
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->what, sizeof c->what, "%s", what);
    broker_entity_lookup(r->broker, ENT_NAMESPACE_DEFAULT_ID, c->path, on_entity, c); /* the default namespace's dashboard */
}

/* ---- the routes ---- */

typedef struct api_route {
    const char *path;      /* after $sbemu/api/ */
    http_method method;
    bool action;           /* changes something: refused in read-only mode */
    void (*fn)(http_req *r);
} api_route;

static const api_route api_routes[] = {
    {"entities", HTTP_GET, false, http_dash_entities},
    {"messages", HTTP_GET, false, http_dash_messages},
    {"sessions", HTTP_GET, false, http_dash_sessions},
    {"connections", HTTP_GET, false, http_dash_connections},
    {"rules", HTTP_GET, false, http_dash_rules},
    {"rules/test", HTTP_POST, false, http_dash_rule_test}, /* evaluates, changes nothing */
    {"events", HTTP_GET, false, http_dash_events},
    {"send", HTTP_POST, true, http_dash_send},
    {"resubmit", HTTP_POST, true, http_dash_resubmit},
    {"delete", HTTP_POST, true, http_dash_delete},
    {"purge", HTTP_POST, true, http_dash_purge},
    {"status", HTTP_POST, true, http_dash_status},
    {"clock", HTTP_POST, true, http_dash_clock},
};

static const char *method_name(http_method m)
{
    return m == HTTP_GET ? "GET" : m == HTTP_POST ? "POST" : m == HTTP_PUT ? "PUT" : m == HTTP_DELETE ? "DELETE"
                                                                                                     : "this method";
}

static void api(http_req *r, const char *what)
{
    char why[512];
    if (!r->broker) {
        http_dash_error(r, SB_ERR_SERVER_BUSY, "The emulator is starting; the dashboard answers once it is ready.");
        return;
    }
    if (http_auth_check(r, why, sizeof why) != SB_OK) {
        http_dash_error(r, SB_ERR_UNAUTHORIZED, "Unauthorized: %s. Sign a SharedAccessSignature token with the "
                                                "namespace key (the dashboard asks for it).", why);
        return;
    }
    size_t n = strlen(what);
    while (n && what[n - 1] == '/')
        n--;
    for (size_t i = 0; i < sizeof api_routes / sizeof api_routes[0]; i++) {
        const api_route *a = &api_routes[i];
        if (strlen(a->path) != n || strncmp(a->path, what, n))
            continue;
        if (r->method != a->method) {
            http_dash_error(r, SB_ERR_METHOD_NOT_ALLOWED, "/%s%s takes %s, not %s.", API_PREFIX, a->path,
                            method_name(a->method), method_name(r->method));
            return;
        }
        if (a->action && r->plane && r->plane->dashboard_read_only) {
            http_dash_error(r, SB_ERR_FORBIDDEN,
                            "This emulator's dashboard is read-only (--dashboard-read-only): %s is refused. Sending, "
                            "resubmitting, deleting, purging, changing a status and moving the clock are all "
                            "refused; reading is not.", a->path);
            return;
        }
        a->fn(r);
        return;
    }
    http_dash_error(r, SB_ERR_NOT_FOUND, "No dashboard resource /%s%.*s: the API has entities, messages, sessions, "
                                         "connections, rules, rules/test, events, send, resubmit, delete, purge, "
                                         "status and clock.", API_PREFIX, (int)n, what);
}

bool http_dash_route_is_api(const http_req *r) { return !strncmp(r->path, API_PREFIX, strlen(API_PREFIX)); }

bool http_dash_route(http_req *r)
{
    if (!strncmp(r->path, API_PREFIX, strlen(API_PREFIX))) {
        api(r, r->path + strlen(API_PREFIX));
        return true;
    }
    if (r->method != HTTP_GET || http_req_arg(r, "api-version"))
        return false; /* the management API's */
    if (!r->path[0] || !strcmp(r->path, "index.html"))
        return http_dash_asset(r, "");
    if (!strncmp(r->path, ASSET_PREFIX, strlen(ASSET_PREFIX))) {
        if (!http_dash_asset(r, r->path + strlen(ASSET_PREFIX)))
            http_dash_error(r, SB_ERR_NOT_FOUND, "The dashboard has no asset '%s'.", r->path + strlen(ASSET_PREFIX));
        return true;
    }
    return false;
}
