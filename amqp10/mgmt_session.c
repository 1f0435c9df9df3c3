/* The session operations of $management (wire-protocol §7.3):
 * renew-session-lock (`session-id` → `expiration` timestamp),
 * get-session-state (→ `session-state` binary or null),
 * set-session-state (`session-state` binary or null: cleared), and
 * get-message-sessions (`last-updated-time`, `skip`, `top` → `skip`,
 * `sessions-ids` array of string; 204 when none).
 *
 * The first three act for the receiver holding the session: a link on the
 * same connection (the SDKs send them over their session receiver's
 * connection). None, or a lock that lapsed: 410 session-lock-lost. */
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_message_rules.h"
#include "mgmt_internal.h"
#include "store_session.h"

/* get-message-sessions pages at most this many ids per answer. */
#define MGMT_SESSIONS_PAGE_MAX 1000

/* The holder of the request's session-id, or answers the request and NULL. */
static amqp_link *holder_of(mgmt_req *r, char *sid, size_t sidlen)
{
    char err[256];
    if (mgmt_arg_string(r->body, "session-id", true, sid, sidlen, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return NULL;
    }
    if (!r->lk->entity.requires_session || r->lk->subqueue) {
        mgmt_respond_error(r, SB_ERR_NOT_ALLOWED, "'%s' has no sessions (RequiresSession is false).",
                           r->lk->entity.name);
        return NULL;
    }
    amqp_link *h = amqp_session_holder(r->lk->conn, r->lk->entity.id, sid);
    if (!h || !ent_session_lock_live(h->session_held, h->session_until_ms, r->now_ms)) {
        mgmt_respond_error(r, SB_ERR_SESSION_LOCK_LOST,
                           "The session lock has expired on the MessageSession '%s', or this connection does not "
                           "hold it. Accept the session again.",
                           sid);
        return NULL;
    }
    return h;
}

static void lost_or_failed(mgmt_req *r, sb_status st)
{
    if (st == SB_ERR_SESSION_LOCK_LOST)
        mgmt_respond_error(r, st, "The session lock has expired on the MessageSession. Accept the session again.");
    else
        mgmt_respond_error(r, st, "The emulator's store could not complete the session operation; retry.");
}

/* ---- renew-session-lock ---- */

typedef struct renew_ctx {
    mgmt_req *r;
    char sid[ENT_SESSION_ID_SIZE];
} renew_ctx;

static void on_renewed(void *ctx, sb_status st, int64_t until_ms)
{
    renew_ctx *x = ctx;
    mgmt_req *r = x->r;
    if (st != SB_OK) {
        lost_or_failed(r, st);
    } else {
        amqp_link *h = amqp_session_holder(r->lk->conn, r->lk->entity.id, x->sid);
        if (h)
            h->session_until_ms = until_ms;
        mgmt_reply_value(r, "expiration", (pn_atom_t){.type = PN_TIMESTAMP, .u.as_timestamp = until_ms});
    }
    ent_free(x);
}

void mgmt_renew_session_lock(mgmt_req *r)
{
    renew_ctx *x = ent_calloc(1, sizeof *x);
    if (!x) {
        mgmt_respond_error(r, SB_ERR_INTERNAL, "out of memory");
        return;
    }
    amqp_link *h = holder_of(r, x->sid, sizeof x->sid);
    if (!h) {
        ent_free(x);
        return;
    }
    x->r = r;
    mgmt_hold(r);
    store_session_renew(r->lk->conn->srv->store, r->lk->entity.id, x->sid, h->session_token, r->now_ms,
                        ent_lock_until_ms(r->now_ms, r->lk->entity.lock_duration_ms), on_renewed, x);
}

/* ---- get / set state ---- */

static void on_state(void *ctx, sb_status st, const uint8_t *state, size_t len)
{
    mgmt_req *r = ctx;
    if (st != SB_OK) {
        lost_or_failed(r, st);
        return;
    }
    pn_atom_t v = {.type = PN_NULL};
    if (state)
        v = (pn_atom_t){.type = PN_BINARY, .u.as_bytes = pn_bytes(len, (const char *)state)};
    mgmt_reply_value(r, "session-state", v);
}

void mgmt_get_session_state(mgmt_req *r)
{
    char sid[ENT_SESSION_ID_SIZE];
    amqp_link *h = holder_of(r, sid, sizeof sid);
    if (!h)
        return;
    mgmt_hold(r);
    store_session_get_state(r->lk->conn->srv->store, r->lk->entity.id, sid, h->session_token, r->now_ms, on_state, r);
}

static void on_state_set(void *ctx, sb_status st)
{
    mgmt_req *r = ctx;
    if (st != SB_OK)
        lost_or_failed(r, st);
    else
        mgmt_send(r, mgmt_response(r, SB_OK));
}

void mgmt_set_session_state(mgmt_req *r)
{
    char sid[ENT_SESSION_ID_SIZE];
    amqp_link *h = holder_of(r, sid, sizeof sid);
    if (!h)
        return;
    pn_bytes_t state = {0, NULL};
    bool clear = true;
    if (mgmt_map_find(r->body, "session-state")) {
        pn_type_t t = pn_data_type(r->body);
        if (t == PN_BINARY) {
            state = pn_data_get_binary(r->body);
            clear = false;
        } else if (t != PN_NULL) {
            mgmt_respond_error(r, SB_ERR_ARGUMENT, "'session-state' must be binary or null, not %s.",
                               mgmt_type_name(t));
            return;
        }
    }
    mgmt_hold(r);
    store_session_set_state(r->lk->conn->srv->store, r->lk->entity.id, sid, h->session_token, r->now_ms,
                            clear ? NULL : (const uint8_t *)(state.start ? state.start : ""), state.size,
                            on_state_set, r);
}

/* ---- get-message-sessions ---- */

typedef struct list_ctx {
    mgmt_req *r;
    int64_t skip;
} list_ctx;

static void on_listed(void *ctx, sb_status st, const char *const *ids, size_t n)
{
    list_ctx *x = ctx;
    mgmt_req *r = x->r;
    int64_t skip = x->skip;
    ent_free(x);
    if (mgmt_reply_failed_or_empty(r, st, n, "The emulator's store could not list the sessions; retry."))
        return;
    pn_message_t *resp = mgmt_response(r, SB_OK);
    if (resp) {
        pn_data_t *b = pn_message_body(resp);
        pn_data_put_map(b);
        pn_data_enter(b);
        mgmt_put_string(b, "skip");
        pn_data_put_int(b, (int32_t)(skip + (int64_t)n));
        mgmt_put_string(b, "sessions-ids");
        pn_data_put_array(b, false, PN_STRING);
        pn_data_enter(b);
        for (size_t i = 0; i < n; i++)
            mgmt_put_string(b, ids[i]);
        pn_data_exit(b);
        pn_data_exit(b);
    }
    mgmt_send(r, resp);
}

void mgmt_get_message_sessions(mgmt_req *r)
{
    char err[256];
    int64_t since = 0, skip = 0, top = MGMT_SESSIONS_PAGE_MAX;
    if (mgmt_arg_timestamp(r->body, "last-updated-time", false, &since, err, sizeof err) < 0 ||
        mgmt_arg_long(r->body, "skip", false, &skip, err, sizeof err) < 0 ||
        mgmt_arg_long(r->body, "top", false, &top, err, sizeof err) < 0) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    if (skip < 0 || top < 1) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT_RANGE, "'skip' must be at least 0 and 'top' at least 1.");
        return;
    }
    if (top > MGMT_SESSIONS_PAGE_MAX)
        top = MGMT_SESSIONS_PAGE_MAX;
    list_ctx *x = ent_malloc(sizeof *x);
    if (!x) {
        mgmt_respond_error(r, SB_ERR_INTERNAL, "out of memory");
        return;
    }
    x->r = r;
    x->skip = skip;
    mgmt_hold(r);
    store_session_list(r->lk->conn->srv->store, r->lk->entity.id, since, (int)(skip > INT32_MAX ? INT32_MAX : skip),
                       (int)top, on_listed, x);
}
