/* A request's helpers (its arguments, paging, name checks, body) and its
 * answers (http_respond_*): what every resource handler uses. The answer is
 * kept on the request and written by http_api.c at WRITEABLE; a request
 * whose client left (wsi NULL) is freed here instead. Below the router and
 * every handler: it calls none of them. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "http_describe.h"
#include "http_internal.h"

void http_req_free(http_req *r)
{
    if (!r)
        return;
    if (r->work_free)
        r->work_free(r->work);
    ent_free(r->auth);
    http_xml_buf_free(&r->body);
    ent_free(r->out);
    ent_free(r);
}

/* ---- answering ---- */

bool http_req_gone(http_req *r)
{
    if (r->wsi)
        return false;
    http_req_free(r);
    return true;
}

static void respond(http_req *r, int code, const char *content_type, char *body, size_t len)
{
    if (http_req_gone(r)) {
        ent_free(body);
        return;
    }
    if (r->answered) { /* a handler answered twice: keep the first */
        ent_free(body);
        return;
    }
    r->answered = true;
    r->code = code;
    r->content_type = content_type;
    r->out = body;
    r->out_len = body ? len : 0;
    lws_callback_on_writable(r->wsi);
}

static void respond_oom(http_req *r)
{
    static const char text[] = "<Error><Code>500</Code><Detail>The emulator ran out of memory.</Detail></Error>";
    char *copy = ent_malloc(sizeof text);
    if (copy)
        memcpy(copy, text, sizeof text);
    respond(r, sb_status_http_code(SB_ERR_INTERNAL), "application/xml; charset=utf-8", copy, copy ? sizeof text - 1 : 0);
}

void http_respond_xml(http_req *r, sb_status st, bool feed, char *body, size_t len)
{
    if (!body) {
        respond_oom(r);
        return;
    }
    respond(r, sb_status_http_code(st),
            feed ? "application/atom+xml;type=feed;charset=utf-8" : "application/atom+xml;type=entry;charset=utf-8",
            body, len);
}

void http_respond_created(http_req *r, char *body, size_t len)
{
    if (!body) {
        respond_oom(r);
        return;
    }
    respond(r, sb_status_http_code(SB_CREATED), "application/atom+xml;type=entry;charset=utf-8", body, len);
}

void http_respond_error(http_req *r, sb_status st, const char *fmt, ...)
{
    char detail[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (r->wsi)
        LOG_INFO("http: %s /%s: %d %s", r->method == HTTP_GET ? "GET" : r->method == HTTP_PUT ? "PUT"
                                         : r->method == HTTP_DELETE ? "DELETE" : "POST",
                 r->path, sb_status_http_code(st), detail);
    if (r->plane)
        broker_door_refused(&r->plane->figures, st);
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_xml_error(&b, sb_status_http_code(st), detail);
    size_t len = 0;
    char *body = http_xml_take(&b, &len);
    if (!body) {
        respond_oom(r);
        return;
    }
    respond(r, sb_status_http_code(st), "application/xml; charset=utf-8", body, len);
}

void http_respond_text(http_req *r, sb_status st, const char *content_type, char *body, size_t len)
{
    if (!body) {
        respond_oom(r);
        return;
    }
    if (r->plane)
        broker_door_refused(&r->plane->figures, st);
    respond(r, sb_status_http_code(st), content_type, body, len);
}

void http_respond_ok(http_req *r) { respond(r, sb_status_http_code(SB_OK), "application/xml; charset=utf-8", NULL, 0); }

void http_respond_json(http_req *r, sb_status st, const char *json)
{
    size_t n = strlen(json);
    char *copy = ent_malloc(n + 1);
    if (copy)
        memcpy(copy, json, n + 1);
    respond(r, sb_status_http_code(st), "application/json", copy, copy ? n : 0);
}

void http_respond_json_value(http_req *r, sb_status st, struct json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(body);
    if (!text) {
        http_respond_json(r, SB_ERR_INTERNAL, "{\"error\":\"The emulator ran out of memory.\"}");
        return;
    }
    http_respond_json(r, st, text);
    free(text); /* jansson's (malloc) */
}

/* ---- event streams ---- */

void http_stream_begin(http_req *r, const char *content_type)
{
    if (http_req_gone(r) || r->answered)
        return;
    r->answered = true;
    r->stream = true;
    r->code = sb_status_http_code(SB_OK);
    r->content_type = content_type;
    lws_callback_on_writable(r->wsi); /* the headers */
}

int http_stream_write(http_req *r, const char *data, size_t len)
{
    if (!r->stream || !r->wsi || r->close_after)
        return -1;
    if (r->out_sent == r->out_len)
        r->out_sent = r->out_len = 0; /* everything went: start the buffer again */
    size_t need = r->out_len + len;
    if (need - r->out_sent > HTTP_STREAM_QUEUE_MAX)
        return -1;
    if (need > r->out_cap) {
        size_t cap = r->out_cap ? r->out_cap : HTTP_ADMIN_WRITE_CHUNK;
        while (cap < need)
            cap *= 2;
        char *grown = ent_realloc(r->out, cap);
        if (!grown)
            return -1;
        r->out = grown;
        r->out_cap = cap;
    }
    memcpy(r->out + r->out_len, data, len);
    r->out_len += len;
    lws_callback_on_writable(r->wsi);
    return 0;
}

void http_stream_end(http_req *r)
{
    if (!r->stream || !r->wsi)
        return;
    r->close_after = true;
    lws_callback_on_writable(r->wsi);
}

/* ---- the request ---- */

const char *http_req_arg(const http_req *r, const char *name)
{
    for (int i = 0; i < r->nargs; i++)
        if (!strcasecmp(r->args[i].name, name))
            return r->args[i].value;
    return NULL;
}

static int nonnegative(http_req *r, const char *name, int64_t dflt, int64_t *out)
{
    const char *v = http_req_arg(r, name);
    if (!v) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || errno || n < 0 || n > INT32_MAX) {
        http_respond_error(r, SB_ERR_ARGUMENT, "The query parameter %s must be a whole number from 0 to %d, not '%s'.",
                           name, INT32_MAX, v);
        return -1;
    }
    *out = n;
    return 0;
}

int http_req_paging(http_req *r)
{
    if (nonnegative(r, "$skip", 0, &r->skip) || nonnegative(r, "$top", HTTP_ADMIN_PAGE_DEFAULT, &r->top))
        return -1;
    if (r->top > HTTP_ADMIN_PAGE_MAX)
        r->top = HTTP_ADMIN_PAGE_MAX;
    return 0;
}

void http_req_base(const http_req *r, http_xml_buf *b)
{
    http_xml_raw(b, r->tls ? "https://" : "http://");
    http_xml_raw(b, r->host[0] ? r->host : "localhost");
}

int http_req_enrich(http_req *r)
{
    const char *v = http_req_arg(r, "enrich");
    if (!v || !strcasecmp(v, "true") || !strcasecmp(v, "false"))
        return 0;
    http_respond_error(r, SB_ERR_ARGUMENT, "The query parameter enrich must be true or false, not '%.64s'.", v);
    return -1;
}

int http_req_keep(http_req *r, char *dst, size_t size, const char *name, const char *what)
{
    if (strlen(name) >= size) {
        http_respond_error(r, SB_ERR_NOT_FOUND, "No %s has a name that long (%zu bytes).", what, strlen(name));
        return -1;
    }
    memcpy(dst, name, strlen(name) + 1);
    return 0;
}

int http_req_entry(http_req *r, http_xml_entry *e)
{
    char err[512];
    if (!r->body.len) {
        http_respond_error(r, SB_ERR_ARGUMENT, "A PUT needs a body: an Atom entry holding the description.");
        return -1;
    }
    if (http_xml_parse_entry(r->body.data, r->body.len, e, err, sizeof err)) {
        http_respond_error(r, SB_ERR_ARGUMENT, "The body is not a valid Atom entry: %s.", err);
        return -1;
    }
    return 0;
}

void http_respond_store_error(http_req *r, sb_status st, const char *path)
{
    switch (st) {
    case SB_ERR_NOT_FOUND:
        http_respond_error(r, st,
                           "The messaging entity 'sb://%s/%s' could not be found. To know more visit "
                           "https://aka.ms/sbResourceMgrExceptions.",
                           r->host, path);
        break;
    case SB_ERR_ALREADY_EXISTS:
        http_respond_error(r, st,
                           "The messaging entity 'sb://%s/%s' already exists. To know more visit "
                           "https://aka.ms/sbResourceMgrExceptions.",
                           r->host, path);
        break;
    default:
        http_respond_error(r, st == SB_OK ? SB_ERR_INTERNAL : st,
                           "The emulator's store could not serve the request for '%s' (%s); retry.", path,
                           sb_status_name(st));
        break;
    }
}

static char *base_of(const http_req *r)
{
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_req_base(r, &b);
    return http_xml_take(&b, NULL);
}

char *http_entry_body(const http_req *r, const void *row, http_entry_fn fn, size_t *len)
{
    char *base = base_of(r);
    if (!base)
        return NULL;
    http_xml_buf b;
    http_xml_buf_init(&b);
    fn(&b, r, base, row, true);
    ent_free(base);
    return http_xml_take(&b, len);
}

void http_respond_feed(http_req *r, const char *path, const char *title, const void *rows, size_t n, size_t size,
                       int64_t total, http_entry_fn fn)
{
    char *base = base_of(r);
    if (!base) {
        http_respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_describe_feed_begin(&b, base, path, title, r->skip, r->top, r->skip + (int64_t)n < total, r->now_ms);
    for (size_t i = 0; i < n; i++)
        fn(&b, r, base, (const char *)rows + i * size, false);
    http_xml_feed_end(&b);
    ent_free(base);
    size_t len = 0;
    char *body = http_xml_take(&b, &len);
    http_respond_xml(r, SB_OK, true, body, len);
}

/* An answer held until the entity cache has refilled. */
typedef struct held_answer {
    http_req *r;
    bool created;
    char *body;
    size_t len;
} held_answer;

static void on_refilled(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)st, (void)e, (void)route; /* the change is committed whatever the refill did */
    held_answer *h = ctx;
    http_req *r = h->r;
    if (http_req_gone(r))
        ent_free(h->body);
    else if (!h->body)
        http_respond_ok(r);
    else if (h->created)
        http_respond_created(r, h->body, h->len);
    else
        http_respond_xml(r, SB_OK, false, h->body, h->len);
    ent_free(h);
}

void http_answer_after_refill(http_req *r, bool created, char *body, size_t len)
{
    held_answer *h = ent_malloc(sizeof *h);
    if (!h) {
        ent_free(body);
        http_respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    *h = (held_answer){r, created, body, len};
    broker_after_refill(r->broker, on_refilled, h);
}

