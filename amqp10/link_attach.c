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
#include "ent_props.h"

static void attach_lookup(amqp_link *lk);

static const char *host_of(const amqp_conn *c)
{
    const char *h = pn_connection_remote_hostname(c->driver.connection);
    return h && *h ? h : "localhost";
}

static void refuse_status(amqp_link *lk, sb_status st, const char *description)
{
    LOG_INFO("conn %llu: link '%s' refused: %s", (unsigned long long)lk->conn->id, pn_link_name(lk->pn), description);
    amqp_count_refusal(lk->conn->srv, st);
    amqp_link_refuse(lk->pn, sb_status_condition(st), description);
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
        /* in a namespace other than the default, say which: a client that
         * named one by its key name may not know it did */
        snprintf(desc, sizeof desc,
                 "The messaging entity 'sb://%s/%s' could not be found%s%s%s. To know more visit "
                 "https://aka.ms/sbResourceMgrExceptions.",
                 host_of(c), lk->address.entity, c->ns_name[0] ? " in namespace '" : "", c->ns_name,
                 c->ns_name[0] ? "'" : "");
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
            broker_entity_lookup(c->srv->broker, c->ns_id, dest, on_lookup, lk); /* answers the attach */
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
    if (lk->address.kind == ENT_NODE_ENTITY && c->srv->faults->n && amqp_fault_attach(lk, attach_lookup))
        return; /* a fault rule has it: attach_lookup goes on, if it may */
    attach_lookup(lk);
}

static void attach_lookup(amqp_link *lk)
{
    amqp_link_hold(lk);
    broker_entity_lookup(lk->conn->srv->broker, lk->conn->ns_id, lk->address.entity, on_lookup, lk); /* may answer at once */
}
