/* See amqp_reply.h. */
#include "amqp_reply.h"

#include <proton/codec.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_log.h"

pn_message_t *amqp_request_decode(const char *bytes, size_t len)
{
    pn_message_t *m = pn_message();
    if (m && pn_message_decode(m, bytes, len) == 0)
        return m;
    pn_message_free(m);
    return NULL;
}

const char *amqp_map_string(pn_data_t *map, const char *key, char *buf, size_t buflen)
{
    pn_data_rewind(map);
    if (!pn_data_next(map) || pn_data_type(map) != PN_MAP)
        return NULL;
    pn_data_enter(map);
    const char *found = NULL;
    while (pn_data_next(map)) {
        bool match = false;
        if (pn_data_type(map) == PN_STRING || pn_data_type(map) == PN_SYMBOL) {
            pn_bytes_t k = pn_data_type(map) == PN_STRING ? pn_data_get_string(map) : pn_data_get_symbol(map);
            match = k.size == strlen(key) && !memcmp(k.start, key, k.size);
        }
        if (!pn_data_next(map))
            break;
        if (match && (pn_data_type(map) == PN_STRING || pn_data_type(map) == PN_SYMBOL)) {
            pn_bytes_t v = pn_data_type(map) == PN_STRING ? pn_data_get_string(map) : pn_data_get_symbol(map);
            size_t n = v.size < buflen - 1 ? v.size : buflen - 1;
            memcpy(buf, v.start, n);
            buf[n] = 0;
            found = buf;
            break;
        }
    }
    pn_data_exit(map);
    return found;
}

const char *amqp_request_app_string(pn_message_t *req, const char *key, char *buf, size_t buflen)
{
    return amqp_map_string(pn_message_properties(req), key, buf, buflen);
}

pn_message_t *amqp_reply_begin(pn_message_t *req)
{
    pn_message_t *r = pn_message();
    if (!r)
        return NULL;
    /* Copying the atom keeps the id's AMQP type; pn_data_copy left it empty (toolchain-notes §1). */
    pn_message_set_correlation_id(r, pn_message_get_id(req));
    const char *reply_to = pn_message_get_reply_to(req);
    if (reply_to)
        pn_message_set_address(r, reply_to);
    pn_data_t *p = pn_message_properties(r);
    pn_data_put_map(p);
    pn_data_enter(p);
    return r;
}

static bool terminus_is(pn_terminus_t *t, const char *s)
{
    const char *a = pn_terminus_get_address(t);
    return a && s && !strcmp(a, s);
}

/* The receiving link of the same connection whose target (or name) is the
 * request's reply-to; else the reply link attached to the same node. */
static amqp_link *find_reply_link(amqp_link *via, const char *reply_to)
{
    amqp_link_role want = via->role == LINK_CBS_REQUESTS ? LINK_CBS_REPLIES : LINK_MGMT_REPLIES;
    amqp_link *fallback = NULL;
    for (amqp_link *lk = via->conn->links; lk; lk = lk->next) {
        if (lk->role != want || !lk->open || lk->closed)
            continue;
        if (reply_to && (terminus_is(pn_link_remote_target(lk->pn), reply_to) || !strcmp(pn_link_name(lk->pn), reply_to)))
            return lk;
        if (!fallback && (want == LINK_CBS_REPLIES || !strcasecmp(lk->address.entity, via->address.entity)))
            fallback = lk;
    }
    return fallback;
}

void amqp_reply_send(amqp_link *via, pn_message_t *req, pn_message_t *resp)
{
    pn_data_exit(pn_message_properties(resp));
    amqp_link *out = find_reply_link(via, pn_message_get_reply_to(req));
    if (!out) {
        LOG_WARN("conn %llu: no reply link for a request on %s", (unsigned long long)via->conn->id,
                 pn_link_name(via->pn));
        pn_message_free(resp);
        return;
    }
    size_t cap = 1024;
    char *buf = NULL;
    bool sent = false;
    for (;;) {
        char *nb = ent_realloc(buf, cap);
        if (!nb)
            break;
        buf = nb;
        size_t len = cap;
        int rc = pn_message_encode(resp, buf, &len);
        if (rc == PN_OVERFLOW) {
            cap *= 2;
            continue;
        }
        if (rc == 0) {
            static uint64_t tag;
            tag++;
            pn_delivery_t *d = pn_delivery(out->pn, pn_dtag((const char *)&tag, sizeof tag));
            pn_link_send(out->pn, buf, len);
            pn_link_advance(out->pn);
            pn_delivery_settle(d);
            sent = true;
        }
        break;
    }
    ent_free(buf);
    pn_message_free(resp);
    /* A reply that cannot be written must not leave its caller waiting for
     * its timeout: the reply link ends, and the SDK's request fails now. */
    if (!sent)
        amqp_link_detach_error(out, SB_ERR_INTERNAL, "The emulator could not encode the reply (out of memory).");
}
