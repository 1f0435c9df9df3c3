/* com.microsoft:receive-by-sequence-number: takes DEFERRED messages by
 * sequence number (`sequence-numbers`, array of long). `receiver-settle-mode`
 * (uint; .NET and JS send uint, the docs say ubyte) 1 = peek-lock locks them
 * for the queue's LockDuration, counting a delivery, and they stay deferred
 * until settled through update-disposition; 0 = receive-and-delete deletes
 * them. Response `messages`: a list of {message: binary, lock-token: uuid}.
 * A number that names no unlocked deferred message fails the whole request
 * with 404 message-not-found naming it (wire-protocol §7.3). */
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_props.h"
#include "ent_message_rules.h"
#include "mgmt_internal.h"

typedef struct rbs_req {
    mgmt_req *r;
    bool lock;
} rbs_req;

static void on_received(void *ctx, sb_status st, int64_t missing, const store_mgmt_msg *msgs, size_t n)
{
    rbs_req *q = ctx;
    mgmt_req *r = q->r;
    bool lock = q->lock;
    ent_free(q);
    if (st == SB_ERR_MESSAGE_NOT_FOUND) {
        mgmt_respond_error(r, st,
                           "Failed to retrieve the message with sequence number %lld: it is not a deferred message "
                           "of '%s%s', or it is locked.",
                           (long long)missing, r->lk->entity.name, r->lk->subqueue ? "/$DeadLetterQueue" : "");
        return;
    }
    if (st != SB_OK) {
        mgmt_respond_error(r, st, "The emulator's store could not take the deferred messages; retry.");
        return;
    }
    broker_count(r->lk->conn->srv->broker, r->lk->entity.id, BROKER_EV_OUT, n);
    mgmt_reply_messages(r, msgs, n, lock ? MGMT_ENTRY_LOCK_TOKEN : 0);
}

void mgmt_receive_by_seq(mgmt_req *r)
{
    char err[256];
    int64_t mode = 1;
    int64_t *seqs;
    size_t n;
    if (mgmt_arg_long(r->body, "receiver-settle-mode", false, &mode, err, sizeof err) < 0 ||
        mgmt_arg_long_array(r->body, "sequence-numbers", &seqs, &n, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    if (mode != 0 && mode != 1) {
        ent_free(seqs);
        mgmt_respond_error(r, SB_ERR_ARGUMENT_RANGE,
                           "'receiver-settle-mode' must be 0 (receive-and-delete) or 1 (peek-lock), not %lld.",
                           (long long)mode);
        return;
    }
    if (!ent_entity_status_allows_receive(r->lk->entity.status)) {
        ent_free(seqs);
        mgmt_respond_error(r, SB_ERR_ENTITY_DISABLED, "The messaging entity '%s' is %s; receiving is not allowed.",
                           r->lk->entity.name, r->lk->entity.status);
        return;
    }
    rbs_req *q = ent_malloc(sizeof *q);
    if (!q) {
        ent_free(seqs);
        mgmt_respond_error(r, SB_ERR_INTERNAL, "out of memory");
        return;
    }
    q->r = r;
    q->lock = mode == 1;
    mgmt_hold(r);
    store_receive_deferred(r->lk->conn->srv->store, r->lk->entity.id, r->lk->subqueue, seqs, n, !q->lock, r->now_ms,
                           ent_lock_until_ms(r->now_ms, r->lk->entity.lock_duration_ms), on_received, q);
    ent_free(seqs);
}
