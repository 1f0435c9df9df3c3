/* See broker_peers.h. */
#include "broker_peers.h"

#include <string.h>

#include "ent_alloc.h"

void broker_peer_list_free(broker_peer_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        ent_free(l->v[i].links);
    ent_free(l->v);
    memset(l, 0, sizeof *l);
}
