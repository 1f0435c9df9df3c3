/* com.microsoft:batch-delete-messages (PurgeMessages / DeleteMessages in the
 * newer SDKs): `message-count` (int) and `enqueued-time-utc` (timestamp)
 * delete up to that many unlocked messages of the link's (sub)queue enqueued
 * before that time, lowest sequence numbers first, at most
 * MGMT_BATCH_DELETE_MAX per call. Response `message-count`: how many went. */
#include "mgmt_internal.h"

static void on_deleted(void *ctx, sb_status st, int64_t count)
{
    mgmt_req *r = ctx;
    if (st != SB_OK) {
        mgmt_respond_error(r, st, "The emulator's store could not delete the messages; retry.");
        return;
    }
    mgmt_reply_value(r, "message-count", (pn_atom_t){.type = PN_INT, .u.as_int = (int32_t)count});
}

void mgmt_batch_delete(mgmt_req *r)
{
    char err[256];
    int64_t count, before = r->now_ms;
    if (mgmt_arg_long(r->body, "message-count", true, &count, err, sizeof err) ||
        mgmt_arg_timestamp(r->body, "enqueued-time-utc", false, &before, err, sizeof err) < 0) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    if (count < 1) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT_RANGE, "'message-count' must be at least 1, not %lld.",
                           (long long)count);
        return;
    }
    if (count > MGMT_BATCH_DELETE_MAX)
        count = MGMT_BATCH_DELETE_MAX; /* the service's per-call cap; the SDKs call again */
    mgmt_hold(r);
    store_batch_delete(r->lk->conn->srv->store, r->lk->entity.id, r->lk->subqueue, (int)count, before, r->now_ms,
                       on_deleted, r);
}
