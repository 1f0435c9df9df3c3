/* See http_api.h. The lws "http" protocol: a request is collected (headers,
 * query, body) into an http_req, handed to the router (http_router.c), and
 * its answer written from LWS_CALLBACK_HTTP_WRITEABLE, a chunk at a time.
 *
 * A request waiting for the store outlives its connection if the client
 * closes first: CLOSED_HTTP detaches it (wsi NULL) and the answer that comes
 * later frees it instead of writing (http_respond_*). */
#include "http_api.h"

#include <ctype.h>
#include <errno.h>
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
#include "http_router.h"

/* Per connection: the request in hand (one at a time: HTTP/1.1). */
typedef struct http_pss {
    http_req *req;
    bool routed; /* the router has it: an answer will come */
} http_pss;

static void req_free(http_req *r)
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
    req_free(r);
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

void http_respond_ok(http_req *r) { respond(r, sb_status_http_code(SB_OK), "application/xml; charset=utf-8", NULL, 0); }

void http_respond_json(http_req *r, sb_status st, const char *json)
{
    size_t n = strlen(json);
    char *copy = ent_malloc(n + 1);
    if (copy)
        memcpy(copy, json, n + 1);
    respond(r, sb_status_http_code(st), "application/json", copy, copy ? n : 0);
}

/* Writes headers and the next chunk of the body; returns what the callback
 * returns (-1 closes the connection). */
static int write_answer(struct lws *wsi, http_pss *pss)
{
    http_req *r = pss->req;
    unsigned char buf[LWS_PRE + HTTP_ADMIN_WRITE_CHUNK];
    if (!r->headers_sent) {
        unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
        if (lws_add_http_common_headers(wsi, (unsigned int)r->code, r->content_type, (lws_filepos_t)r->out_len, &p,
                                        end) ||
            (r->close_after &&
             lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, (const unsigned char *)"close", 5, &p, end)) ||
            lws_finalize_write_http_header(wsi, start, &p, end))
            return -1;
        r->headers_sent = true;
    }
    size_t left = r->out_len - r->out_sent, n = left < HTTP_ADMIN_WRITE_CHUNK ? left : HTTP_ADMIN_WRITE_CHUNK;
    bool final = n == left;
    if (n) {
        memcpy(buf + LWS_PRE, r->out + r->out_sent, n);
        if (lws_write(wsi, buf + LWS_PRE, n, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
            return -1;
        r->out_sent += n;
    }
    if (!final) {
        lws_callback_on_writable(wsi);
        return 0;
    }
    bool close_after = r->close_after;
    req_free(r);
    pss->req = NULL;
    pss->routed = false;
    if (close_after)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
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

static http_method method_of(struct lws *wsi)
{
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0)
        return HTTP_GET;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_PUT_URI) > 0)
        return HTTP_PUT;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0)
        return HTTP_DELETE;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0)
        return HTTP_POST;
    return HTTP_OTHER;
}

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : (c = tolower(c)) >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes in place (lws leaves %2F and friends alone in some places). */
static void url_decode(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p == '%' && hexval((unsigned char)p[1]) >= 0 && hexval((unsigned char)p[2]) >= 0) {
            *o++ = (char)(hexval((unsigned char)p[1]) * 16 + hexval((unsigned char)p[2]));
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
}

/* A copy of header h (NULL when absent); malloc'd. */
static char *header_dup(struct lws *wsi, enum lws_token_indexes h)
{
    int n = lws_hdr_total_length(wsi, h);
    if (n <= 0)
        return NULL;
    char *s = ent_malloc((size_t)n + 1);
    if (s && lws_hdr_copy(wsi, s, n + 1, h) < 0) {
        ent_free(s);
        return NULL;
    }
    return s;
}

static http_req *req_new(struct lws *wsi, const char *path)
{
    http_req *r = ent_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    const struct lws_protocols *proto = lws_get_protocol(wsi);
    r->wsi = wsi;
    r->plane = proto ? proto->user : NULL;
    r->broker = r->plane ? r->plane->broker : NULL;
    r->method = method_of(wsi);
    r->now_ms = ent_clock_now_ms();
    r->tls = lws_is_ssl(wsi);
    r->declared_len = -1;
    while (*path == '/')
        path++;
    snprintf(r->path, sizeof r->path, "%s", path);
    url_decode(r->path);
    if (lws_hdr_copy(wsi, r->host, sizeof r->host, WSI_TOKEN_HOST) < 0)
        r->host[0] = 0;
    char tmp[64];
    if (lws_hdr_copy(wsi, tmp, sizeof tmp, WSI_TOKEN_HTTP_IF_MATCH) > 0)
        r->if_match = true;
    if (lws_hdr_copy(wsi, tmp, sizeof tmp, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0)
        r->declared_len = strtoll(tmp, NULL, 10);
    r->auth = header_dup(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
    char frag[2 * HTTP_ADMIN_ARG_MAX + 2];
    for (int i = 0; r->nargs < HTTP_ADMIN_ARGS_MAX; i++) {
        if (lws_hdr_copy_fragment(wsi, frag, sizeof frag, WSI_TOKEN_HTTP_URI_ARGS, i) < 0)
            break;
        char *eq = strchr(frag, '=');
        if (eq)
            *eq = 0;
        http_arg *a = &r->args[r->nargs++];
        snprintf(a->name, sizeof a->name, "%.*s", HTTP_ADMIN_ARG_MAX - 1, frag);
        snprintf(a->value, sizeof a->value, "%.*s", HTTP_ADMIN_ARG_MAX - 1, eq ? eq + 1 : "");
        url_decode(a->name);
        url_decode(a->value);
    }
    return r;
}

static int body_append(http_req *r, const char *in, size_t len)
{
    if (r->body_refused || !len) /* an empty body comes as (NULL, 0) */
        return 0;
    if (r->body.len + len > HTTP_ADMIN_BODY_MAX) {
        r->body_refused = true;
        http_xml_buf_free(&r->body);
        return 0;
    }
    http_xml_rawn(&r->body, in, len);
    return r->body.oom ? -1 : 0;
}

static void route(http_pss *pss)
{
    http_req *r = pss->req;
    pss->routed = true;
    if (r->body_refused) {
        http_respond_error(r, SB_ERR_MESSAGE_SIZE_EXCEEDED, "The request body is larger than %d bytes, the most the "
                           "management API takes.", HTTP_ADMIN_BODY_MAX);
        return;
    }
    http_route(r);
}

/* A request that cannot be served and whose body will not be read: the
 * answer goes out now and the connection closes. */
static int refuse_now(http_pss *pss, sb_status st, const char *detail)
{
    http_req *r = pss->req;
    pss->routed = true;
    r->close_after = true;
    http_respond_error(r, st, "%s", detail);
    return write_answer(r->wsi, pss) ? -1 : -1;
}

static void drop_request(http_pss *pss)
{
    /* lws reports the close of a connection that sent no request (a TCP probe:
     * testcontainers-go's port wait, a Kubernetes tcpSocket probe, nc -z) with
     * no per-session data at all */
    if (!pss)
        return;
    http_req *r = pss->req;
    pss->req = NULL;
    if (!r)
        return;
    if (pss->routed && !r->answered)
        r->wsi = NULL; /* the answer still to come frees it */
    else
        req_free(r);
    pss->routed = false;
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    http_pss *pss = user;
    switch (reason) {
    case LWS_CALLBACK_HTTP: {
        drop_request(pss);
        if (!(pss->req = req_new(wsi, in)))
            return -1;
        http_req *r = pss->req;
        char te[32];
        bool chunked = lws_hdr_copy(wsi, te, sizeof te, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0 && strcasestr(te, "chunked");
        if (chunked) /* lws 4.1 never delivers such a body */
            return refuse_now(pss, SB_ERR_ARGUMENT,
                              "Request bodies sent with Transfer-Encoding: chunked are not taken; send a Content-Length.");
        /* lws delivers a body (then BODY_COMPLETION) only for a POST, or a
         * request with a Content-Length above 0; anything else is whole now.
         * A POST with neither Content-Length nor chunking has no body (RFC 9112
         * 6.3), as `curl -X POST` and Java's HttpURLConnection send it: lws 4.1
         * would wait for a body that never comes and drop the connection. */
        if ((r->method != HTTP_PUT && r->method != HTTP_POST) || (r->method == HTTP_PUT && r->declared_len <= 0) ||
            (r->method == HTTP_POST && r->declared_len < 0)) {
            route(pss);
            return 0;
        }
        if (r->declared_len > HTTP_ADMIN_BODY_DRAIN_MAX)
            return refuse_now(pss, SB_ERR_MESSAGE_SIZE_EXCEEDED,
                              "The request body is larger than the most the management API takes.");
        if (r->declared_len > HTTP_ADMIN_BODY_MAX)
            r->body_refused = true; /* read and dropped, then answered */
        return 0; /* the body comes */
    }
    case LWS_CALLBACK_HTTP_BODY:
        if (pss->req && !pss->routed && body_append(pss->req, in, len))
            return -1;
        return 0;
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        if (pss->req && !pss->routed)
            route(pss);
        else if (pss->req && pss->req->answered)
            lws_callback_on_writable(wsi); /* lws held WRITEABLE back while the body came */
        return 0;
    case LWS_CALLBACK_HTTP_WRITEABLE:
        if (pss->req && pss->req->answered && pss->req->wsi)
            return write_answer(wsi, pss);
        return 0;
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        drop_request(pss);
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols http_protocol = {"http", http_callback, sizeof(http_pss), 0, 0, NULL, 0};

void http_api_protocol(http_plane *hp, struct lws_protocols *out)
{
    *out = http_protocol;
    out->user = hp;
}
