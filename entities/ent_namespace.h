/* Namespaces: what a namespace may be called, which one a client is in, and
 * the namespaces an emulator knows.
 *
 * A client is in one namespace, chosen the two ways Service Bus users have:
 *  - by host name, Service Bus's own model: a client that reaches
 *    `<name>.localhost` (the AMQP open's hostname, the $cbs audience's host,
 *    the HTTP Host header) is in namespace <name>, whatever its key's name;
 *  - by SAS key name, which needs no host name: `SharedAccessKeyName=<name>`
 *    puts it in namespace <name>.
 * The default namespace (row 1 of the namespaces table, migration 013) is
 * what a client is in otherwise: plain `localhost` or an IP, with the key name
 * RootManageSharedAccessKey or the emulator's --sas-key-name. It answers to
 * its own name (Config.json's), to "sbemulatorns" and to "default", so no
 * setup made before namespaces existed moves.
 *
 * Pure C, no I/O: the broker holds an ent_namespaces filled from the store. */
#ifndef ENT_NAMESPACE_H
#define ENT_NAMESPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"

/* A namespace's name: 1 to 50 ASCII letters, digits, '-' and '_', starting
 * with a letter or a digit (Service Bus allows 6 to 50 letters, digits and
 * '-'; shorter names and '_' are taken so that any simple key name works), so
 * that it is one DNS label of `<name>.localhost` and one URL path segment.
 * Names match in any letter case. */
#define ENT_NAMESPACE_NAME_MAX 50
/* Room for a stored name: the default namespace keeps whatever Config.json
 * calls it (ENT_CONFIG_NAMESPACE_NAME_SIZE). */
#define ENT_NAMESPACE_NAME_SIZE 64
/* The default namespace's id (the namespaces table's row 1). */
#define ENT_NAMESPACE_DEFAULT_ID 1
/* The name that always means the default namespace, whatever its own name. */
#define ENT_NAMESPACE_DEFAULT_ALIAS "default"
/* The default namespace's name when Config.json names none (the official emulator's). */
#define ENT_NAMESPACE_DEFAULT_NAME "sbemulatorns"
/* The key name of the default namespace, as every emulator connection string has it. */
#define ENT_NAMESPACE_ROOT_KEY_NAME "RootManageSharedAccessKey"
/* The domain whose labels name namespaces: `<name>.localhost`. */
#define ENT_NAMESPACE_HOST_DOMAIN "localhost"

/* A namespace's own SAS keys (namespace_keys, migration 014): at most 12, as
 * Service Bus's shared access rules per namespace; a key name is 1 to 256 of
 * ASCII letters, digits, '.', '_' and '-' (what a connection string's
 * SharedAccessKeyName carries unquoted), a key 1 to 256 printable ASCII
 * characters but ';' (it ends a connection string's field). */
#define ENT_NAMESPACE_KEYS_MAX 12
#define ENT_NAMESPACE_KEY_NAME_MAX 256
#define ENT_NAMESPACE_KEY_MAX 256
/* The shortest AutoDeleteOnIdle a namespace may have (1 minute: a test suite's
 * namespace may go soon after it; Service Bus's entities take 5 minutes). */
#define ENT_NAMESPACE_IDLE_MIN_MS 60000

/* SB_OK, or SB_ERR_ARGUMENT with why naming the rule the name breaks. */
sb_status ent_namespace_name_check(const char *name, char *why, size_t whylen);
/* The same for one key of a namespace. */
sb_status ent_namespace_key_check(const char *key_name, const char *key, char *why, size_t whylen);

/* Whether name is the default namespace: NULL, "", "default", "sbemulatorns"
 * or own_name (the default's own name; NULL or "": "sbemulatorns"), in any
 * letter case. */
bool ent_namespace_is_default(const char *name, const char *own_name);

/* The namespace a host names: for "<label>.localhost" (any letter case, with
 * an optional trailing '.' and ":port"), 1 with the label in out; 0 when the
 * host names none (NULL, "", "localhost", an IP, any other host); -1 with why
 * when the label breaks ent_namespace_name_check (or is longer than out). */
int ent_namespace_of_host(const char *host, char *out, size_t outlen, char *why, size_t whylen);

/* The same for the host of a CBS audience or URL ("sb://<host>[:port]/path",
 * "https://<host>/..."); 0 when it has no host part. */
int ent_namespace_of_audience(const char *audience, char *out, size_t outlen, char *why, size_t whylen);

/* Which namespace a client is in. host_ns: what its host names (NULL or "":
 * none); key_name: its SAS token's key name (NULL or "": none);
 * default_key_name: the emulator's --sas-key-name; own_name: the default
 * namespace's own name. A host that names a namespace decides, whatever the
 * key name; else a key name other than RootManageSharedAccessKey and the
 * emulator's names one. out: "" for the default namespace, else the
 * namespace's name as given. SB_OK, or SB_ERR_UNAUTHORIZED with why when the
 * key name that would name the namespace is not a namespace name. */
sb_status ent_namespace_choose(const char *host_ns, const char *key_name, const char *default_key_name,
                               const char *own_name, char *out, size_t outlen, char *why, size_t whylen);

/* ---- the namespaces an emulator knows ---- */

/* One namespace, as the store read it. */
typedef struct ent_namespace {
    int32_t id;
    char name[ENT_NAMESPACE_NAME_SIZE];
    int64_t clock_offset_ms; /* its clock's offset as the store read it (ent_clock.h holds the one in force) */
    int64_t auto_delete_on_idle_ms; /* 0: never (its clients' activity need not be stamped) */
} ent_namespace;

/* One key of a namespace, as the store read it. */
typedef struct ent_namespace_key {
    int32_t ns;
    char name[ENT_NAMESPACE_KEY_NAME_MAX + 1];
    char key[ENT_NAMESPACE_KEY_MAX + 1];
} ent_namespace_key;

/* Owned by its creator; holds copies, sorted by id. */
typedef struct ent_namespaces ent_namespaces;

ent_namespaces *ent_namespaces_new(void);
void ent_namespaces_free(ent_namespaces *r);
/* Replaces everything with these n (copied). -1 when out of memory (the old
 * content stays). */
int ent_namespaces_replace(ent_namespaces *r, const ent_namespace *list, size_t n);
/* Adds one (a namespace made a moment ago, before the next replace brings
 * it); one of that id is replaced. -1 when out of memory. */
int ent_namespaces_add(ent_namespaces *r, int32_t id, const char *name);
size_t ent_namespaces_count(const ent_namespaces *r);
/* Namespace i, 0 <= i < count, in id order; NULL past the end. */
const ent_namespace *ent_namespaces_at(const ent_namespaces *r, size_t i);
/* NULL when unknown. Pointers stay valid until the next replace or add. */
const ent_namespace *ent_namespaces_get(const ent_namespaces *r, int32_t id);
/* By name in any letter case; the default namespace also by
 * ent_namespace_is_default's names (own_name: its own). */
const ent_namespace *ent_namespaces_find(const ent_namespaces *r, const char *name, const char *own_name);

/* Replaces every namespace's keys with these n (copied; the store reads them
 * with the namespaces). -1 when out of memory (the old ones stay). */
int ent_namespaces_set_keys(ent_namespaces *r, const ent_namespace_key *keys, size_t n);
/* How many keys of its own namespace ns has. */
size_t ent_namespaces_key_count(const ent_namespaces *r, int32_t ns);

/* The key a token of key name key_name for namespace ns must be signed
 * with: one of the namespace's own when it has any (key names match as
 * written, as Service Bus's do), else the emulator's (--sas-key) whatever the
 * key name (the default namespace's, and one made on first use until it is
 * given keys). NULL with why when the namespace has keys and none of that
 * name: a token for another namespace, or a key it no longer has. ns 0 (not
 * known yet) takes the emulator's. */
const char *ent_namespace_signing_key(const ent_namespaces *r, int32_t ns, const char *ns_name, const char *key_name,
                                      const char *emulator_key, char *why, size_t whylen);

#endif
