/* See http_api.h. */
#include "http_api.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

#include "amqp_internal.h"
#include "ent_clock.h"
#include "ent_duration.h"
#include <stdlib.h>
#include <time.h>

/* Response bodies here are small and fixed; anything bigger is a bug. */
#define HTTP_BODY_MAX 1024

static int respond(struct lws *wsi, sb_status st, const char *content_type, const char *body)
{
    unsigned int status = (unsigned int)sb_status_http_code(st);
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

static int on_health(struct lws *wsi, const amqp_listener *st)
{
    bool ok = st && st->all_listening && st->srv && store_healthy(st->srv->store);
    if (ok)
        return respond(wsi, SB_OK, "application/json", "{\"status\":\"healthy\",\"message\":\"Service is healthy.\"}");
    return respond(wsi, SB_ERR_SERVER_BUSY, "application/json",
                   "{\"status\":\"unhealthy\",\"message\":\"Service not available. Please try after some time.\"}");
}

/* GET /$sbemu/clock and POST /$sbemu/clock/advance?by=<ISO-8601 duration>:
 * the emulator's clock, movable so that tests need not wait for TTLs, locks,
 * schedules and idle deletion. The clock is one per namespace: an advance is
 * answered once the database holds it (and has told the other emulators). */
static int respond_clock(struct lws *wsi)
{
    char body[HTTP_BODY_MAX], iso[64];
    int64_t now = ent_clock_now_ms();
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(body, sizeof body, "{\"now\":\"%s.%03dZ\",\"offsetMs\":%lld}", iso, (int)(now % 1000),
             (long long)ent_clock_offset_ms());
    return respond(wsi, SB_OK, "application/json", body);
}

/* An advance waiting for its commit. Shared by the request (through its
 * http_pss) and the store callback; whichever ends last frees it. */
typedef struct clock_wait {
    struct lws *wsi;
    bool alive; /* the HTTP connection is still open */
    bool done;  /* the store answered */
} clock_wait;

typedef struct http_pss {
    clock_wait *wait;
} http_pss;

static void on_clock_published(void *ctx, sb_status st)
{
    clock_wait *w = ctx;
    (void)st; /* the local clock moved either way; a lost publish only affects other replicas */
    w->done = true;
    if (!w->alive)
        free(w);
    else
        lws_callback_on_writable(w->wsi);
}

static int on_clock(struct lws *wsi, http_pss *pss, const char *path, const amqp_listener *st)
{
    char by[128], err[256];
    if (strcmp(path, "/$sbemu/clock/advance"))
        return respond_clock(wsi);
    int64_t ms;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) <= 0)
        return respond(wsi, SB_ERR_METHOD_NOT_ALLOWED, "application/json", "{\"error\":\"use POST to advance the clock\"}");
    const char *val = lws_get_urlarg_by_name(wsi, "by=", by, sizeof by); /* points past "by=" in by */
    if (!val || ent_duration_parse(val, &ms, err, sizeof err) || ms == ENT_DURATION_UNLIMITED ||
        ent_clock_advance(ms))
        return respond(wsi, SB_ERR_ARGUMENT, "application/json",
                       "{\"error\":\"query parameter 'by' must be an ISO-8601 duration such as PT6M\"}");
    amqp_sweep_now(st->srv);
    amqp_server_wake_all(st->srv);
    clock_wait *w = calloc(1, sizeof *w);
    if (!w)
        return respond_clock(wsi);
    w->wsi = wsi;
    w->alive = true;
    pss->wait = w;
    store_clock_publish(st->srv->store, ent_clock_offset_ms(), on_clock_published, w);
    return 0; /* answered from LWS_CALLBACK_HTTP_WRITEABLE */
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
        if (!strcmp(path, "/$sbemu/clock") || !strcmp(path, "/$sbemu/clock/advance"))
            return on_clock(wsi, user, path, lws_vhost_user(lws_get_vhost(wsi)));
        char body[256];
        snprintf(body, sizeof body, "{\"error\":\"no such resource: %.180s\"}", path);
        return respond(wsi, SB_ERR_NOT_FOUND, "application/json", body);
    }
    case LWS_CALLBACK_HTTP_BODY:
        return 0; /* the clock takes its arguments from the query; a body is ignored */
    case LWS_CALLBACK_HTTP_BODY_COMPLETION: {
        /* lws holds WRITEABLE back while a POST body (even an empty one) is pending */
        http_pss *pss = user;
        if (pss && pss->wait)
            lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_HTTP_WRITEABLE: {
        http_pss *pss = user;
        if (pss && pss->wait && pss->wait->done) {
            free(pss->wait);
            pss->wait = NULL;
            return respond_clock(wsi);
        }
        return 0;
    }
    case LWS_CALLBACK_CLOSED_HTTP: {
        http_pss *pss = user;
        if (pss && pss->wait) {
            if (pss->wait->done)
                free(pss->wait);
            else
                pss->wait->alive = false;
            pss->wait = NULL;
        }
        return 0;
    }
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols http_protocol = {"http", http_callback, sizeof(http_pss), 0, 0, NULL, 0};

const struct lws_protocols *http_api_protocol(void) { return &http_protocol; }
