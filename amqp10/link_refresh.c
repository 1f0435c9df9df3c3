/* Entities change under attached links: a user runs UPDATE queues SET status =
 * 'Disabled' with plain SQL, the management plane changes a TTL, another
 * emulator deletes an idle queue. The entity tables' trigger NOTIFYs
 * sbemu_entities; on that, every attached entity link looks its entity up
 * again and from then on acts on what it finds (status, TTL, ForwardTo, lock
 * duration), as Service Bus does. A link whose entity is gone (or was replaced
 * by a new one of the same name) is detached with MessagingEntityNotFound.
 *
 * Cost: one look-up per attached link per burst of changes; changes that arrive
 * while a refresh is in the store are folded into one more refresh. Message
 * traffic never fires the trigger, so this runs only when entities change. */
#include <proton/connection.h>
#include <stdio.h>

#include "amqp_internal.h"
#include "ent_log.h"
#include "ent_queue.h"

static void refresh_all(amqp_server *srv);

static bool has_entity(const amqp_link *lk)
{
    return lk->open && !lk->closed &&
           (lk->role == LINK_ENTITY_IN || lk->role == LINK_ENTITY_OUT || lk->role == LINK_MGMT_REQUESTS);
}

static void on_refreshed(void *ctx, sb_status st, const store_entity *e)
{
    amqp_link *lk = ctx;
    amqp_conn *c = lk->conn;
    amqp_server *srv = c->srv;
    if (!lk->closed && c->wsi) {
        if (st == SB_ERR_NOT_FOUND || (st == SB_OK && e->id != lk->entity.id)) {
            /* the wording of an attach to a missing entity: the SDKs read "could not be found" */
            const char *host = pn_connection_remote_hostname(c->driver.connection);
            char desc[600];
            snprintf(desc, sizeof desc,
                     "The messaging entity 'sb://%s/%s' could not be found (it was deleted). To know more visit "
                     "https://aka.ms/sbResourceMgrExceptions.",
                     host ? host : "localhost", lk->address.entity);
            LOG_INFO("conn %llu: link '%s': %s", (unsigned long long)c->id, pn_link_name(lk->pn), desc);
            pn_condition_t *cond = pn_link_condition(lk->pn);
            pn_condition_set_name(cond, sb_status_condition(SB_ERR_NOT_FOUND));
            pn_condition_set_description(cond, desc);
            pn_link_close(lk->pn);
            lk->closed = true;
        } else if (st == SB_OK) {
            lk->entity = *e;
            if (lk->role == LINK_ENTITY_OUT && lk->parked)
                amqp_link_pump(lk); /* it may receive now (status), or find lapsed work */
        }
        amqp_conn_pump(c);
    }
    amqp_conn_unref(c);
    if (--srv->refreshing == 0 && srv->refresh_again) {
        srv->refresh_again = false;
        refresh_all(srv);
    }
}

static void refresh_all(amqp_server *srv)
{
    /* count first: a look-up may answer at once (a broken store) */
    srv->refreshing++;
    for (amqp_conn *c = srv->conns; c; c = c->next)
        for (amqp_link *lk = c->links; c->wsi && lk; lk = lk->next)
            if (has_entity(lk)) {
                srv->refreshing++;
                amqp_conn_ref(c);
                store_lookup_queue(srv->store, lk->address.entity, on_refreshed, lk);
            }
    if (--srv->refreshing == 0 && srv->refresh_again) {
        srv->refresh_again = false;
        refresh_all(srv);
    }
}

void amqp_server_refresh_entities(amqp_server *srv)
{
    if (srv->refreshing) {
        srv->refresh_again = true;
        return;
    }
    refresh_all(srv);
}
