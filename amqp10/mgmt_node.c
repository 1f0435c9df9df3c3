/* The <entity>/$management request/response node. Responses carry statusCode
 * (int), statusDescription (string) and, on errors, errorCondition (symbol),
 * wire-protocol §7. Operations are added one file each (mgmt_<op>.c) as the
 * issues that need them land; anything unknown is answered 501, link kept. */
#include <proton/codec.h>
#include <proton/message.h>
#include <stdio.h>
#include <string.h>

#include "amqp_reply.h"
#include "ent_log.h"

static void put_str(pn_data_t *p, const char *s) { pn_data_put_string(p, pn_bytes(strlen(s), s)); }

static void respond_error(amqp_link *lk, pn_message_t *req, sb_status st, const char *description)
{
    pn_message_t *r = amqp_reply_begin(req);
    if (!r)
        return;
    pn_data_t *p = pn_message_properties(r);
    put_str(p, "statusCode");
    pn_data_put_int(p, sb_status_mgmt_code(st));
    put_str(p, "statusDescription");
    put_str(p, description);
    if (sb_status_condition(st)) {
        put_str(p, "errorCondition");
        const char *cond = sb_status_condition(st);
        pn_data_put_symbol(p, pn_bytes(strlen(cond), cond));
    }
    amqp_reply_send(lk, req, r);
}

void amqp_mgmt_on_request(amqp_link *lk, pn_delivery_t *d, const char *bytes, size_t len)
{
    pn_message_t *req = amqp_request_decode(bytes, len);
    pn_delivery_update(d, PN_ACCEPTED);
    pn_delivery_settle(d);
    if (!req) {
        LOG_WARN("conn %llu: $management request is not an AMQP message", (unsigned long long)lk->conn->id);
        return;
    }
    char op[128], desc[256];
    const char *operation = amqp_request_app_string(req, "operation", op, sizeof op);
    snprintf(desc, sizeof desc, "The operation '%s' is not supported by this emulator yet.",
             operation ? operation : "(none)");
    respond_error(lk, req, SB_ERR_NOT_IMPLEMENTED, desc);
    pn_message_free(req);
}
