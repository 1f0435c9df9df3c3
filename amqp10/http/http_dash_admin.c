/* The dashboard's entity and emulator views and controls:
 *
 *   POST status {"entity", "status": "Active"|"Disabled"|"SendDisabled"|"ReceiveDisabled"}
 *        the status a kind may have (a topic is never ReceiveDisabled, a
 *        subscription never SendDisabled), answered once this emulator's
 *        cache holds it (attached links follow it at once);
 *   POST clock {"advanceBy": "PT5M"}
 *        moves the namespace clock as POST /$sbemu/clock/advance does (the
 *        sweep runs, waiting receivers look again, every emulator hears);
 *   GET  sessions?entity=<path>
 *        its sessions: messages, state, lock and which link holds it;
 *   GET  connections
 *        the wire's connections and their links (broker_peers.h). */
#include <string.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_duration.h"
#include "ent_props.h"
#include "http_dash.h"
#include "store_dash.h"

/* ---- status ---- */

typedef struct status_work {
    json_t *body;
    char path[ENT_ENTITY_PATH_MAX + 1];
    char status[ENT_STATUS_MAX];
} status_work;

static void status_work_free(void *p)
{
    status_work *w = p;
    json_decref(w->body);
    ent_free(w);
}

static void on_status_refilled(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)st, (void)e, (void)route; /* the change is committed whatever the refill did */
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    status_work *w = r->work;
    http_dash_json(r, SB_OK, json_pack("{s:s, s:s}", "entity", w->path, "status", w->status));
}

static void on_status_set(void *ctx, sb_status st)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the status change");
        return;
    }
    broker_after_refill(r->broker, on_status_refilled, r);
}

static void status_of(http_req *r, const ent_entity *e, const ent_route *route)
{
    (void)route;
    status_work *w = r->work;
    snprintf(w->path, sizeof w->path, "%s", e->name);
    const char *name = json_string_value(json_object_get(w->body, "status"));
    ent_entity_status s;
    char err[256];
    if (ent_entity_status_for(http_dash_kind_name(e->kind), name, &s, err, sizeof err) != SB_OK) {
        http_dash_error(r, SB_ERR_ARGUMENT, "%s: %s.", e->name, err);
        return;
    }
    snprintf(w->status, sizeof w->status, "%s", ent_entity_status_name(s));
    store_dash_set_status(broker_store(r->broker), e->kind, e->id, w->status, ent_clock_now_ms(), on_status_set, r);
}

void http_dash_status(http_req *r)
{
    json_t *body = http_dash_body(r);
    if (!body)
        return;
    status_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        json_decref(body);
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    w->body = body;
    r->work = w;
    r->work_free = status_work_free;
    if (!json_is_string(json_object_get(body, "entity")) || !json_is_string(json_object_get(body, "status"))) {
        http_dash_error(r, SB_ERR_ARGUMENT, "The body must be {\"entity\": <path>, \"status\": \"Active\", "
                                            "\"Disabled\", \"SendDisabled\" or \"ReceiveDisabled\"}.");
        return;
    }
    http_dash_with_entity(r, json_string_value(json_object_get(body, "entity")), "'entity'", status_of);
}

/* ---- the clock ---- */

static json_t *clock_json(void)
{
    return json_pack("{s:o, s:I}", "now", http_dash_time(ent_clock_now_ms()), "offsetMs",
                     (json_int_t)ent_clock_offset_ms());
}

static void on_clock_published(void *ctx, sb_status st)
{
    (void)st; /* the local clock moved either way; a lost publish only affects other replicas */
    http_req *r = ctx;
    if (!http_req_gone(r))
        http_dash_json(r, SB_OK, clock_json());
}

void http_dash_clock(http_req *r)
{
    json_t *body = http_dash_body(r);
    if (!body)
        return;
    const char *by = json_string_value(json_object_get(body, "advanceBy"));
    char err[256] = "";
    int64_t ms = 0;
    bool ok = by && !ent_duration_parse(by, &ms, err, sizeof err) && ms != ENT_DURATION_UNLIMITED;
    if (ok && ent_clock_advance(ms)) {
        ok = false;
        snprintf(err, sizeof err, "the clock cannot move that far");
    }
    json_decref(body);
    if (!ok) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'advanceBy' must be an ISO-8601 duration such as PT5M (the clock only "
                                            "moves forward)%s%s.", err[0] ? ": " : "", err);
        return;
    }
    broker_clock_moved(r->broker, ENT_NAMESPACE_DEFAULT_ID, on_clock_published, r);
}

/* ---- connections ---- */

static json_t *link_json(const broker_peer_link *l)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I}", "name", l->name, "role", broker_link_kind_name(l->kind),
                          "address", l->address, "open", l->open, "credit", (json_int_t)l->credit, "unsettled",
                          (json_int_t)l->unsettled);
    if (l->session_held)
        json_object_set_new(o, "session", json_pack("{s:s, s:o}", "id", l->session_id, "lockedUntil",
                                                    http_dash_time(l->session_until_ms)));
    return o;
}

/* The wire's connections now; false when there is no wire or no memory. */
static bool snapshot(const http_plane *plane, broker_peer_list *l)
{
    memset(l, 0, sizeof *l);
    const broker_peers_source *p = plane ? &plane->peers : NULL;
    return p && p->snapshot && !p->snapshot(p->ctx, l);
}

json_t *http_dash_connections_json(const http_plane *plane)
{
    broker_peer_list l;
    if (!snapshot(plane, &l))
        return NULL;
    json_t *list = json_array();
    for (size_t i = 0; i < l.n; i++) {
        const broker_peer *p = &l.v[i];
        json_t *links = json_array();
        for (size_t k = 0; k < p->nlinks; k++)
            json_array_append_new(links, link_json(&p->links[k]));
        json_array_append_new(list, json_pack("{s:I, s:s, s:s, s:s, s:s, s:o}", "id", (json_int_t)p->id, "remote",
                                              p->remote, "container", p->container, "hostname", p->hostname,
                                              "transport", p->websocket ? "websocket" : "tcp", "links", links));
    }
    broker_peer_list_free(&l);
    return json_pack("{s:o}", "connections", list);
}

void http_dash_connections(http_req *r)
{
    json_t *doc = http_dash_connections_json(r->plane);
    if (!doc) {
        http_dash_error(r, SB_ERR_INTERNAL, "The wire's connections could not be read (out of memory).");
        return;
    }
    http_dash_json(r, SB_OK, doc);
}

/* ---- sessions ---- */

/* The link of this process that holds session_id of entity (its receiver), as text; NULL: none here. */
static json_t *session_holder(const broker_peer_list *l, const char *entity, const char *session_id)
{
    for (size_t i = 0; i < l->n; i++)
        for (size_t k = 0; k < l->v[i].nlinks; k++) {
            const broker_peer_link *x = &l->v[i].links[k];
            if (x->session_held && !strcmp(x->session_id, session_id) && !strcasecmp(x->address, entity))
                return json_pack("{s:I, s:s}", "connection", (json_int_t)l->v[i].id, "link", x->name);
        }
    return json_null();
}

static json_t *state_json(const uint8_t *state, size_t len)
{
    if (!state)
        return json_null();
    size_t shown = len < HTTP_DASH_SESSION_STATE_SHOWN_MAX ? len : HTTP_DASH_SESSION_STATE_SHOWN_MAX;
    char *hex = ent_malloc(2 * shown + 1);
    for (size_t i = 0; hex && i < shown; i++)
        snprintf(hex + 2 * i, 3, "%02x", state[i]);
    json_t *o = json_pack("{s:I, s:s?, s:b}", "size", (json_int_t)len, "hex", hex, "truncated", shown < len);
    ent_free(hex);
    if (ent_utf8_length_n((const char *)state, shown) >= 0)
        json_object_set_new(o, "text", json_stringn((const char *)state, shown));
    return o;
}

static void on_sessions(void *ctx, sb_status st, const store_dash_session *v, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the sessions");
        return;
    }
    broker_peer_list peers;
    bool have_peers = snapshot(r->plane, &peers);
    int64_t now = ent_clock_now_ms();
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *lock = json_null();
        if (v[i].has_lock)
            lock = json_pack("{s:o, s:b, s:o}", "lockedUntil", http_dash_time(v[i].locked_until_ms), "held",
                             v[i].locked_until_ms > now, "holder",
                             have_peers ? session_holder(&peers, r->entity, v[i].session_id) : json_null());
        json_array_append_new(list, json_pack("{s:s, s:I, s:o, s:o, s:o}", "sessionId", v[i].session_id, "messages",
                                              (json_int_t)v[i].messages, "state", state_json(v[i].state, v[i].state_len),
                                              "lock", lock, "updatedAt", http_dash_time(v[i].updated_ms)));
    }
    if (have_peers)
        broker_peer_list_free(&peers);
    http_dash_json(r, SB_OK, json_pack("{s:s, s:o, s:b}", "entity", r->entity, "sessions", list, "more",
                                       n >= HTTP_DASH_SESSIONS_MAX));
}

static void sessions_of(http_req *r, const ent_entity *e, const ent_route *route)
{
    (void)route;
    snprintf(r->entity, sizeof r->entity, "%s", e->name);
    store_dash_sessions(broker_store(r->broker), e->id, HTTP_DASH_SESSIONS_MAX, on_sessions, r);
}

void http_dash_sessions(http_req *r)
{
    http_dash_with_entity(r, http_req_arg(r, "entity"), "the query parameter 'entity'", sessions_of);
}
