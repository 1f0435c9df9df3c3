/* The <entity>/$management request/response node: dispatch by the `operation`
 * application property to one file per operation, and the response envelope
 * (wire-protocol §7.2). Request bodies are read with mgmt_map.h. Anything
 * unknown is answered 501 and anything malformed 400; the link stays up. */
#include <proton/codec.h>
#include <proton/message.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_wire_forms.h"
#include "amqp_message.h"
#include "amqp_reply.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_message_rules.h"
#include "ent_txn.h"
#include "mgmt_internal.h"
#include "mgmt_rules.h"

/* ---- the envelope ---- */

void mgmt_put_string(pn_data_t *d, const char *s) { pn_data_put_string(d, pn_bytes(strlen(s), s)); }

void mgmt_put_status(pn_data_t *props, sb_status st, const char *description)
{
    mgmt_put_string(props, "statusCode");
    pn_data_put_int(props, sb_status_mgmt_code(st));
    mgmt_put_string(props, "statusDescription");
    mgmt_put_string(props, description);
    const char *cond = sb_status_condition(st);
    if (cond) {
        mgmt_put_string(props, "errorCondition");
        pn_data_put_symbol(props, pn_bytes(strlen(cond), cond));
    }
}

void mgmt_put_array(pn_data_t *d, const char *key, pn_type_t type, const int64_t *v, size_t n)
{
    mgmt_put_string(d, key);
    pn_data_put_array(d, false, type);
    pn_data_enter(d);
    for (size_t i = 0; i < n; i++) {
        if (type == PN_TIMESTAMP)
            pn_data_put_timestamp(d, v[i]);
        else
            pn_data_put_long(d, v[i]);
    }
    pn_data_exit(d);
}

pn_message_t *mgmt_build_response(pn_message_t *req, sb_status st, const char *description)
{
    pn_message_t *r = amqp_reply_begin(req);
    if (!r)
        return NULL;
    pn_data_t *p = pn_message_properties(r);
    mgmt_put_status(p, st, description);
    pn_data_exit(p); /* amqp_reply_send's own exit is then a no-op */
    return r;
}

static void req_free(mgmt_req *r)
{
    amqp_link *lk = r->lk;
    bool held = r->held;
    pn_message_free(r->msg);
    ent_free(r);
    if (held) {
        amqp_conn_pump(lk->conn);
        amqp_link_drop(lk);
    }
}

void mgmt_hold(mgmt_req *r)
{
    if (!r->held) {
        amqp_link_hold(r->lk);
        r->held = true;
    }
}

void mgmt_send(mgmt_req *r, pn_message_t *resp)
{
    if (!resp)
        resp = mgmt_build_response(r->msg, SB_ERR_INTERNAL, "The emulator ran out of memory answering the request.");
    if (resp && r->lk->conn->wsi)
        amqp_reply_send(r->lk, r->msg, resp); /* frees resp */
    else
        pn_message_free(resp);
    req_free(r);
}

pn_message_t *mgmt_response(mgmt_req *r, sb_status st)
{
    return mgmt_build_response(r->msg, st, st == SB_NO_CONTENT ? "No Content" : "OK");
}

void mgmt_respond_error(mgmt_req *r, sb_status st, const char *fmt, ...)
{
    char desc[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(desc, sizeof desc, fmt, ap);
    va_end(ap);
    /* lost locks and missing messages are ordinary answers; malformed or
     * unsupported requests and store failures are worth seeing at info */
    if (st == SB_ERR_LOCK_LOST || st == SB_ERR_MESSAGE_NOT_FOUND)
        LOG_DEBUG("conn %llu: %s on '%s' answered %d: %s", (unsigned long long)r->lk->conn->id, r->operation,
                  r->lk->entity.name, sb_status_mgmt_code(st), desc);
    else
        LOG_INFO("conn %llu: %s on '%s' answered %d: %s", (unsigned long long)r->lk->conn->id, r->operation,
                 r->lk->entity.name, sb_status_mgmt_code(st), desc);
    mgmt_send(r, mgmt_build_response(r->msg, st, desc));
}

/* ---- message entries of peek and receive-by-sequence-number responses ---- */

/* Python's SDK (7.8.2) reads a deferred message's lock token only from the
 * x-opt-lock-token delivery annotation of the encoded message, never from the
 * map's lock-token: put it there too, right after the header. */
static int add_lock_token_annotation(amqp_buf *msg, const uint8_t token[16])
{
    amqp_msg parsed;
    if (amqp_msg_parse(msg->data, msg->len, &parsed, NULL, 0))
        return -1;
    size_t head = parsed.header.len ? (size_t)(parsed.header.p + parsed.header.len - msg->data) : 0;
    amqp_buf out = {0};
    amqp_buf_raw(&out, msg->data, head);
    amqp_buf_descriptor(&out, AMQP_SEC_DELIVERY_ANNOTATIONS);
    size_t mark = amqp_buf_map_begin(&out);
    amqp_buf_symbol(&out, "x-opt-lock-token");
    amqp_buf_uuid(&out, token);
    amqp_buf_compound_end(&out, mark, 2);
    amqp_buf_raw(&out, msg->data + head, msg->len - head);
    if (out.failed) {
        amqp_buf_free(&out);
        return -1;
    }
    amqp_buf_free(msg);
    *msg = out;
    return 0;
}

/* Drops the body sections of an encoded message (peek's omit-message-body). */
static int drop_body(amqp_buf *msg)
{
    amqp_msg parsed;
    if (amqp_msg_parse(msg->data, msg->len, &parsed, NULL, 0))
        return -1;
    if (!parsed.body.len)
        return 0;
    size_t at = (size_t)(parsed.body.p - msg->data), tail = msg->len - at - parsed.body.len;
    memmove(msg->data + at, parsed.body.p + parsed.body.len, tail);
    msg->len = at + tail;
    return 0;
}

int mgmt_put_message_entry(pn_data_t *list, const store_mgmt_msg *m, int subqueue, unsigned flags)
{
    bool peek = flags & MGMT_ENTRY_PEEK, with_lock_token = flags & MGMT_ENTRY_LOCK_TOKEN;
    amqp_delivery_info info = {
        .sequence_number = m->sequence_number,
        .enqueued_ms = m->enqueued_ms,
        .locked_until_ms = peek ? 0 : m->locked_until_ms,
        .ttl_ms = m->ttl_ms,
        /* a peek is no delivery: .NET takes the header count as DeliveryCount
         * for peeked messages and adds 1 otherwise (wire-protocol §0 #16) */
        .header_delivery_count = peek ? (uint32_t)(m->delivery_count > 0 ? m->delivery_count : 0)
                                      : amqp_header_delivery_count(m->delivery_count),
        .message_state = m->state,
        .dead_letter_reason = m->dead_letter_reason,
        .dead_letter_description = m->dead_letter_description,
        .message_id = m->message_id,
        .dead_letter_source = m->dead_letter_source,
        .expires_ms = subqueue ? 0 : m->expires_ms, /* the dead-letter subqueue ignores TTL */
    };
    amqp_buf out = {0};
    if (amqp_msg_encode_delivery(m->bytes, m->len, &info, &out) ||
        (with_lock_token && m->locked && add_lock_token_annotation(&out, m->lock_token)) ||
        ((flags & MGMT_ENTRY_OMIT_BODY) && drop_body(&out))) {
        amqp_buf_free(&out);
        return -1;
    }
    pn_data_put_map(list);
    pn_data_enter(list);
    mgmt_put_string(list, "message");
    pn_data_put_binary(list, pn_bytes(out.len, (const char *)out.data));
    if (with_lock_token && m->locked) {
        pn_uuid_t u;
        memcpy(u.bytes, m->lock_token, 16);
        mgmt_put_string(list, "lock-token");
        pn_data_put_uuid(list, u);
    }
    pn_data_exit(list);
    amqp_buf_free(&out);
    return 0;
}

/* ---- dispatch ---- */

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
    r->now_ms = ent_clock_now_ms();
    r->txn = txn;
    r->operation = amqp_request_app_string(msg, "operation", r->op_buf, sizeof r->op_buf);
    if (!r->operation) {
        r->operation = "(none)";
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "The request has no 'operation' application property (a string).");
        return;
    }
    for (size_t i = 0; i < sizeof operations / sizeof operations[0]; i++) {
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
        operations[i].handler(r);
        return;
    }
    mgmt_respond_error(r, SB_ERR_NOT_IMPLEMENTED,
                       "The operation '%s' is not supported by this emulator.",
                       r->operation);
}
