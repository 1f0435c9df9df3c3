/* A namespace's reset and snapshots (the HTTP plane's
 * $sbemu/namespaces/{ns}/reset and .../snapshots/{name}): which names a
 * snapshot may have (which namespace a request may name is
 * ent_namespace.h's). sql/'s migrations 011 and 013 keep the snapshots; what
 * a restore keeps and drops is said there. */
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

/* SB_OK, or SB_ERR_ARGUMENT with why naming the rule the name breaks. */
sb_status ent_snapshot_name_check(const char *name, char *why, size_t whylen);

#endif
