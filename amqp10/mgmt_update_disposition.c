/* com.microsoft:update-disposition: settles messages by lock token rather
 * than by delivery (deferred messages received by sequence number have no
 * delivery; the SDKs also fall back to it when the receive link is gone).
 * `lock-tokens` (array of uuid), `disposition-status` completed / abandoned /
 * suspended (dead-letter, with optional `deadletter-reason` and
 * `deadletter-description`) / defered (sic). The tokens settle through
 * broker_settle, the path a link disposition takes; any lost lock answers
 * 410 message-lock-lost.
 *
 * `properties-to-modify` (a map; abandon, defer and dead-letter) is merged
 * into the message's application-properties before it is settled
 * (codec/amqp_props.h). */
#include <stdlib.h>
#include <string.h>

#include "amqp_props.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_dead_letter.h"
#include "mgmt_internal.h"

static bool read_map(const uint8_t *p, size_t len, amqp_val *map)
{
    const uint8_t *at = p;
    return !amqp_read(&at, p + len, map) && (map->code == 0xc1 || map->code == 0xd1);
}

/* The raw bytes of the request body's `properties-to-modify` map, copied into
 * *out (malloc'd); 1 when absent, null or empty, -1 when it is not a map. */
static int properties_to_modify(pn_data_t *body, uint8_t **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (!mgmt_map_find(body, "properties-to-modify"))
        return 1;
    if (pn_data_type(body) != PN_MAP)
        return -1;
    if (pn_data_get_map(body) == 0)
        return 1;
    /* Proton encodes whole trees only: encode the body, then find the value in the bytes */
    ssize_t got;
    char *buf = amqp_data_encode(body, &got);
    if (!buf)
        return -1;
    int rc = -1;
    amqp_val top, k, v;
    const uint8_t *p = (const uint8_t *)buf;
    if (got > 0 && read_map(p, (size_t)got, &top)) {
        const uint8_t *q = top.data, *end = top.data + top.size;
        for (uint32_t i = 0; i + 1 < top.count; i += 2) {
            if (amqp_read(&q, end, &k) || amqp_read(&q, end, &v))
                break;
            const uint8_t *d;
            size_t n;
            if (amqp_val_bytes(&k, &d, &n) && n == 20 && !memcmp(d, "properties-to-modify", 20)) {
                *outlen = (size_t)(v.end - v.start);
                *out = ent_malloc(*outlen);
                if (*out) {
                    memcpy(*out, v.start, *outlen);
                    rc = 0;
                }
                break;
            }
        }
    }
    ent_free(buf);
    return rc;
}

/* ---- the request ---- */

/* worst: SB_OK, or the first failure of the request's settlements (a lost
 * lock preferred; broker_settle). What follows a settlement was done. */
static void on_settled(void *ctx, sb_status worst)
{
    mgmt_req *r = ctx;
    char sid[ENT_SESSION_ID_SIZE], err[64];
    bool in_session = r->lk->entity.requires_session && !r->lk->subqueue &&
                      mgmt_arg_string(r->body, "session-id", false, sid, sizeof sid, err, sizeof err) == 0;
    amqp_link *h = in_session ? amqp_session_holder(r->lk->conn, r->lk->entity.id, sid) : NULL;
    worst = ent_session_settle_failure(
        worst, in_session, h && ent_session_lock_live(h->session_held, h->session_until_ms,
                                       ent_clock_now_ms_in(r->lk->entity.namespace_id)));
    if (worst == SB_ERR_SESSION_LOCK_LOST) {
        /* a session message whose session this connection no longer holds */
        mgmt_respond_error(r, SB_ERR_SESSION_LOCK_LOST,
                           "The session lock has expired on the MessageSession '%s'. Accept a new session.", sid);
    } else if (worst == SB_ERR_LOCK_LOST) {
        mgmt_respond_lock_lost(r);
    } else if (worst == SB_ERR_ARGUMENT) {
        mgmt_respond_error(r, worst,
                           "'properties-to-modify' could not be applied: it must be a map with string keys.");
    } else if (worst != SB_OK) {
        mgmt_respond_error(r, worst, "The emulator's store could not settle the message; retry.");
    } else {
        mgmt_send(r, mgmt_response(r, SB_OK));
    }
}

/* In a transaction: the settlements join it (one operation each) and take
 * effect at its commit; properties-to-modify cannot (it rewrites the message
 * at once). */
static void settle_in_txn(mgmt_req *r, store_settle_kind kind, const uint8_t (*tokens)[16], size_t n,
                          const char *reason, const char *description)
{
    if (mgmt_map_find(r->body, "properties-to-modify") && pn_data_type(r->body) != PN_NULL) {
        mgmt_respond_error(r, SB_ERR_NOT_IMPLEMENTED,
                           "'properties-to-modify' cannot be part of a transaction in this emulator.");
        return;
    }
    char err[256];
    for (size_t i = 0; i < n; i++) {
        sb_status st = amqp_txn_admit_op(r->txn, err, sizeof err);
        store_settlement x = {kind, r->lk->entity.id, {0}, reason, description, r->lk->route.dead_letter_target_id,
                              r->now_ms};
        memcpy(x.lock_token, tokens[i], 16);
        if (st == SB_OK && store_txn_settle(amqp_txn_work(r->txn), &x))
            st = SB_ERR_INTERNAL;
        if (st != SB_OK) {
            mgmt_respond_error(r, st, "%s", st == SB_ERR_INTERNAL ? "out of memory" : err);
            return;
        }
    }
    mgmt_send(r, mgmt_response(r, SB_OK));
}

void mgmt_update_disposition(mgmt_req *r)
{
    char err[256], status[32];
    char reason[ENT_DEAD_LETTER_TEXT_SIZE], description[ENT_DEAD_LETTER_TEXT_SIZE];
    uint8_t (*tokens)[16] = NULL;
    size_t n = 0;
    ent_settle_kind kind;
    int has_reason, has_description;
    if (mgmt_arg_string(r->body, "disposition-status", true, status, sizeof status, err, sizeof err) ||
        (has_reason = mgmt_arg_string(r->body, "deadletter-reason", false, reason, sizeof reason, err, sizeof err)) < 0 ||
        (has_description = mgmt_arg_string(r->body, "deadletter-description", false, description, sizeof description,
                                           err, sizeof err)) < 0 ||
        mgmt_arg_uuid_array(r->body, "lock-tokens", &tokens, &n, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    sb_status st = ent_dead_letter_text_check("dead-letter reason", has_reason == 0 ? reason : NULL, err, sizeof err);
    if (st == SB_OK)
        st = ent_dead_letter_text_check("dead-letter description", has_description == 0 ? description : NULL, err,
                                        sizeof err);
    if (st != SB_OK) {
        ent_free(tokens);
        mgmt_respond_error(r, st, "%s", err);
        return;
    }
    if (ent_settle_kind_of_status(status, &kind)) {
        ent_free(tokens);
        mgmt_respond_error(r, SB_ERR_ARGUMENT,
                           "The request body's 'disposition-status' must be completed, abandoned, suspended or "
                           "defered, not '%s'.",
                           status);
        return;
    }
    if (r->txn) {
        settle_in_txn(r, (store_settle_kind)kind, tokens, n, has_reason == 0 ? reason : NULL, has_description == 0 ? description : NULL);
        ent_free(tokens);
        return;
    }
    uint8_t *mods = NULL;
    size_t modslen = 0;
    if (properties_to_modify(r->body, &mods, &modslen) < 0) {
        ent_free(tokens);
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "The request body's 'properties-to-modify' must be a map.");
        return;
    }
    mgmt_hold(r);
    /* the activity stamp goes first so that it normally joins the same commit */
    store_touch_queue(r->lk->conn->srv->store, r->lk->entity.id, r->now_ms, NULL, NULL);
    broker_settlement x = {r->lk->entity.id, r->lk->route.dead_letter_target_id, kind,
                           has_reason == 0 ? reason : NULL, has_description == 0 ? description : NULL,
                           mods, modslen, r->now_ms};
    broker_settle(r->lk->conn->srv->broker, &x, (const uint8_t(*)[16])tokens, n, on_settled, r); /* copies */
    ent_free(mods);
    ent_free(tokens);
}
