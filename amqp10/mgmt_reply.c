/* What a $management response is, and the end of every request: the envelope
 * of wire-protocol §7.2 (statusCode, statusDescription, errorCondition), the
 * answering calls that free the request (mgmt_send, mgmt_respond_error), and
 * what more than one operation answers, each written once here:
 *   {key: value}                   batch-delete-messages (message-count),
 *                                  renew-session-lock (expiration),
 *                                  get-session-state (session-state);
 *   {key: array of long/timestamp} renew-lock (expirations),
 *                                  schedule-message (sequence-numbers);
 *   {messages: [{message: binary,  peek-message,
 *     lock-token: uuid}]}          receive-by-sequence-number;
 *   410 message-lock-lost          renew-lock, update-disposition;
 *   a listing's store failure,     peek-message, enumerate-rules,
 *   or 204 for an empty page       get-message-sessions.
 * Bodies of one operation only (get-message-sessions, enumerate-rules) stay
 * in that operation's file. The mgmt_body_* and mgmt_put_* writers touch no
 * link and are unit-tested (test_mgmt_reply.c, test_mgmt_codec.c). */
#include <proton/codec.h>
#include <proton/message.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "amqp_message.h"
#include "amqp_reply.h"
#include "amqp_wire_forms.h"
#include "ent_alloc.h"
#include "ent_log.h"
#include "mgmt_internal.h"

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

/* ---- ending a request ---- */

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

void mgmt_forget(mgmt_req *r) { req_free(r); }

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
    amqp_count_refusal(r->lk->conn->srv, st);
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

/* ---- bodies shared by several operations ---- */

void mgmt_body_value(pn_data_t *body, const char *key, pn_atom_t value)
{
    pn_data_put_map(body);
    pn_data_enter(body);
    mgmt_put_string(body, key);
    pn_data_put_atom(body, value);
    pn_data_exit(body);
}

void mgmt_body_array(pn_data_t *body, const char *key, pn_type_t type, const int64_t *v, size_t n)
{
    pn_data_put_map(body);
    pn_data_enter(body);
    mgmt_put_array(body, key, type, v, n);
    pn_data_exit(body);
}

void mgmt_body_messages(pn_data_t *body, const store_mgmt_msg *msgs, size_t n, int subqueue, unsigned flags,
                        const char *entity)
{
    pn_data_put_map(body);
    pn_data_enter(body);
    mgmt_put_string(body, "messages");
    pn_data_put_list(body);
    pn_data_enter(body);
    for (size_t i = 0; i < n; i++)
        if (mgmt_put_message_entry(body, &msgs[i], subqueue, flags))
            LOG_ERROR("queue '%s': stored message %lld cannot be encoded; left out of the response", entity,
                      (long long)msgs[i].sequence_number);
    pn_data_exit(body);
    pn_data_exit(body);
}

void mgmt_reply_value(mgmt_req *r, const char *key, pn_atom_t value)
{
    pn_message_t *resp = mgmt_response(r, SB_OK);
    if (resp)
        mgmt_body_value(pn_message_body(resp), key, value);
    mgmt_send(r, resp);
}

void mgmt_reply_array(mgmt_req *r, const char *key, pn_type_t type, const int64_t *v, size_t n)
{
    pn_message_t *resp = mgmt_response(r, SB_OK);
    if (resp)
        mgmt_body_array(pn_message_body(resp), key, type, v, n);
    mgmt_send(r, resp);
}

void mgmt_reply_messages(mgmt_req *r, const store_mgmt_msg *msgs, size_t n, unsigned flags)
{
    pn_message_t *resp = mgmt_response(r, SB_OK);
    if (resp)
        mgmt_body_messages(pn_message_body(resp), msgs, n, r->lk->subqueue, flags, r->lk->entity.name);
    mgmt_send(r, resp);
}

bool mgmt_reply_failed_or_empty(mgmt_req *r, sb_status st, size_t n, const char *failure)
{
    if (st != SB_OK)
        mgmt_respond_error(r, st, "%s", failure);
    else if (n == 0)
        mgmt_send(r, mgmt_response(r, SB_NO_CONTENT));
    else
        return false;
    return true;
}

void mgmt_respond_lock_lost(mgmt_req *r)
{
    mgmt_respond_error(r, SB_ERR_LOCK_LOST, "%s", SB_TEXT_LOCK_LOST);
}
