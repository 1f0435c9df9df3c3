/* See store_arrays.h. */
#include "store_arrays.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ent_alloc.h"

char *store_int8_array_text(const int64_t *v, size_t n)
{
    size_t cap = 3 + n * 21;
    char *s = ent_malloc(cap);
    if (!s)
        return NULL;
    size_t o = 0;
    s[o++] = '{';
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(s + o, cap - o, "%s%" PRId64, i ? "," : "", v[i]);
    s[o++] = '}';
    s[o] = 0;
    return s;
}

char *store_uuid_array_text(const uint8_t (*v)[16], size_t n)
{
    size_t cap = 3 + n * 37;
    char *s = ent_malloc(cap);
    if (!s)
        return NULL;
    size_t o = 0;
    s[o++] = '{';
    for (size_t i = 0; i < n; i++) {
        const uint8_t *g = v[i];
        o += (size_t)snprintf(s + o, cap - o,
                              "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", i ? "," : "",
                              g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13],
                              g[14], g[15]);
    }
    s[o++] = '}';
    s[o] = 0;
    return s;
}

char *store_text_array_text(const char *const *v, size_t n)
{
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += v[i] ? 4 + 2 * strlen(v[i]) : 5; /* a comma, quoted, every character escaped at most; or NULL */
    char *s = ent_malloc(cap);
    if (!s)
        return NULL;
    size_t o = 0;
    s[o++] = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            s[o++] = ',';
        if (!v[i]) {
            memcpy(s + o, "NULL", 4);
            o += 4;
            continue;
        }
        s[o++] = '"';
        for (const char *c = v[i]; *c; c++) {
            if (*c == '"' || *c == '\\')
                s[o++] = '\\';
            s[o++] = *c;
        }
        s[o++] = '"';
    }
    s[o++] = '}';
    s[o] = 0;
    return s;
}
