/* See ent_namespace.h. The registry is a small array sorted by id: an
 * emulator knows a handful of namespaces, changed rarely and replaced whole. */
#include "ent_namespace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

sb_status ent_namespace_name_check(const char *name, char *why, size_t whylen)
{
    if (!name || !*name)
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen, "A namespace needs a name.");
    size_t n = strlen(name);
    if (n > ENT_NAMESPACE_NAME_MAX)
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                               "The namespace name '%.64s...' is %zu characters long; the most is %d.", name, n,
                               ENT_NAMESPACE_NAME_MAX);
    for (size_t i = 0; i < n; i++)
        if (!name_char(name[i]))
            return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                                   "The namespace name '%s' holds '%c' at position %zu: a namespace name is made of "
                                   "letters, digits, '-' and '_'.",
                                   name, name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?', i + 1);
    if (name[0] == '-' || name[0] == '_')
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                               "The namespace name '%s' must start with a letter or a digit.", name);
    return SB_OK;
}

bool ent_namespace_is_default(const char *name, const char *own_name)
{
    if (!own_name || !*own_name)
        own_name = ENT_NAMESPACE_DEFAULT_NAME;
    return !name || !*name || !strcasecmp(name, ENT_NAMESPACE_DEFAULT_ALIAS) ||
           !strcasecmp(name, ENT_NAMESPACE_DEFAULT_NAME) || !strcasecmp(name, own_name);
}

int ent_namespace_of_host(const char *host, char *out, size_t outlen, char *why, size_t whylen)
{
    if (outlen)
        out[0] = 0;
    if (!host || !*host)
        return 0;
    /* the host without ":port" (an IPv6 literal is bracketed, and names none) */
    size_t n = strcspn(host, ":");
    if (n && host[n - 1] == '.')
        n--;
    static const char domain[] = "." ENT_NAMESPACE_HOST_DOMAIN;
    size_t d = sizeof domain - 1;
    if (n <= d || strncasecmp(host + n - d, domain, d))
        return 0;
    size_t label = n - d;
    if (label >= outlen || label > ENT_NAMESPACE_NAME_MAX) {
        ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                        "The host '%.*s' names a namespace of %zu characters; a namespace name has at most %d.",
                        (int)(n > 128 ? 128 : n), host, label, ENT_NAMESPACE_NAME_MAX);
        return -1;
    }
    memcpy(out, host, label);
    out[label] = 0;
    char check[256];
    if (ent_namespace_name_check(out, check, sizeof check) != SB_OK) {
        ent_fail_status(SB_ERR_ARGUMENT, why, whylen, "The host '%.*s' names no namespace: %s",
                        (int)(n > 128 ? 128 : n), host, check);
        out[0] = 0;
        return -1;
    }
    return 1;
}

int ent_namespace_of_audience(const char *audience, char *out, size_t outlen, char *why, size_t whylen)
{
    if (outlen)
        out[0] = 0;
    const char *p = audience ? strstr(audience, "://") : NULL;
    if (!p)
        return 0;
    p += 3;
    char host[256];
    size_t n = strcspn(p, "/?#");
    if (n >= sizeof host)
        n = sizeof host - 1;
    memcpy(host, p, n);
    host[n] = 0;
    return ent_namespace_of_host(host, out, outlen, why, whylen);
}

sb_status ent_namespace_choose(const char *host_ns, const char *key_name, const char *default_key_name,
                               const char *own_name, char *out, size_t outlen, char *why, size_t whylen)
{
    const char *name = NULL;
    if (host_ns && *host_ns)
        name = host_ns;
    else if (key_name && *key_name && strcmp(key_name, ENT_NAMESPACE_ROOT_KEY_NAME) &&
             !(default_key_name && !strcmp(key_name, default_key_name))) {
        char check[256];
        if (ent_namespace_name_check(key_name, check, sizeof check) != SB_OK)
            return ent_fail_status(SB_ERR_UNAUTHORIZED, why, whylen,
                                   "the SharedAccessKeyName '%.64s' names a namespace (any key name other than %s "
                                   "does), and %s",
                                   key_name, ENT_NAMESPACE_ROOT_KEY_NAME, check);
        name = key_name;
    }
    if (ent_namespace_is_default(name, own_name))
        name = "";
    snprintf(out, outlen, "%s", name);
    return SB_OK;
}

sb_status ent_namespace_key_check(const char *key_name, const char *key, char *why, size_t whylen)
{
    size_t n = key_name ? strlen(key_name) : 0;
    if (!n || n > ENT_NAMESPACE_KEY_NAME_MAX)
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen, "A key name is 1 to %d characters long, not %zu.",
                               ENT_NAMESPACE_KEY_NAME_MAX, n);
    for (size_t i = 0; i < n; i++) {
        char c = key_name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                                   "The key name '%.64s' holds '%c' at position %zu: a key name is made of letters, "
                                   "digits, '.', '_' and '-'.",
                                   key_name, c >= 0x20 && c < 0x7f ? c : '?', i + 1);
    }
    n = key ? strlen(key) : 0;
    if (!n || n > ENT_NAMESPACE_KEY_MAX)
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen, "The key of '%.64s' is 1 to %d characters long, not %zu.",
                               key_name, ENT_NAMESPACE_KEY_MAX, n);
    for (size_t i = 0; i < n; i++)
        if (key[i] < 0x21 || key[i] > 0x7e || key[i] == ';')
            return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                                   "The key of '%.64s' holds a character it may not at position %zu: a key is "
                                   "printable ASCII without spaces or ';'.",
                                   key_name, i + 1);
    return SB_OK;
}

/* ---- the registry ---- */

struct ent_namespaces {
    ent_namespace *items; /* sorted by id */
    size_t n, cap;
    ent_namespace_key *keys; /* sorted by namespace */
    size_t nkeys;
};

ent_namespaces *ent_namespaces_new(void) { return ent_calloc(1, sizeof(ent_namespaces)); }

void ent_namespaces_free(ent_namespaces *r)
{
    if (!r)
        return;
    ent_free(r->items);
    ent_free(r->keys);
    ent_free(r);
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = ((const ent_namespace *)a)->id, y = ((const ent_namespace *)b)->id;
    return x < y ? -1 : x > y;
}

int ent_namespaces_replace(ent_namespaces *r, const ent_namespace *list, size_t n)
{
    ent_namespace *items = ent_malloc((n ? n : 1) * sizeof *items);
    if (!items)
        return -1;
    if (n)
        memcpy(items, list, n * sizeof *items);
    for (size_t i = 0; i < n; i++)
        items[i].name[sizeof items[i].name - 1] = 0;
    qsort(items, n, sizeof *items, cmp_id);
    ent_free(r->items);
    r->items = items;
    r->cap = n ? n : 1;
    r->n = n;
    return 0;
}

int ent_namespaces_add(ent_namespaces *r, int32_t id, const char *name)
{
    ent_namespace *at = (ent_namespace *)ent_namespaces_get(r, id);
    if (!at) {
        if (r->n == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 4;
            ent_namespace *grown = ent_realloc(r->items, cap * sizeof *grown);
            if (!grown)
                return -1;
            r->items = grown;
            r->cap = cap;
        }
        size_t i = r->n;
        while (i > 0 && r->items[i - 1].id > id) {
            r->items[i] = r->items[i - 1];
            i--;
        }
        at = &r->items[i];
        r->n++;
    }
    memset(at, 0, sizeof *at);
    at->id = id;
    snprintf(at->name, sizeof at->name, "%s", name ? name : "");
    return 0;
}

size_t ent_namespaces_count(const ent_namespaces *r) { return r->n; }

const ent_namespace *ent_namespaces_at(const ent_namespaces *r, size_t i) { return i < r->n ? &r->items[i] : NULL; }

const ent_namespace *ent_namespaces_get(const ent_namespaces *r, int32_t id)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->items[mid].id == id)
            return &r->items[mid];
        if (r->items[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const ent_namespace *ent_namespaces_find(const ent_namespaces *r, const char *name, const char *own_name)
{
    if (ent_namespace_is_default(name, own_name))
        return ent_namespaces_get(r, ENT_NAMESPACE_DEFAULT_ID);
    for (size_t i = 0; i < r->n; i++)
        if (!strcasecmp(r->items[i].name, name))
            return &r->items[i];
    return NULL;
}

static int cmp_key(const void *a, const void *b)
{
    const ent_namespace_key *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

int ent_namespaces_set_keys(ent_namespaces *r, const ent_namespace_key *keys, size_t n)
{
    ent_namespace_key *copy = ent_malloc((n ? n : 1) * sizeof *copy);
    if (!copy)
        return -1;
    if (n)
        memcpy(copy, keys, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, cmp_key);
    ent_free(r->keys);
    r->keys = copy;
    r->nkeys = n;
    return 0;
}

/* The first key of ns in r->keys, and how many it has. */
static const ent_namespace_key *keys_of(const ent_namespaces *r, int32_t ns, size_t *n)
{
    size_t lo = 0, hi = r->nkeys;
    while (lo < hi) { /* the first slot with ns >= the one asked */
        size_t mid = lo + (hi - lo) / 2;
        if (r->keys[mid].ns < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < r->nkeys && r->keys[end].ns == ns)
        end++;
    *n = end - lo;
    return *n ? &r->keys[lo] : NULL;
}

size_t ent_namespaces_key_count(const ent_namespaces *r, int32_t ns)
{
    size_t n;
    keys_of(r, ns, &n);
    return n;
}

const char *ent_namespace_signing_key(const ent_namespaces *r, int32_t ns, const char *ns_name, const char *key_name,
                                      const char *emulator_key, char *why, size_t whylen)
{
    size_t n = 0;
    const ent_namespace_key *k = r && ns > 0 ? keys_of(r, ns, &n) : NULL;
    if (!n)
        return emulator_key;
    for (size_t i = 0; i < n; i++)
        if (key_name && !strcmp(k[i].name, key_name))
            return k[i].key;
    ent_fail_status(SB_ERR_UNAUTHORIZED, why, whylen,
                    "the namespace '%s' has keys of its own, and '%.64s' is not one of them (a token for another "
                    "namespace, or a key it no longer has)",
                    ns_name && *ns_name ? ns_name : "?", key_name ? key_name : "");
    return NULL;
}
