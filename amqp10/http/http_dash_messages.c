/* An entity's messages in the dashboard:
 *
 *   GET  messages?entity=<path>&subqueue=active|deadletter&from=<seq>&top=<n>
 *        a page in sequence order from `from` (every state, locked or not),
 *        each with its system columns, its lock and who holds it, and the
 *        message itself (http_dash_message.c); "next" is where the next page
 *        starts (null: none);
 *   POST delete {"entity", "subqueue", "sequenceNumbers": [...]}
 *        deletes those messages (a receiver holding one loses its lock);
 *   POST purge {"entity", "subqueue": "active"|"deadletter"|"all"}
 *        deletes every message, HTTP_DASH_PURGE_BATCH per transaction.
 * What they read and delete is the store's (sql/store_dash.h). */
#include <string.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "http_dash.h"
#include "store_dash.h"

/* ---- a page ---- */

typedef struct page_work {
    int64_t top;
    int subqueue;
    char path[ENT_ENTITY_PATH_MAX + 1];
} page_work;

static const char *state_name(int state)
{
    return state == STORE_DASH_STATE_DEFERRED ? "deferred" : state == STORE_DASH_STATE_SCHEDULED ? "scheduled" : "active";
}

static json_t *lock_json(const http_req *r, const store_dash_msg *m, int64_t now)
{
    if (!m->has_lock)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "token", http_dash_uuid(m->lock_token));
    json_object_set_new(o, "lockedUntil", http_dash_time(m->locked_until_ms));
    json_object_set_new(o, "held", json_boolean(m->locked_until_ms > now));
    uint64_t conn;
    char link[BROKER_PEER_NAME_MAX + 1];
    const broker_peers_source *p = r->plane ? &r->plane->peers : NULL;
    if (p && p->lock_holder && !p->lock_holder(p->ctx, m->lock_token, &conn, link, sizeof link))
        json_object_set_new(o, "holder", json_pack("{s:I, s:s}", "connection", (json_int_t)conn, "link", link));
    else
        json_object_set_new(o, "holder", json_null()); /* $management, another emulator, or lapsed */
    return o;
}

static json_t *msg_json(const http_req *r, const store_dash_msg *m, int64_t now)
{
    json_t *o = json_object();
    json_object_set_new(o, "sequenceNumber", json_integer(m->sequence_number));
    json_object_set_new(o, "subqueue", json_string(m->subqueue ? "deadletter" : "active"));
    json_object_set_new(o, "state", json_string(state_name(m->state)));
    json_object_set_new(o, "enqueuedTime", http_dash_time(m->enqueued_ms));
    json_object_set_new(o, "scheduledEnqueueTime",
                        m->state == STORE_DASH_STATE_SCHEDULED ? http_dash_time(m->available_ms) : json_null());
    json_object_set_new(o, "expiresAt", http_dash_time(m->expires_ms));
    /* the dead-letter subqueue ignores TTL; elsewhere the sweep has not been by yet */
    json_object_set_new(o, "expired", json_boolean(!m->subqueue && m->expires_ms && m->expires_ms <= now));
    json_object_set_new(o, "timeToLiveMs", m->ttl_ms >= 0 ? json_integer(m->ttl_ms) : json_null());
    json_object_set_new(o, "lock", lock_json(r, m, now));
    json_object_set_new(o, "deliveryCount", json_integer(m->delivery_count));
    json_object_set_new(o, "messageId", m->message_id ? json_string(m->message_id) : json_null());
    json_object_set_new(o, "sessionId", m->session_id ? json_string(m->session_id) : json_null());
    json_object_set_new(o, "deadLetterReason", m->dead_letter_reason ? json_string(m->dead_letter_reason) : json_null());
    json_object_set_new(o, "deadLetterErrorDescription",
                        m->dead_letter_description ? json_string(m->dead_letter_description) : json_null());
    json_object_set_new(o, "deadLetterSource", m->dead_letter_source ? json_string(m->dead_letter_source) : json_null());
    json_object_set_new(o, "size", json_integer((json_int_t)m->len));
    json_object_set_new(o, "message", http_dash_message_json(m->bytes, m->len));
    return o;
}

static void on_page(void *ctx, sb_status st, const store_dash_msg *msgs, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    page_work *w = r->work;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the messages");
        return;
    }
    int64_t now = ent_clock_now_ms();
    size_t shown = n > (size_t)w->top ? (size_t)w->top : n;
    json_t *list = json_array();
    for (size_t i = 0; i < shown; i++)
        json_array_append_new(list, msg_json(r, &msgs[i], now));
    json_t *doc = json_object();
    json_object_set_new(doc, "entity", json_string(w->path));
    json_object_set_new(doc, "subqueue", json_string(w->subqueue ? "deadletter" : "active"));
    json_object_set_new(doc, "now", http_dash_time(now));
    json_object_set_new(doc, "messages", list);
    json_object_set_new(doc, "next", n > shown ? json_integer(msgs[shown].sequence_number) : json_null());
    http_dash_json(r, SB_OK, doc);
}

static void page_of(http_req *r, const ent_entity *e, const ent_route *route)
{
    (void)route;
    page_work *w = r->work;
    snprintf(w->path, sizeof w->path, "%s", e->name);
    int64_t from;
    if (http_dash_arg_i64(r, "from", 1, 0, INT64_MAX, &from))
        return;
    /* one more than asked: whether there is a next page, and where it starts */
    store_dash_peek(broker_store(r->broker), e->id, w->subqueue, from, (int)w->top + 1, on_page, r);
}

void http_dash_messages(http_req *r)
{
    page_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    r->work = w;
    r->work_free = ent_free;
    int64_t from;
    if (http_dash_subqueue(r, http_req_arg(r, "subqueue"), false, "subqueue", &w->subqueue) ||
        http_dash_arg_i64(r, "top", HTTP_DASH_PAGE_DEFAULT, 1, HTTP_DASH_PAGE_MAX, &w->top) ||
        http_dash_arg_i64(r, "from", 1, 0, INT64_MAX, &from))
        return;
    http_dash_with_entity(r, http_req_arg(r, "entity"), "the query parameter 'entity'", page_of);
}

/* ---- delete ---- */

typedef struct delete_work {
    json_t *body;
    int subqueue;
    int64_t *seqs;
    size_t n;
    int64_t total; /* purge: deleted so far */
    int64_t entity_id;
    char path[ENT_ENTITY_PATH_MAX + 1];
} delete_work;

static void delete_work_free(void *p)
{
    delete_work *w = p;
    json_decref(w->body);
    ent_free(w->seqs);
    ent_free(w);
}

/* The body's common fields into a new work (r->work); NULL: answered. */
static delete_work *read_body(http_req *r, bool all_ok)
{
    json_t *body = http_dash_body(r);
    if (!body)
        return NULL;
    delete_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        json_decref(body);
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return NULL;
    }
    w->body = body;
    r->work = w;
    r->work_free = delete_work_free;
    json_t *sq = json_object_get(body, "subqueue");
    if (sq && !json_is_string(sq)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'subqueue' must be a string.");
        return NULL;
    }
    if (http_dash_subqueue(r, json_string_value(sq), all_ok, "subqueue", &w->subqueue))
        return NULL;
    json_t *entity = json_object_get(body, "entity");
    if (!json_is_string(entity)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'entity' must name a queue, topic or subscription (a string).");
        return NULL;
    }
    return w;
}

static void on_deleted(void *ctx, sb_status st, int64_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    delete_work *w = r->work;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the deletion");
        return;
    }
    http_dash_json(r, SB_OK, json_pack("{s:s, s:I, s:I}", "entity", w->path, "deleted", (json_int_t)n, "asked",
                                       (json_int_t)w->n));
}

static void delete_in(http_req *r, const ent_entity *e, const ent_route *route)
{
    (void)route;
    delete_work *w = r->work;
    snprintf(w->path, sizeof w->path, "%s", e->name);
    store_dash_delete(broker_store(r->broker), e->id, w->subqueue, w->seqs, w->n, false, ent_clock_now_ms(),
                      on_deleted, r);
}

void http_dash_delete(http_req *r)
{
    delete_work *w = read_body(r, false);
    if (!w || http_dash_seqs(r, json_object_get(w->body, "sequenceNumbers"), "sequenceNumbers", &w->seqs, &w->n))
        return;
    http_dash_with_entity(r, json_string_value(json_object_get(w->body, "entity")), "'entity'", delete_in);
}

/* ---- purge ---- */

static void on_purged(void *ctx, sb_status st, int64_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    delete_work *w = r->work;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the purge");
        return;
    }
    w->total += n;
    if (n >= HTTP_DASH_PURGE_BATCH) { /* more may be left: the next batch, in a transaction of its own */
        store_dash_purge(broker_store(r->broker), w->entity_id, w->subqueue, HTTP_DASH_PURGE_BATCH, on_purged, r);
        return;
    }
    http_dash_json(r, SB_OK, json_pack("{s:s, s:s, s:I}", "entity", w->path, "subqueue",
                                       w->subqueue < 0 ? "all" : w->subqueue ? "deadletter" : "active", "deleted",
                                       (json_int_t)w->total));
}

static void purge_in(http_req *r, const ent_entity *e, const ent_route *route)
{
    (void)route;
    delete_work *w = r->work;
    snprintf(w->path, sizeof w->path, "%s", e->name);
    w->entity_id = e->id;
    store_dash_purge(broker_store(r->broker), e->id, w->subqueue, HTTP_DASH_PURGE_BATCH, on_purged, r);
}

void http_dash_purge(http_req *r)
{
    delete_work *w = read_body(r, true);
    if (!w)
        return;
    if (!json_object_get(w->body, "subqueue")) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'subqueue' must say what to purge: \"active\", \"deadletter\" or "
                                            "\"all\".");
        return;
    }
    http_dash_with_entity(r, json_string_value(json_object_get(w->body, "entity")), "'entity'", purge_in);
}
