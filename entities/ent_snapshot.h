/* A namespace's reset and snapshots (the HTTP plane's
 * $sbemu/namespaces/{ns}/reset and .../snapshots/{name}): which names a
 * snapshot may have, and which namespace a request may name. sql/'s
 * migration 011 keeps the snapshots; what a restore keeps and drops is said
 * there. */
#ifndef ENT_SNAPSHOT_H
#define ENT_SNAPSHOT_H

#include <stddef.h>

#include "ent_status.h"

/* A snapshot's name: 1 to 64 ASCII letters, digits, '.', '_' and '-',
 * starting with a letter or a digit, so that it is one URL path segment as
 * written and never one of the emulator's own ('$declared', what a reset
 * restores). Names are compared as given (case matters). */
#define ENT_SNAPSHOT_NAME_MAX 64
#define ENT_SNAPSHOT_NAME_SIZE (ENT_SNAPSHOT_NAME_MAX + 1)
/* The name that always means the default namespace, whatever its own name. */
#define ENT_NAMESPACE_DEFAULT_ALIAS "default"

/* SB_OK, or SB_ERR_ARGUMENT with why naming the rule the name breaks. */
sb_status ent_snapshot_name_check(const char *name, char *why, size_t whylen);

/* Whether a request's namespace (NULL or "": it named none) is the default
 * namespace, the only one so far: its own name (own_name: Config.json's;
 * NULL or "" is ENT_CONFIG_DEFAULT_NAMESPACE's "sbemulatorns"), "sbemulatorns"
 * or "default", in any letter case as Service Bus namespace names are.
 * SB_OK, or SB_ERR_NOT_FOUND with why. */
sb_status ent_namespace_check(const char *name, const char *own_name, char *why, size_t whylen);

#endif
