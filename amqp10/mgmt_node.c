/* The <entity>/$management request/response node: takes a request off the
 * link, makes its mgmt_req and dispatches it by the `operation` application
 * property to one file per operation (mgmt_<op>.c). Request bodies are read
 * with mgmt_map.h; every answer is written by mgmt_reply.c. Anything unknown
 * is answered 501 and anything malformed 400; the link stays up. */
#include <proton/codec.h>
#include <proton/message.h>
#include <string.h>

#include "amqp_reply.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_txn.h"
#include "mgmt_internal.h"
#include "mgmt_rules.h"

static const struct {
    const char *operation;
    mgmt_handler handler;
} operations[] = {
    {"com.microsoft:peek-message", mgmt_peek},
    {"com.microsoft:renew-lock", mgmt_renew_lock},
    {"com.microsoft:receive-by-sequence-number", mgmt_receive_by_seq},
    {"com.microsoft:update-disposition", mgmt_update_disposition},
    {"com.microsoft:schedule-message", mgmt_schedule},
    {"com.microsoft:cancel-scheduled-message", mgmt_cancel_scheduled},
    {"com.microsoft:batch-delete-messages", mgmt_batch_delete},
    {"com.microsoft:add-rule", mgmt_add_rule},
    {"com.microsoft:remove-rule", mgmt_remove_rule},
    {"com.microsoft:enumerate-rules", mgmt_enumerate_rules},
    {"com.microsoft:renew-session-lock", mgmt_renew_session_lock},
    {"com.microsoft:get-session-state", mgmt_get_session_state},
    {"com.microsoft:set-session-state", mgmt_set_session_state},
    {"com.microsoft:get-message-sessions", mgmt_get_message_sessions},
};

#define NOPERATIONS (sizeof operations / sizeof operations[0])

size_t amqp_mgmt_operation_names(const char **names, size_t max)
{
    size_t n = NOPERATIONS < max ? NOPERATIONS : max;
    for (size_t i = 0; i < n; i++)
        names[i] = operations[i].operation;
    return n;
}

/* The request counted under its operation (GET /metrics); one it does not
 * know under the figures' last place. */
static void count_request(amqp_link *lk, const char *operation)
{
    broker_door_figures *f = &lk->conn->srv->figures;
    size_t i = 0;
    while (i < f->nops && (!operation || strcmp(operations[i].operation, operation)))
        i++;
    f->op_requests[i]++;
}

void amqp_mgmt_on_request(amqp_link *lk, pn_delivery_t *d, const char *bytes, size_t len)
{
    pn_message_t *msg = amqp_request_decode(bytes, len);
    amqp_txn *txn = NULL;
    if (amqp_txn_of(lk->conn, d, &txn)) {
        if (!txn) { /* unknown id: refused and settled */
            if (msg)
                pn_message_free(msg);
            return;
        }
        amqp_txn_answer(txn, d);
    } else {
        pn_delivery_update(d, PN_ACCEPTED);
        pn_delivery_settle(d);
    }
    if (!msg) {
        LOG_WARN("conn %llu: $management request is not an AMQP message", (unsigned long long)lk->conn->id);
        return;
    }
    mgmt_req *r = ent_calloc(1, sizeof *r);
    if (!r) {
        /* no request to answer on: end the request link rather than leave the client waiting */
        pn_message_free(msg);
        amqp_link_detach_error(lk, SB_ERR_INTERNAL, "The emulator ran out of memory taking the request.");
        return;
    }
    r->lk = lk;
    r->msg = msg;
    r->body = pn_message_body(msg);
    r->now_ms = ent_clock_now_ms_in(lk->entity.namespace_id);
    r->txn = txn;
    r->operation = amqp_request_app_string(msg, "operation", r->op_buf, sizeof r->op_buf);
    count_request(lk, r->operation);
    if (!r->operation) {
        r->operation = "(none)";
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "The request has no 'operation' application property (a string).");
        return;
    }
    for (size_t i = 0; i < NOPERATIONS; i++) {
        if (strcmp(operations[i].operation, r->operation))
            continue;
        pn_data_rewind(r->body);
        if (!pn_data_next(r->body) || pn_data_type(r->body) != PN_MAP) {
            mgmt_respond_error(r, SB_ERR_ARGUMENT, "The body of a '%s' request must be an AMQP map (amqp-value).",
                               r->operation);
            return;
        }
        LOG_DEBUG("conn %llu: %s on '%s'", (unsigned long long)lk->conn->id, r->operation, lk->entity.name);
        if (r->txn && !ent_txn_operation_joins(r->operation)) {
            mgmt_respond_error(r, SB_ERR_NOT_IMPLEMENTED,
                               "The operation '%s' cannot be part of a transaction in this emulator "
                               "(update-disposition and schedule-message can).",
                               r->operation);
            return;
        }
        if (lk->conn->srv->faults->n && amqp_fault_mgmt(r, operations[i].handler))
            return; /* a fault rule has it: the handler runs after, if it may */
        operations[i].handler(r);
        return;
    }
    mgmt_respond_error(r, SB_ERR_NOT_IMPLEMENTED,
                       "The operation '%s' is not supported by this emulator.",
                       r->operation);
}
