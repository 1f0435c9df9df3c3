/* The wire's connections as the dashboard shows them (broker_peers.h): a
 * snapshot taken when someone looks, and the receiver that holds a lock
 * token, found among the deliveries its links have not settled (the delivery
 * tag is the lock token, in .NET's byte order). */
#include <proton/connection.h>
#include <stdio.h>
#include <string.h>

#include "amqp_internal.h"
#include "amqp_wire_forms.h"
#include "ent_alloc.h"

static void copy_text(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src ? src : ""); }

static void fill_link(const amqp_link *lk, broker_peer_link *out)
{
    copy_text(out->name, sizeof out->name, pn_link_name(lk->pn));
    out->kind = amqp_link_kind_of(lk->role);
    switch (lk->address.kind) {
    case ENT_NODE_CBS: copy_text(out->address, sizeof out->address, "$cbs"); break;
    case ENT_NODE_MANAGEMENT:
        snprintf(out->address, sizeof out->address, "%s/$management", lk->address.entity);
        break;
    default:
        snprintf(out->address, sizeof out->address, "%s%s", lk->address.entity,
                 lk->address.dead_letter ? "/$DeadLetterQueue" : "");
        break;
    }
    if (lk->role == LINK_COORDINATOR)
        copy_text(out->address, sizeof out->address, "$coordinator");
    out->open = lk->open && !lk->closed;
    int credit = pn_link_credit(lk->pn);
    out->credit = credit > 0 ? (uint32_t)credit : 0;
    int unsettled = pn_link_unsettled(lk->pn);
    out->unsettled = unsettled > 0 ? (uint32_t)unsettled : 0;
    out->session_held = lk->session && lk->session_held;
    if (out->session_held) {
        copy_text(out->session_id, sizeof out->session_id, lk->session_id);
        out->session_until_ms = lk->session_until_ms;
    }
}

static int snapshot(void *ctx, broker_peer_list *out)
{
    amqp_server *srv = ctx;
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (amqp_conn *c = srv->conns; c; c = c->next)
        n += c->opened && c->wsi;
    if (!n)
        return 0;
    if (!(out->v = ent_calloc(n, sizeof *out->v)))
        return -1;
    for (amqp_conn *c = srv->conns; c && out->n < n; c = c->next) {
        if (!c->opened || !c->wsi)
            continue;
        broker_peer *p = &out->v[out->n++];
        p->id = c->id;
        if (!lws_get_peer_simple(c->wsi, p->remote, sizeof p->remote))
            p->remote[0] = 0;
        pn_connection_t *pc = c->driver.connection;
        copy_text(p->container, sizeof p->container, pn_connection_remote_container(pc));
        copy_text(p->hostname, sizeof p->hostname, pn_connection_remote_hostname(pc));
        p->websocket = c->write_mode == LWS_WRITE_BINARY;
        size_t nl = 0;
        for (amqp_link *lk = c->links; lk; lk = lk->next)
            nl += !lk->finished;
        if (nl && !(p->links = ent_calloc(nl, sizeof *p->links))) {
            broker_peer_list_free(out);
            return -1;
        }
        for (amqp_link *lk = c->links; lk && p->nlinks < nl; lk = lk->next)
            if (!lk->finished)
                fill_link(lk, &p->links[p->nlinks++]);
    }
    return 0;
}

static int lock_holder(void *ctx, const uint8_t token[16], uint64_t *conn_id, char *link, size_t linklen)
{
    amqp_server *srv = ctx;
    uint8_t tag[16];
    amqp_lock_token_swap(token, tag);
    for (amqp_conn *c = srv->conns; c; c = c->next)
        for (amqp_link *lk = c->links; lk; lk = lk->next) {
            if (lk->role != LINK_ENTITY_OUT || lk->receive_and_delete || lk->finished)
                continue;
            for (pn_delivery_t *d = pn_unsettled_head(lk->pn); d; d = pn_unsettled_next(d)) {
                pn_delivery_tag_t t = pn_delivery_tag(d);
                if (t.size == 16 && !memcmp(t.start, tag, 16)) {
                    *conn_id = c->id;
                    copy_text(link, linklen, pn_link_name(lk->pn));
                    return 0;
                }
            }
        }
    return -1;
}

broker_peers_source amqp_server_peers(amqp_server *srv) { return (broker_peers_source){srv, snapshot, lock_holder}; }
