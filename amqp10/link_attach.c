/* Attach: what a new link is for (entity, $cbs, $management), whether the
 * connection's CBS tokens allow it, and the reply attach the SDKs expect:
 * termini echoed verbatim, settle modes echoed, max-message-size, a properties
 * map (wire-protocol §0 #7-#10). Entity links wait for a read-through lookup of
 * the entity row, so a queue inserted with plain SQL is usable at once. */
#include <proton/codec.h>
#include <proton/connection.h>
#include <proton/terminus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_log.h"
#include "ent_queue.h"

static const char *host_of(const amqp_conn *c)
{
    const char *h = pn_connection_remote_hostname(c->driver.connection);
    return h && *h ? h : "localhost";
}

void amqp_condition_set(pn_condition_t *cond, const char *name, const char *description)
{
    pn_condition_set_name(cond, name);
    pn_condition_set_description(cond, description);
    pn_data_t *info = pn_condition_info(cond);
    if (pn_data_size(info) == 0)
        pn_data_put_map(info);
}

void amqp_link_refuse(pn_link_t *l, const char *condition, const char *description)
{
    /* null source and target, then a closing detach with the error (DOC-PG "Create message sender (error)") */
    pn_terminus_set_type(pn_link_source(l), PN_UNSPECIFIED);
    pn_terminus_set_type(pn_link_target(l), PN_UNSPECIFIED);
    pn_link_open(l);
    pn_condition_t *cond = pn_link_condition(l);
    amqp_condition_set(cond, condition, description);
    pn_link_close(l);
    amqp_link *lk = amqp_link_of(l);
    if (lk)
        lk->closed = true;
}

void amqp_link_detach_error(amqp_link *lk, sb_status st, const char *description)
{
    LOG_INFO("conn %llu: link '%s' closed: %s", (unsigned long long)lk->conn->id, pn_link_name(lk->pn), description);
    pn_condition_t *cond = pn_link_condition(lk->pn);
    amqp_condition_set(cond, sb_status_condition(st), description);
    pn_link_close(lk->pn);
    lk->closed = true;
}

static void refuse_status(amqp_link *lk, sb_status st, const char *description)
{
    LOG_INFO("conn %llu: link '%s' refused: %s", (unsigned long long)lk->conn->id, pn_link_name(lk->pn), description);
    amqp_link_refuse(lk->pn, sb_status_condition(st), description);
}

#define MAX_BATCH_PROPERTY "com.microsoft:max-message-batch-size"
#define MAX_BATCH_PREMIUM (1024u * 1024u)

void amqp_link_accept(amqp_link *lk)
{
    pn_link_t *l = lk->pn;
    pn_terminus_copy(pn_link_source(l), pn_link_remote_source(l));
    pn_terminus_copy(pn_link_target(l), pn_link_remote_target(l));
    pn_link_set_snd_settle_mode(l, pn_link_remote_snd_settle_mode(l));
    pn_link_set_rcv_settle_mode(l, pn_link_remote_rcv_settle_mode(l));
    /* max-message-size is what this end of the link takes in (AMQP 1.0 2.7.3): our limit where
     * we receive (the SDKs' senders, $management and $cbs requests). Where we send, Service Bus
     * advertises no limit (2^64-1, as Event Hubs does), and go-amqp (the Go SDK) enforces the
     * peer's value on what it receives: a message at our limit plus its broker annotations, or
     * a peek answer carrying several messages, would be refused and the link closed. */
    pn_link_set_max_message_size(l, pn_link_is_receiver(l) ? lk->conn->srv->settings->max_message_size : UINT64_MAX);
    pn_data_t *props = pn_link_properties(l);
    pn_data_put_map(props);
    if (lk->role == LINK_ENTITY_IN) { /* a sender to a queue or topic, not $management, $cbs or a coordinator */
        /* Service Bus tells a sender its batch limit apart from max-message-size: 256 KB
         * Standard, 1 MB Premium, whatever larger messages an entity takes. azure-servicebus
         * 7.15 (and the .NET, JS, Go SDKs since 2026-04) size batches by it, and without it
         * assume 256 KB, which a smaller --max-message-size then refuses. sbemu takes a batch
         * up to --max-message-size; past 1 MB it says 1 MB, as Premium does. */
        uint64_t max = lk->conn->srv->settings->max_message_size;
        pn_data_enter(props);
        pn_data_put_symbol(props, pn_bytes(strlen(MAX_BATCH_PROPERTY), MAX_BATCH_PROPERTY));
        pn_data_put_long(props, (int64_t)(max < MAX_BATCH_PREMIUM ? max : MAX_BATCH_PREMIUM));
        pn_data_exit(props);
    }
    pn_link_open(l);
    lk->open = true;
    if (pn_link_is_receiver(l))
        pn_link_flow(l, AMQP_INBOUND_CREDIT);
}

#define VIA_PROPERTY "com.microsoft:transfer-destination-address"

/* Send-via: the destination entity named by the sender's link properties
 * ("" when none). -1 when it is there but not an entity path. */
static int via_destination_of(pn_link_t *l, char *out, size_t n)
{
    out[0] = 0;
    pn_data_t *p = pn_link_remote_properties(l);
    if (!p) /* the attach has no properties */
        return 0;
    pn_data_rewind(p);
    int rc = 0;
    if (pn_data_next(p) && pn_data_type(p) == PN_MAP) {
        pn_data_enter(p);
        while (pn_data_next(p)) {
            pn_type_t kt = pn_data_type(p);
            pn_bytes_t k = kt == PN_SYMBOL ? pn_data_get_symbol(p) : kt == PN_STRING ? pn_data_get_string(p)
                                                                                      : pn_bytes(0, NULL);
            if (!pn_data_next(p))
                break;
            if (k.size != sizeof VIA_PROPERTY - 1 || memcmp(k.start, VIA_PROPERTY, k.size))
                continue;
            ent_address a;
            char addr[ENT_ENTITY_PATH_MAX * 2 + 64];
            pn_bytes_t v = pn_data_type(p) == PN_STRING ? pn_data_get_string(p) : pn_bytes(0, NULL);
            snprintf(addr, sizeof addr, "%.*s", (int)v.size, v.start ? v.start : "");
            if (!v.size || ent_address_parse(addr, &a) || a.kind != ENT_NODE_ENTITY || a.dead_letter)
                rc = -1;
            else
                snprintf(out, n, "%s", a.entity);
            break;
        }
    }
    pn_data_rewind(p);
    return rc;
}

static void on_lookup(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    amqp_link *lk = ctx;
    amqp_conn *c = lk->conn;
    char desc[800];
    if (lk->closed) {
        /* detached while we looked: nothing to answer */
    } else if (st == SB_ERR_NOT_FOUND) {
        snprintf(desc, sizeof desc,
                 "The messaging entity 'sb://%s/%s' could not be found. To know more visit "
                 "https://aka.ms/sbResourceMgrExceptions.",
                 host_of(c), lk->address.entity);
        refuse_status(lk, st, desc);
    } else if (st != SB_OK) {
        refuse_status(lk, st, "The emulator's store could not look up the entity; retry.");
    } else if (lk->role == LINK_ENTITY_IN && lk->via_destination[0]) {
        /* send-via: the via entity exists; the link sends to the destination */
        char dest[ENT_ENTITY_PATH_MAX + 1];
        snprintf(dest, sizeof dest, "%s", lk->via_destination);
        lk->via_destination[0] = 0;
        if (!amqp_cbs_authorized(c, dest)) {
            snprintf(desc, sizeof desc,
                     "Unauthorized access. 'Send' claim(s) are required to perform this operation. Resource: "
                     "'sb://%s/%s' (the transfer destination of a send-via link).",
                     host_of(c), dest);
            refuse_status(lk, SB_ERR_UNAUTHORIZED, desc);
        } else {
            snprintf(lk->address.entity, sizeof lk->address.entity, "%s", dest);
            amqp_link_hold(lk);
            broker_entity_lookup(c->srv->broker, dest, on_lookup, lk); /* answers the attach */
        }
    } else {
        lk->entity = *e;
        lk->route = *route;
        lk->subqueue = lk->address.dead_letter ? 1 : 0;
        bool out = lk->role == LINK_ENTITY_OUT;
        if (lk->role == LINK_MGMT_REQUESTS || lk->role == LINK_MGMT_REPLIES) {
            amqp_link_accept(lk);
        } else if (out && e->kind == ENT_KIND_TOPIC) {
            snprintf(desc, sizeof desc,
                     "Cannot receive from topic '%s': messages are received from its subscriptions "
                     "('%s/Subscriptions/<name>').",
                     e->name, e->name);
            refuse_status(lk, SB_ERR_NOT_ALLOWED, desc);
        } else if (!out && e->kind == ENT_KIND_SUBSCRIPTION) {
            snprintf(desc, sizeof desc, "Cannot send to subscription '%s': messages are sent to its topic.", e->name);
            refuse_status(lk, SB_ERR_NOT_ALLOWED, desc);
        } else if (!out && lk->address.dead_letter) {
            snprintf(desc, sizeof desc, "Messages cannot be sent to the dead-letter queue of '%s'.", e->name);
            refuse_status(lk, SB_ERR_NOT_ALLOWED, desc);
        } else if (out && !ent_entity_status_allows_receive(e->status)) {
            snprintf(desc, sizeof desc, "Messaging entity '%s' is currently disabled for receiving (status %s).",
                     e->name, e->status);
            refuse_status(lk, SB_ERR_ENTITY_DISABLED, desc);
        } else if (out && (st = ent_session_receiver_check(e, lk->address.dead_letter, lk->session, desc,
                                                               sizeof desc)) != SB_OK) {
            refuse_status(lk, st, desc);
        } else if (lk->session) {
            lk->receive_and_delete = pn_link_remote_snd_settle_mode(lk->pn) == PN_SND_SETTLED;
            amqp_session_attach(lk); /* answers once it has a session */
        } else {
            lk->receive_and_delete = out && pn_link_remote_snd_settle_mode(lk->pn) == PN_SND_SETTLED;
            amqp_link_accept(lk);
            if (out)
                amqp_link_pump(lk);
        }
    }
    amqp_conn_pump(c);
    amqp_link_drop(lk);
}

void amqp_link_on_remote_open(amqp_conn *c, pn_link_t *l)
{
    amqp_link *lk = ent_calloc(1, sizeof *lk);
    if (!lk) {
        amqp_link_refuse(l, "amqp:internal-error", "out of memory");
        return;
    }
    lk->conn = c;
    lk->pn = l;
    lk->next = c->links;
    c->links = lk;
    pn_link_set_context(l, lk);

    bool client_sends = pn_link_is_receiver(l);
    if (client_sends && pn_terminus_get_type(pn_link_remote_target(l)) == PN_COORDINATOR) {
        lk->role = LINK_COORDINATOR; /* transactions: amqp_txn.c */
        amqp_link_accept(lk);
        return;
    }
    const char *addr = pn_terminus_get_address(client_sends ? pn_link_remote_target(l) : pn_link_remote_source(l));
    char desc[600];
    if (ent_address_parse(addr, &lk->address)) {
        snprintf(desc, sizeof desc, "The link address '%s' is not a Service Bus entity path.", addr ? addr : "");
        refuse_status(lk, SB_ERR_ARGUMENT, desc);
        return;
    }
    switch (lk->address.kind) {
    case ENT_NODE_CBS:
        lk->role = client_sends ? LINK_CBS_REQUESTS : LINK_CBS_REPLIES;
        amqp_link_accept(lk);
        return;
    case ENT_NODE_MANAGEMENT:
        lk->role = client_sends ? LINK_MGMT_REQUESTS : LINK_MGMT_REPLIES;
        break; /* looked up like an entity link: the operations need its row */
    case ENT_NODE_ENTITY:
        lk->role = client_sends ? LINK_ENTITY_IN : LINK_ENTITY_OUT;
        if (client_sends && via_destination_of(l, lk->via_destination, sizeof lk->via_destination)) {
            snprintf(desc, sizeof desc, "The link's %s is not a Service Bus entity path.", VIA_PROPERTY);
            refuse_status(lk, SB_ERR_ARGUMENT, desc);
            return;
        }
        if (!client_sends)
            lk->session = amqp_session_filter_of(l, &lk->session_named, lk->session_id, sizeof lk->session_id);
        break;
    }
    char path[ENT_ENTITY_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s%s", lk->address.entity, lk->address.dead_letter ? "/$DeadLetterQueue" : "");
    if (!amqp_cbs_authorized(c, path)) {
        snprintf(desc, sizeof desc,
                 "Unauthorized access. '%s' claim(s) are required to perform this operation. Resource: "
                 "'sb://%s/%s'. No valid token was put on $cbs for this path.",
                 lk->address.kind == ENT_NODE_MANAGEMENT ? "Manage" : client_sends ? "Send" : "Listen", host_of(c),
                 path);
        refuse_status(lk, SB_ERR_UNAUTHORIZED, desc);
        return;
    }
    amqp_link_hold(lk);
    broker_entity_lookup(c->srv->broker, lk->address.entity, on_lookup, lk); /* may answer at once */
}

void amqp_delivery_reject(pn_delivery_t *d, sb_status st, const char *description)
{
    pn_condition_t *cond = pn_disposition_condition(pn_delivery_local(d));
    amqp_condition_set(cond, sb_status_condition(st), description);
    pn_delivery_update(d, PN_REJECTED);
}
