/* See http_api.h. */
#include "http_api.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

#include "amqp_internal.h"

/* Response bodies here are small and fixed; anything bigger is a bug. */
#define HTTP_BODY_MAX 1024

static int respond(struct lws *wsi, unsigned int status, const char *content_type, const char *body)
{
    unsigned char buf[LWS_PRE + HTTP_BODY_MAX + 512], *start = buf + LWS_PRE, *p = start,
                                                     *end = buf + sizeof buf - 1;
    size_t len = strlen(body);
    if (len > HTTP_BODY_MAX)
        return -1;
    if (lws_add_http_common_headers(wsi, status, content_type, (lws_filepos_t)len, &p, end) ||
        lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    memcpy(buf + LWS_PRE, body, len);
    if (lws_write(wsi, buf + LWS_PRE, len, LWS_WRITE_HTTP_FINAL) != (int)len)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int on_health(struct lws *wsi, const http_api_state *st)
{
    bool ok = st && st->amqp_listening && st->srv && store_healthy(st->srv->store);
    if (ok)
        return respond(wsi, 200, "application/json", "{\"status\":\"healthy\",\"message\":\"Service is healthy.\"}");
    return respond(wsi, 503, "application/json",
                   "{\"status\":\"unhealthy\",\"message\":\"Service not available. Please try after some time.\"}");
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    (void)user;
    (void)len;
    switch (reason) {
    case LWS_CALLBACK_HTTP: {
        const char *path = in;
        if (!strcmp(path, "/health") || !strcmp(path, "/health/"))
            return on_health(wsi, lws_vhost_user(lws_get_vhost(wsi)));
        char body[256];
        snprintf(body, sizeof body, "{\"error\":\"no such resource: %.180s\"}", path);
        return respond(wsi, 404, "application/json", body);
    }
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols http_protocol = {"http", http_callback, 0, 0, 0, NULL, 0};

const struct lws_protocols *http_api_protocol(void) { return &http_protocol; }
