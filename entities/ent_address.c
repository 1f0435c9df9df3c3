/* See ent_address.h. */
#include "ent_address.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Drops `scheme://authority`, then a leading '/', then URL-decodes. */
static int normalize(const char *in, char *out, size_t outlen)
{
    const char *p = strstr(in, "://");
    if (p) {
        p += 3;
        p = strchr(p, '/');
        if (!p)
            p = "";
    } else {
        p = in;
    }
    while (*p == '/')
        p++;
    size_t o = 0;
    for (; *p && *p != '?'; p++) {
        char c = *p;
        if (c == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
            c = (char)(hexval(p[1]) * 16 + hexval(p[2]));
            p += 2;
        }
        if (o + 1 >= outlen)
            return -1;
        out[o++] = c;
    }
    while (o && out[o - 1] == '/')
        o--;
    out[o] = 0;
    return 0;
}

/* Removes a trailing "/<suffix>" (case-insensitive) from path; true if it was there. */
static bool strip_suffix(char *path, const char *suffix)
{
    size_t n = strlen(path), s = strlen(suffix);
    if (n < s + 1 || path[n - s - 1] != '/' || strcasecmp(path + n - s, suffix))
        return false;
    path[n - s - 1] = 0;
    return true;
}

int ent_address_parse(const char *address, ent_address *out)
{
    memset(out, 0, sizeof *out);
    if (!address || normalize(address, out->entity, sizeof out->entity))
        return -1;
    if (!strcasecmp(out->entity, "$cbs")) {
        out->kind = ENT_NODE_CBS;
        return 0;
    }
    if (strip_suffix(out->entity, "$management"))
        out->kind = ENT_NODE_MANAGEMENT;
    if (strip_suffix(out->entity, "$DeadLetterQueue"))
        out->dead_letter = true;
    return out->entity[0] ? 0 : -1;
}

int ent_audience_path(const char *audience, char *out, size_t outlen)
{
    if (!audience || normalize(audience, out, outlen))
        return -1;
    strip_suffix(out, "$management");
    return 0;
}

bool ent_path_authorized(const char *granted, const char *path)
{
    size_t n = strlen(granted);
    if (n == 0)
        return true;
    return strncasecmp(granted, path, n) == 0 && (path[n] == 0 || path[n] == '/');
}
