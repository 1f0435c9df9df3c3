/* Sending one claimed message, and giving back a lock nobody will settle:
 * what a claim's answer does (link_sender.c) and a session's first
 * messages do when their credit comes or does not (link_held.c). */
#include <proton/delivery.h>
#include <proton/link.h>
#include <string.h>

#include "amqp_internal.h"
#include "amqp_message.h"
#include "amqp_wire_forms.h"
#include "ent_clock.h"
#include "ent_log.h"

void amqp_link_deliver(amqp_link *lk, const store_claimed *m)
{
    amqp_delivery_info info = {
        .sequence_number = m->sequence_number,
        .enqueued_ms = m->enqueued_ms,
        .locked_until_ms = lk->receive_and_delete ? 0 : m->locked_until_ms,
        .ttl_ms = m->ttl_ms,
        .header_delivery_count = amqp_header_delivery_count(m->delivery_count),
        .message_state = -1,
        .dead_letter_reason = m->dead_letter_reason,
        .dead_letter_description = m->dead_letter_description,
        .message_id = m->message_id,
        .dead_letter_source = m->dead_letter_source,
        .expires_ms = lk->subqueue ? 0 : m->expires_ms, /* the dead-letter subqueue ignores TTL */
    };
    amqp_buf out = {0};
    amqp_span tail[2];
    if (amqp_msg_encode_delivery_head(m->bytes, m->len, &info, &out, tail)) {
        LOG_ERROR("queue '%s': stored message %lld cannot be encoded; skipped", lk->entity.name,
                  (long long)m->sequence_number);
        amqp_buf_free(&out);
        return;
    }
    uint8_t tag[16];
    if (lk->receive_and_delete) {
        memset(tag, 0, sizeof tag);
        memcpy(tag, &m->sequence_number, sizeof m->sequence_number);
    } else {
        amqp_lock_token_swap(m->lock_token, tag);
    }
    pn_delivery_t *d = pn_delivery(lk->pn, pn_dtag((const char *)tag, 16));
    pn_link_send(lk->pn, (const char *)out.data, out.len);
    for (int i = 0; i < 2; i++)
        if (tail[i].len)
            pn_link_send(lk->pn, (const char *)tail[i].p, tail[i].len);
    /* until the next pump counts Proton's buffer again */
    lk->conn->out_ahead += out.len + tail[0].len + tail[1].len;
    pn_link_advance(lk->pn);
    if (lk->receive_and_delete)
        pn_delivery_settle(d);
    amqp_buf_free(&out);
}

/* A release: its receiver left while it claimed, or never asked for it. */
void amqp_release_for_others(amqp_server *srv, int32_t ns, int64_t entity_id, const uint8_t token[16])
{
    amqp_after_release then = amqp_after_release_of(srv, entity_id);
    store_settle(srv->store, entity_id, token, STORE_SETTLE_RELEASE, NULL, NULL, 0, ent_clock_now_ms_in(ns), then.cb,
                 then.ctx);
}
