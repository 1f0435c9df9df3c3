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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "http_dash.h"
#include "http_internal.h"
#include "http_router.h"

/* Per connection: the request in hand (one at a time: HTTP/1.1). */
typedef struct http_pss {
    http_req *req;
    bool routed; /* the router has it: an answer will come */
} http_pss;

/* An event stream (http_stream_begin): its headers, without a length, then
 * what is queued; it ends only when the client leaves or the writer ends it. */
static int write_stream(struct lws *wsi, http_req *r)
{
    unsigned char buf[LWS_PRE + HTTP_ADMIN_WRITE_CHUNK];
    if (!r->headers_sent) {
        unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
        if (lws_add_http_common_headers(wsi, (unsigned int)r->code, r->content_type, LWS_ILLEGAL_HTTP_CONTENT_LEN, &p,
                                        end) ||
            lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, (const unsigned char *)"no-cache", 8, &p,
                                         end) ||
            lws_finalize_write_http_header(wsi, start, &p, end))
            return -1;
        r->headers_sent = true;
        /* no timeout from here on: the stream lasts as long as its client
         * (lws_http_mark_sse is for HTTP/2 streams and says so at error level on HTTP/1.1) */
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
    }
    size_t left = r->out_len - r->out_sent, n = left < HTTP_ADMIN_WRITE_CHUNK ? left : HTTP_ADMIN_WRITE_CHUNK;
    if (n) {
        memcpy(buf + LWS_PRE, r->out + r->out_sent, n);
        if (lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_HTTP) != (int)n)
            return -1;
        r->out_sent += n;
    }
    if (r->out_sent < r->out_len) {
        lws_callback_on_writable(wsi);
        return 0;
    }
    return r->close_after ? -1 : 0;
}

static int write_answer(struct lws *wsi, http_pss *pss)
{
    http_req *r = pss->req;
    if (r->stream)
        return write_stream(wsi, r);
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
    http_req_free(r);
    pss->req = NULL;
    pss->routed = false;
    if (close_after)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
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
    if (r->body_refused && http_dash_route_is_api(r)) { /* the dashboard answers in JSON */
        http_dash_error(r, SB_ERR_MESSAGE_SIZE_EXCEEDED, "The request body is larger than %d bytes, the most the "
                        "dashboard's API takes.", HTTP_ADMIN_BODY_MAX);
        return;
    }
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
        http_req_free(r);
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
