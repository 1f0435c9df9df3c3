/* com.microsoft:renew-lock: `lock-tokens` (array of uuid, RFC order) →
 * `expirations` (array of timestamp, same order). Each lock is extended to now
 * + the queue's LockDuration; a token that is unknown, settled or whose lock
 * lapsed fails the whole request with 410 message-lock-lost (wire-protocol §7.3). */
#include <stdlib.h>

#include "ent_alloc.h"
#include "ent_message_rules.h"
#include "mgmt_internal.h"

static void on_renewed(void *ctx, sb_status st, const int64_t *until, size_t n)
{
    mgmt_req *r = ctx;
    if (st == SB_ERR_LOCK_LOST) {
        mgmt_respond_lock_lost(r);
        return;
    }
    if (st != SB_OK) {
        mgmt_respond_error(r, st, "The emulator's store could not renew the lock; retry.");
        return;
    }
    mgmt_reply_array(r, "expirations", PN_TIMESTAMP, until, n);
}

void mgmt_renew_lock(mgmt_req *r)
{
    char err[256];
    uint8_t (*tokens)[16];
    size_t n;
    if (mgmt_arg_uuid_array(r->body, "lock-tokens", &tokens, &n, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    mgmt_hold(r);
    store_renew_locks(r->lk->conn->srv->store, r->lk->entity.id, (const uint8_t (*)[16])tokens, n, r->now_ms,
                      ent_lock_until_ms(r->now_ms, r->lk->entity.lock_duration_ms), on_renewed, r);
    ent_free(tokens);
}
