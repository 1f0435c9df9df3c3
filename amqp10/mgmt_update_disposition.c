/* com.microsoft:update-disposition: settles messages by lock token rather
 * than by delivery (deferred messages received by sequence number have no
 * delivery; the SDKs also fall back to it when the receive link is gone).
 * `lock-tokens` (array of uuid), `disposition-status` completed / abandoned /
 * suspended (dead-letter, with optional `deadletter-reason` and
 * `deadletter-description`) / defered (sic). Each token settles through
 * store_settle exactly as a link disposition would; any lost lock answers 410
 * message-lock-lost. `properties-to-modify` is not applied yet. */
#include <stdlib.h>
#include <string.h>

#include "mgmt_internal.h"

typedef struct disp_req {
    mgmt_req *r;
    size_t pending;    /* settlements still in the store */
    sb_status worst;   /* first failure, lock-lost preferred */
    store_settle_kind kind;
} disp_req;

static void on_settled(void *ctx, sb_status st)
{
    disp_req *q = ctx;
    if (st != SB_OK && (q->worst == SB_OK || st == SB_ERR_LOCK_LOST))
        q->worst = st;
    if (--q->pending)
        return;
    mgmt_req *r = q->r;
    sb_status worst = q->worst;
    store_settle_kind kind = q->kind;
    free(q);
    if (worst == SB_ERR_LOCK_LOST) {
        mgmt_respond_error(r, worst,
                           "The lock supplied is invalid. Either the lock expired, or the message has already been "
                           "removed from the queue.");
    } else if (worst != SB_OK) {
        mgmt_respond_error(r, worst, "The emulator's store could not settle the message; retry.");
    } else {
        if (kind == STORE_SETTLE_ABANDON || kind == STORE_SETTLE_DEADLETTER)
            amqp_server_wake(r->lk->conn->srv, r->lk->entity.id);
        mgmt_send(r, mgmt_response(r, SB_OK));
    }
}

static int kind_of(const char *status, store_settle_kind *kind)
{
    static const struct {
        const char *name;
        store_settle_kind kind;
    } map[] = {
        {"completed", STORE_SETTLE_COMPLETE}, {"abandoned", STORE_SETTLE_ABANDON},
        {"suspended", STORE_SETTLE_DEADLETTER}, {"defered", STORE_SETTLE_DEFER},
        {"deferred", STORE_SETTLE_DEFER}, /* the correct spelling, in case a client uses it */
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i].name, status)) {
            *kind = map[i].kind;
            return 0;
        }
    return -1;
}

void mgmt_update_disposition(mgmt_req *r)
{
    char err[256], status[32];
    char reason[MGMT_DEAD_LETTER_TEXT_MAX + 1], description[MGMT_DEAD_LETTER_TEXT_MAX + 1];
    uint8_t (*tokens)[16] = NULL;
    size_t n = 0;
    store_settle_kind kind;
    int has_reason, has_description;
    if (mgmt_arg_string(r->body, "disposition-status", true, status, sizeof status, err, sizeof err) ||
        (has_reason = mgmt_arg_string(r->body, "deadletter-reason", false, reason, sizeof reason, err, sizeof err)) < 0 ||
        (has_description = mgmt_arg_string(r->body, "deadletter-description", false, description, sizeof description,
                                           err, sizeof err)) < 0 ||
        mgmt_arg_uuid_array(r->body, "lock-tokens", &tokens, &n, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    if (kind_of(status, &kind)) {
        free(tokens);
        mgmt_respond_error(r, SB_ERR_ARGUMENT,
                           "The request body's 'disposition-status' must be completed, abandoned, suspended or "
                           "defered, not '%s'.",
                           status);
        return;
    }
    disp_req *q = malloc(sizeof *q);
    if (!q) {
        free(tokens);
        mgmt_respond_error(r, SB_ERR_INTERNAL, "out of memory");
        return;
    }
    q->r = r;
    q->pending = n + 1; /* one for this function: a store that fails at once cannot end q early */
    q->worst = SB_OK;
    q->kind = kind;
    mgmt_hold(r);
    store *s = r->lk->conn->srv->store;
    /* the activity stamp goes first so that it normally joins the same commit */
    store_touch_queue(s, r->lk->entity.id, r->now_ms, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        store_settle(s, r->lk->entity.id, tokens[i], kind, has_reason == 0 ? reason : NULL,
                     has_description == 0 ? description : NULL, r->now_ms, on_settled, q);
    free(tokens);
    on_settled(q, SB_OK);
}
