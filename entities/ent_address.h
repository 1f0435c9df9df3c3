/* Link addresses as the SDKs send them: `q` (JS, Java), `/q` (.NET) and
 * `amqps://host[:port]/q` (Python), plus the `$DeadLetterQueue` subqueue and
 * the `$management` and `$cbs` nodes (wire-protocol §3). */
#ifndef ENT_ADDRESS_H
#define ENT_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "ent_lengths.h"

typedef enum ent_node_kind {
    ENT_NODE_ENTITY,     /* a queue, topic or subscription (or its subqueue) */
    ENT_NODE_MANAGEMENT, /* <entity>/$management */
    ENT_NODE_CBS,        /* $cbs */
} ent_node_kind;

typedef struct ent_address {
    ent_node_kind kind;
    char entity[ENT_ENTITY_PATH_MAX + 1]; /* URL-decoded, original case */
    bool dead_letter;              /* .../$DeadLetterQueue */
} ent_address;

/* Returns 0, or -1 when the address is empty, too long or malformed. */
int ent_address_parse(const char *address, ent_address *out);

/* The entity path named by a CBS audience (`sb://host/q`, `amqps://host:5671/q/$management`);
 * "" for the namespace root. Returns 0 or -1. */
int ent_audience_path(const char *audience, char *out, size_t outlen);

/* True when a token for audience path `granted` covers `path` (a prefix on a
 * '/' boundary, case-insensitive; the root covers everything). */
bool ent_path_authorized(const char *granted, const char *path);

#endif
