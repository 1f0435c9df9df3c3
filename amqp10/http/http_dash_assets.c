/* The dashboard's page and assets, from the table the build made of
 * amqp10/http/dashboard/ (http_dash_assets.h): GET / is index.html, GET
 * /$sbemu/dashboard/<name> the others. They hold no secret (the page asks
 * for the key), so no token is asked for them. */
#include <string.h>

#include "ent_alloc.h"
#include "http_dash.h"
#include "http_dash_assets.h"

static const struct {
    const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".svg", "image/svg+xml"},
};

static const char *type_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && !strcmp(name + n - e, types[i].ext))
            return types[i].type;
    }
    return "application/octet-stream";
}

bool http_dash_asset(http_req *r, const char *name)
{
    if (!*name)
        name = "index.html";
    for (const http_dash_file *a = http_dash_files; a->name; a++) {
        if (strcmp(a->name, name))
            continue;
        char *copy = ent_malloc(a->len ? a->len : 1);
        if (copy)
            memcpy(copy, a->bytes, a->len);
        http_respond_text(r, SB_OK, type_of(a->name), copy, a->len);
        return true;
    }
    return false;
}
