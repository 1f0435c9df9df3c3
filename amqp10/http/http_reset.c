/* A namespace's reset and its snapshots over HTTP (http_router.h), behind
 * the management API's SAS check:
 *
 *   POST   $sbemu/namespaces/{ns}/reset                    back to what Config.json declared, no messages, real time
 *   GET    $sbemu/namespaces/{ns}/snapshots                the snapshots, by name
 *   PUT    $sbemu/namespaces/{ns}/snapshots/{name}         save (or replace) one: 201 (200 replaced)
 *   GET    $sbemu/namespaces/{ns}/snapshots/{name}         one
 *   DELETE $sbemu/namespaces/{ns}/snapshots/{name}         delete one
 *   POST   $sbemu/namespaces/{ns}/snapshots/{name}/restore put the namespace back to it
 *
 * and the same without "namespaces/{ns}/", for the default namespace. {ns} is
 * the default namespace's name, "default", or empty; any other is 404 (there
 * are no other namespaces yet: entities/ent_snapshot.h). Answers are JSON; an
 * error is {"error": "..."} with its HTTP status, and changes nothing.
 *
 * A reset or restore is one transaction (sql/store_reset.h); once it has
 * committed, this emulator makes its memory agree (broker_replaced: the
 * clock, the claim positions, sessions, the sweep) before the database's
 * NOTIFY does the same on every other emulator, and the answer waits for this
 * emulator's entity cache to refill, so that the client's next request already
 * sees the restored entities. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_snapshot.h"
#include "http_router.h"
#include "store_reset.h"
#include "store_rule_json.h"

typedef enum reset_kind { RESET, SNAPSHOT_LIST, SNAPSHOT_ONE, SNAPSHOT_RESTORE } reset_kind;

/* What a request keeps between its steps (r->work). */
typedef struct reset_work {
    reset_kind kind;
    char ns[ENT_CONFIG_NAMESPACE_NAME_SIZE]; /* the namespace's own name, for the answers */
    char name[ENT_SNAPSHOT_NAME_SIZE];       /* the snapshot; "" for a reset */
    int64_t started_wall_ms;
    store_restored restored;
} reset_work;

/* ---- answers ---- */

/* Takes doc (NULL: out of memory) and answers it with st's HTTP status. */
static void respond_doc(http_req *r, sb_status st, json_t *doc)
{
    char *text = doc ? store_json_text(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) {
        http_respond_json(r, SB_ERR_INTERNAL, "{\"error\":\"The emulator ran out of memory.\"}");
        return;
    }
    http_respond_json(r, st, text);
    ent_free(text);
}

__attribute__((format(printf, 3, 4))) static void respond_error(http_req *r, sb_status st, const char *fmt, ...)
{
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    respond_doc(r, st, json_pack("{ss}", "error", why));
}

/* The store's failures, as the management API words them. */
static void respond_store_error(http_req *r, sb_status st, const char *what)
{
    if (st == SB_ERR_SERVER_BUSY)
        respond_error(r, st, "The emulator's database is unavailable; %s did not happen. Retry.", what);
    else
        respond_error(r, st == SB_ERR_INTERNAL ? st : SB_ERR_INTERNAL,
                      "The emulator's database failed; %s did not happen (%s).", what, sb_status_name(st));
}

static json_t *iso_time(int64_t ms)
{
    char iso[64], out[80];
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, sizeof out, "%s.%03dZ", iso, (int)(ms % 1000));
    return json_string(out);
}

static json_t *info_json(const store_snapshot_info *i, const char *name)
{
    return json_pack("{ss so sI sI sI sI}", "name", name, "createdAt", iso_time(i->created_ms), "entities",
                     (json_int_t)i->entities, "messages", (json_int_t)i->messages, "bytes", (json_int_t)i->bytes,
                     "clockOffsetMs", (json_int_t)i->clock_offset_ms);
}

/* ---- reset and restore ---- */

static void on_refilled(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)st, (void)e, (void)route; /* committed whatever the refill did; links follow the next one */
    http_req *r = ctx;
    const reset_work *w = r->work;
    json_t *doc = json_pack("{ss sI sI s{so sI} sI}", "namespace", w->ns, "entities", (json_int_t)w->restored.entities,
                            "messages", (json_int_t)w->restored.messages, "clock", "now",
                            iso_time(ent_clock_now_ms_in(r->ns)),
                            "offsetMs", (json_int_t)w->restored.clock_offset_ms, "elapsedMs",
                            (json_int_t)(ent_clock_wall_ms() - w->started_wall_ms));
    if (doc && w->name[0])
        json_object_set_new(doc, "snapshot", json_string(w->name));
    respond_doc(r, SB_OK, doc);
}

static void on_restored(void *ctx, sb_status st, const store_restored *res)
{
    http_req *r = ctx;
    reset_work *w = r->work;
    broker_replace_end(r->broker);
    if (st == SB_ERR_NOT_FOUND && w->name[0]) {
        respond_error(r, st, "The snapshot '%s' does not exist in the namespace '%s'; nothing was changed.", w->name,
                      w->ns);
        return;
    }
    if (st == SB_ERR_NOT_FOUND) {
        respond_error(r, SB_ERR_INTERNAL, "The namespace '%s' has no record of its declared entities (every "
                      "emulator writes one at start); nothing was changed.", w->ns);
        return;
    }
    if (st != SB_OK) {
        respond_store_error(r, st, w->name[0] ? "the restore" : "the reset");
        return;
    }
    w->restored = *res;
    /* before anything else this emulator does: the NOTIFY comes later */
    broker_replaced(r->broker, res->generation, res->clock_offset_ms, r->ns);
    broker_after_refill(r->broker, on_refilled, r);
}

/* The restore of w->name ("" for a reset: the declared snapshot). */
static void restore(http_req *r)
{
    const reset_work *w = r->work;
    broker_replace_begin(r->broker); /* no sweep with the clock the restore may set back */
    store_snapshot_restore(broker_store(r->broker), r->ns_name, w->name[0] ? w->name : STORE_SNAPSHOT_DECLARED,
                           ent_clock_wall_ms(), on_restored, r);
}

/* ---- snapshots ---- */

static void on_saved(void *ctx, sb_status st, const store_snapshot_info *info, bool replaced)
{
    http_req *r = ctx;
    const reset_work *w = r->work;
    if (st != SB_OK) {
        respond_store_error(r, st, "the snapshot");
        return;
    }
    json_t *doc = info_json(info, w->name);
    if (doc) {
        json_object_set_new(doc, "namespace", json_string(w->ns));
        json_object_set_new(doc, "replaced", json_boolean(replaced));
    }
    respond_doc(r, replaced ? SB_OK : SB_CREATED, doc);
}

static void on_listed(void *ctx, sb_status st, const store_snapshot_info *rows, size_t n)
{
    http_req *r = ctx;
    const reset_work *w = r->work;
    if (st == SB_ERR_NOT_FOUND) {
        respond_error(r, st, "The snapshot '%s' does not exist in the namespace '%s'.", w->name, w->ns);
        return;
    }
    if (st != SB_OK) {
        respond_store_error(r, st, "the list");
        return;
    }
    if (w->name[0]) {
        json_t *doc = info_json(&rows[0], rows[0].name);
        if (doc)
            json_object_set_new(doc, "namespace", json_string(w->ns));
        respond_doc(r, SB_OK, doc);
        return;
    }
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if (json_array_append_new(list, info_json(&rows[i], rows[i].name))) {
            json_decref(list);
            list = NULL;
        }
    respond_doc(r, SB_OK, list ? json_pack("{ss so}", "namespace", w->ns, "snapshots", list) : NULL);
}

static void on_deleted(void *ctx, sb_status st)
{
    http_req *r = ctx;
    const reset_work *w = r->work;
    if (st == SB_ERR_NOT_FOUND)
        respond_error(r, st, "The snapshot '%s' does not exist in the namespace '%s'.", w->name, w->ns);
    else if (st != SB_OK)
        respond_store_error(r, st, "the delete");
    else
        respond_doc(r, SB_OK, json_pack("{ss ss}", "namespace", w->ns, "deleted", w->name));
}

/* ---- which request it is ---- */

/* The part of path after the namespace ("reset", "snapshots[/...]"), or NULL
 * when path is not one of ours; *ns (ns_len bytes) gets the namespace named
 * ("" for none). */
static const char *after_namespace(const char *path, char *ns, size_t ns_len)
{
    static const char root[] = "$sbemu/", named[] = "namespaces/";
    if (strncmp(path, root, sizeof root - 1))
        return NULL;
    path += sizeof root - 1;
    ns[0] = 0;
    if (!strncmp(path, named, sizeof named - 1)) {
        path += sizeof named - 1;
        const char *slash = strchr(path, '/');
        if (!slash)
            return NULL;
        snprintf(ns, ns_len, "%.*s", (int)(slash - path), path);
        path = slash + 1;
    }
    return path;
}

/* Whether r's method is one kind takes; if not, answers 405 naming those it takes. */
static bool method_allowed(http_req *r, reset_kind kind)
{
    typedef struct methods {
        const char *what, *takes;
        bool get, put, del, post;
    } methods;
    static const methods by_kind[] = {
        [RESET] = {"A namespace's reset", "POST", false, false, false, true},
        [SNAPSHOT_LIST] = {"The list of snapshots", "GET", true, false, false, false},
        [SNAPSHOT_ONE] = {"A snapshot", "GET, PUT or DELETE", true, true, true, false},
        [SNAPSHOT_RESTORE] = {"A snapshot's restore", "POST", false, false, false, true},
    };
    const methods *k = &by_kind[kind];
    if ((r->method == HTTP_GET && k->get) || (r->method == HTTP_PUT && k->put) ||
        (r->method == HTTP_DELETE && k->del) || (r->method == HTTP_POST && k->post))
        return true;
    respond_error(r, SB_ERR_METHOD_NOT_ALLOWED, "%s takes %s, not this method.", k->what, k->takes);
    return false;
}

/* Once r->ns is the namespace the request acts on. */
static void in_namespace(http_req *r)
{
    reset_work *w = r->work;
    snprintf(w->ns, sizeof w->ns, "%s", r->ns_name[0] ? r->ns_name : broker_default_namespace_name(r->broker));
    w->started_wall_ms = ent_clock_wall_ms();
    store *st = broker_store(r->broker);
    const char *name = w->name, *key = r->ns_name; /* the snapshots' key: "" for the default */
    switch (w->kind) {
    case RESET:
    case SNAPSHOT_RESTORE: restore(r); break; /* w->name is "" for a reset */
    case SNAPSHOT_LIST: store_snapshot_list(st, key, NULL, on_listed, r); break;
    case SNAPSHOT_ONE:
        if (r->method == HTTP_GET)
            store_snapshot_list(st, key, name, on_listed, r);
        else if (r->method == HTTP_PUT)
            store_snapshot_save(st, key, name, w->started_wall_ms, on_saved, r);
        else
            store_snapshot_delete(st, key, name, on_deleted, r);
        break;
    }
}

bool http_reset_route(http_req *r, const char *path)
{
    char ns[HTTP_ADMIN_PATH_MAX];
    const char *rest = after_namespace(path, ns, sizeof ns);
    if (!rest)
        return false;
    static const char snaps[] = "snapshots", restore_suffix[] = "/restore";
    reset_kind kind;
    char name[HTTP_ADMIN_PATH_MAX] = "";
    if (!strcmp(rest, "reset")) {
        kind = RESET;
    } else if (!strcmp(rest, snaps)) {
        kind = SNAPSHOT_LIST;
    } else if (!strncmp(rest, snaps, sizeof snaps - 1) && rest[sizeof snaps - 1] == '/') {
        /* the rest is the name (a '/' in it is refused with the name's rules), or name/restore */
        const char *n = rest + sizeof snaps;
        size_t len = strlen(n), sl = sizeof restore_suffix - 1;
        kind = len > sl && !strcmp(n + len - sl, restore_suffix) ? SNAPSHOT_RESTORE : SNAPSHOT_ONE;
        snprintf(name, sizeof name, "%.*s", (int)(kind == SNAPSHOT_RESTORE ? len - sl : len), n);
    } else {
        return false;
    }

    char why[512];
    r->json_errors = true;
    if (!method_allowed(r, kind))
        return true;
    if ((kind == SNAPSHOT_ONE || kind == SNAPSHOT_RESTORE) && ent_snapshot_name_check(name, why, sizeof why) != SB_OK) {
        respond_error(r, SB_ERR_ARGUMENT, "%s", why);
        return true;
    }
    /* the namespace the path names (it must exist, and the token be for it),
     * else the request's own (its Host, else its token's), made on first use */
    bool named = ns[0] != 0;
    if (named && ent_namespace_name_check(ns, why, sizeof why) != SB_OK &&
        !ent_namespace_is_default(ns, broker_default_namespace_name(r->broker))) {
        respond_error(r, SB_ERR_NOT_FOUND, "The namespace '%.64s' does not exist: %s", ns, why);
        return true;
    }
    if (named && !http_ns_token_allows(r, ns))
        return true;
    if (!named && http_ns_choose(r, ns, sizeof ns, why, sizeof why)) {
        respond_error(r, SB_ERR_ARGUMENT, "%s", why);
        return true;
    }
    reset_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return true;
    }
    r->work = w;
    r->work_free = ent_free;
    w->kind = kind;
    snprintf(w->name, sizeof w->name, "%s", name);
    http_ns_resolve(r, ns, !named, in_namespace);
    return true;
}
