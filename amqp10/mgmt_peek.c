/* com.microsoft:peek-message: the messages of the link's (sub)queue from a
 * sequence number on, in order and in every state (active, deferred,
 * scheduled; locked or not), without locking anything (wire-protocol §7.3).
 * 204 when there is nothing at or after that sequence number. Expired
 * messages of the queue are not shown (see store_peek). `omit-message-body`
 * (boolean, newer SDKs) leaves the body sections out. A session receiver's
 * peek names its `session-id`: only that session's messages. */
#include "mgmt_internal.h"

static void on_peeked(void *ctx, sb_status st, const store_mgmt_msg *msgs, size_t n)
{
    mgmt_req *r = ctx;
    if (!mgmt_reply_failed_or_empty(r, st, n, "The emulator's store could not read the messages; retry."))
        mgmt_reply_messages(r, msgs, n, r->flags);
}

void mgmt_peek(mgmt_req *r)
{
    char err[256];
    int64_t from, count;
    bool omit_body = false;
    char sid[ENT_SESSION_ID_SIZE];
    int has_sid = mgmt_arg_string(r->body, "session-id", false, sid, sizeof sid, err, sizeof err);
    if (has_sid < 0 || mgmt_arg_long(r->body, "from-sequence-number", true, &from, err, sizeof err) ||
        mgmt_arg_long(r->body, "message-count", true, &count, err, sizeof err) ||
        mgmt_arg_bool(r->body, "omit-message-body", false, &omit_body, err, sizeof err) < 0) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    if (count < 1) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT_RANGE, "'message-count' must be at least 1, not %lld.", (long long)count);
        return;
    }
    if (count > MGMT_PEEK_MAX)
        count = MGMT_PEEK_MAX; /* Service Bus returns at most 250 per call; the SDKs ask again */
    r->flags = MGMT_ENTRY_PEEK | (omit_body ? MGMT_ENTRY_OMIT_BODY : 0);
    mgmt_hold(r);
    if (has_sid == 0 && r->lk->entity.requires_session && !r->lk->subqueue)
        store_peek_session(r->lk->conn->srv->store, r->lk->entity.id, sid, from, (int)count, r->now_ms, on_peeked,
                           r);
    else
        store_peek(r->lk->conn->srv->store, r->lk->entity.id, r->lk->subqueue, from, (int)count, r->now_ms,
                   on_peeked, r);
}
