/* What the wire counts about itself for GET /metrics (the shape is the
 * broker's broker_door_figures, which the HTTP plane reads; the counts live
 * in the server): AMQP connections and links open, $management requests by
 * operation, $cbs put-tokens, and requests refused by status. Each is an add
 * where the event already happens: an open, a close, a request, a refusal. */
#include <string.h>

#include "amqp_internal.h"

/* The prefix every $management operation carries; its label is the rest. */
#define MGMT_OPERATION_PREFIX "com.microsoft:"

void amqp_figures_init(amqp_server *srv, const char **names, size_t n)
{
    broker_door_figures *f = &srv->figures;
    f->door = "amqp";
    f->nops = n < BROKER_DOOR_OPS_MAX ? n : BROKER_DOOR_OPS_MAX;
    memcpy(f->op_names, names, f->nops * sizeof *names);
    for (size_t i = 0; i < f->nops; i++)
        if (!strncmp(f->op_names[i], MGMT_OPERATION_PREFIX, strlen(MGMT_OPERATION_PREFIX)))
            f->op_names[i] += strlen(MGMT_OPERATION_PREFIX);
}

const broker_door_figures *amqp_server_figures(const amqp_server *srv) { return &srv->figures; }

broker_link_kind amqp_link_kind_of(amqp_link_role role)
{
    switch (role) {
    case LINK_CBS_REQUESTS:
    case LINK_CBS_REPLIES: return BROKER_LINK_CBS;
    case LINK_MGMT_REQUESTS:
    case LINK_MGMT_REPLIES: return BROKER_LINK_MANAGEMENT;
    case LINK_ENTITY_IN: return BROKER_LINK_SENDER;
    case LINK_ENTITY_OUT: return BROKER_LINK_RECEIVER;
    case LINK_COORDINATOR: return BROKER_LINK_COORDINATOR;
    }
    return BROKER_LINK_SENDER;
}

void amqp_link_count(amqp_link *lk)
{
    if (lk->counted)
        return;
    lk->counted = true;
    lk->conn->srv->figures.links_open[amqp_link_kind_of(lk->role)]++;
}

void amqp_link_uncount(amqp_link *lk)
{
    if (!lk->counted)
        return;
    lk->counted = false;
    lk->conn->srv->figures.links_open[amqp_link_kind_of(lk->role)]--;
}

void amqp_count_refusal(amqp_server *srv, sb_status st) { broker_door_refused(&srv->figures, st); }
