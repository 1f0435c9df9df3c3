/* What a front door shows of the clients connected to it, for the
 * dashboard (amqp10/http/http_dash_peers.c): its connections and their
 * links, and which receiver holds a message's lock. The wire fills these
 * (amqp10/amqp_peers.c) through a source the emulator hands to the HTTP
 * plane, as it hands it the wire's figures: the plane never includes the
 * wire's headers. Read only when someone looks; nothing is kept up to date
 * for it. Every function runs on the loop's thread. */
#ifndef BROKER_PEERS_H
#define BROKER_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker_figures.h"
#include "ent_address.h"
#include "ent_session.h"

/* Names a client chose (a link's name, its container id) are kept this long at most. */
#define BROKER_PEER_NAME_MAX 128
/* A peer's address ("203.0.113.5" or an IPv6 one). */
#define BROKER_PEER_ADDRESS_MAX 64

typedef struct broker_peer_link {
    char name[BROKER_PEER_NAME_MAX + 1];
    broker_link_kind kind;
    char address[ENT_ENTITY_PATH_MAX + 64]; /* what it attached to ($cbs, queue/$DeadLetterQueue, ...) */
    bool open;                              /* attached and answered */
    uint32_t credit;                        /* the client's credit on a receiver */
    uint32_t unsettled;                     /* deliveries not settled yet */
    bool session_held;                      /* a session receiver holding session_id's lock */
    char session_id[ENT_SESSION_ID_SIZE];
    int64_t session_until_ms;               /* on the emulator's clock */
} broker_peer_link;

/* Ownership: a broker_peer_list owns its peers and their links. */
typedef struct broker_peer {
    uint64_t id;                                /* the connection's number in this process's log */
    char remote[BROKER_PEER_ADDRESS_MAX];       /* "" once the socket is gone */
    char container[BROKER_PEER_NAME_MAX + 1];   /* the client's container-id */
    char hostname[BROKER_PEER_NAME_MAX + 1];    /* the hostname its open named */
    bool websocket;
    broker_peer_link *links;
    size_t nlinks;
} broker_peer;

typedef struct broker_peer_list {
    broker_peer *v;
    size_t n;
} broker_peer_list;

/* Frees what a snapshot filled (the list itself is the caller's). */
void broker_peer_list_free(broker_peer_list *l);

/* Where the HTTP plane reads them; set by the emulator, NULL: no wire. */
typedef struct broker_peers_source {
    void *ctx;
    /* Every connection whose AMQP open came, with its links. 0, or -1 (out of memory: nothing filled). */
    int (*snapshot)(void *ctx, broker_peer_list *out);
    /* Which receiver of this process holds the lock token (RFC 4122 order):
     * 0 with its connection's id and its link's name, or -1 when none does
     * (a lock taken through $management, by another emulator, or lapsed). */
    int (*lock_holder)(void *ctx, const uint8_t token[16], uint64_t *conn_id, char *link, size_t linklen);
} broker_peers_source;

#endif
