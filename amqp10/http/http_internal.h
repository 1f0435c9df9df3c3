/* The ATOM management API's request, as the router (http_api.c) hands it to
 * one file per resource (http_queue.c, http_topic.c, http_subscription.c,
 * http_rule.c, http_namespace.c), and the answers they give.
 *
 * Every answer goes through http_respond_*: a handler that has started a
 * store operation answers from its callback, and the router writes the answer
 * from LWS_CALLBACK_HTTP_WRITEABLE. If the client closed meanwhile, the
 * request was detached from its connection (wsi NULL): http_respond_* then
 * frees it instead, so a handler never checks, and never touches the request
 * after answering. A handler with more than one step calls http_req_gone()
 * between them to stop early. */
#ifndef HTTP_INTERNAL_H
#define HTTP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libwebsockets.h>

#include "http_api.h"
#include "ent_address.h"
#include "ent_props.h"
#include "ent_status.h"
#include "http_xml.h"
#include "store_admin.h"

/* ---- limits ---- */

/* Largest request body taken: a description is a few KB (a rule with many
 * correlation properties perhaps tens); anything larger is refused (413). */
#define HTTP_ADMIN_BODY_MAX (256 * 1024)
/* A body declared this large is read and dropped to answer 413 cleanly;
 * larger ones are answered at once and the connection closed. */
#define HTTP_ADMIN_BODY_DRAIN_MAX (4 * 1024 * 1024)
/* Entries in one page of a list ($top): the SDKs ask 100 (.NET, Python) or
 * their page size (JS); more is capped, and the next link says where to go on. */
#define HTTP_ADMIN_PAGE_DEFAULT 100
#define HTTP_ADMIN_PAGE_MAX 100
/* A path is at most an entity path plus /Subscriptions/<50>/Rules/<50>, each
 * character percent-encoded at worst. */
#define HTTP_ADMIN_PATH_MAX (3 * (ENT_ENTITY_PATH_MAX + 128))
/* Query arguments kept (api-version, enrich, $skip, $top, ...). */
#define HTTP_ADMIN_ARGS_MAX 16
#define HTTP_ADMIN_ARG_MAX 256
/* Bytes an event stream may hold for a client that does not read them:
 * past this it is closed (the dashboard reconnects and reads afresh). */
#define HTTP_STREAM_QUEUE_MAX (4 * 1024 * 1024)
/* Bytes written per WRITEABLE. */
#define HTTP_ADMIN_WRITE_CHUNK 16384

typedef enum http_method { HTTP_GET, HTTP_PUT, HTTP_DELETE, HTTP_POST, HTTP_OTHER } http_method;

typedef struct http_arg {
    char name[HTTP_ADMIN_ARG_MAX];
    char value[HTTP_ADMIN_ARG_MAX];
} http_arg;

/* One request. Owned by its connection's per-session data until answered,
 * or by the store callback still to come once the connection closed. */
typedef struct http_req {
    struct lws *wsi;            /* NULL: the client closed; answering frees the request */
    broker *broker;             /* the plane's */
    http_plane *plane;          /* NULL before the plane is set up; its figures count refusals */
    http_method method;
    char path[HTTP_ADMIN_PATH_MAX]; /* URL-decoded, without the leading '/' */
    char host[256];             /* the Host header, for the URLs the entries carry */
    bool tls;
    bool if_match;              /* If-Match: * (an update) */
    http_arg args[HTTP_ADMIN_ARGS_MAX];
    int nargs;
    char *auth;                 /* the Authorization header (ent_malloc'd), NULL if none */
    http_xml_buf body;          /* PUT: the body as it came */
    int64_t declared_len;       /* Content-Length, -1 if none */
    bool body_refused;          /* too large: dropped as it comes, answered 413 */
    int64_t now_ms;             /* the emulator's clock when the request came */
    int32_t ns;                 /* the namespace it names entities in (ent_namespace.h; 0: the default) */
    char ns_name[ENT_NAMESPACE_NAME_SIZE];    /* that namespace's name as the request gave it; "" the default */
    char token_ns[ENT_NAMESPACE_NAME_SIZE];   /* the namespace its SAS token is for (http_auth_check); "" the default */
    void (*ns_next)(struct http_req *r);      /* what goes on once ns is resolved (http_ns_resolve) */
    bool json_errors;                         /* one of the emulator's own ($sbemu/...): errors are {"error": ...} */
    /* what a handler keeps between its steps */
    char entity[ENT_ENTITY_PATH_SIZE]; /* the queue or topic */
    char sub[ENT_SUBSCRIPTION_NAME_SIZE];
    char rule[ENT_RULE_NAME_SIZE];
    int64_t skip, top;          /* a list's page (http_req_paging) */
    void *work;                 /* freed with the request by work_free */
    void (*work_free)(void *);
    /* the answer */
    bool answered;
    int code;
    const char *content_type;
    char *out;                  /* ent_malloc'd */
    size_t out_len, out_sent;
    bool headers_sent;
    bool close_after;           /* close the connection once answered */
    /* an event stream (http_stream_begin): headers without a length, then
     * whatever http_stream_write queues in out, until either side ends it */
    bool stream;
    size_t out_cap;
} http_req;

/* ---- answering (http_respond.c) ---- */

/* Frees a request and what it holds (its work through work_free). */
void http_req_free(http_req *r);

/* Takes body (ent_malloc'd XML) as the answer, with the status's HTTP code. */
void http_respond_xml(http_req *r, sb_status st, bool feed, char *body, size_t len);
/* Answers 201 Created with body (a created entity). */
void http_respond_created(http_req *r, char *body, size_t len);
/* The Service Bus error body with the status's HTTP code; detail is printf-style. */
__attribute__((format(printf, 3, 4))) void http_respond_error(http_req *r, sb_status st, const char *fmt, ...);
/* An empty 200 (a delete). */
void http_respond_ok(http_req *r);
/* A JSON body (the emulator's own resources: /health, the clock). */
void http_respond_json(http_req *r, sb_status st, const char *json);
/* The same from a jansson value, which it takes (NULL, or one that cannot be
 * written: 500, out of memory). Keys in the order they were added. */
struct json_t;
void http_respond_json_value(http_req *r, sb_status st, struct json_t *body);
/* Takes body (ent_malloc'd, NULL: out of memory) as the answer, of content_type (a static text). */
void http_respond_text(http_req *r, sb_status st, const char *content_type, char *body, size_t len);
/* Answers with a stream of content_type (server-sent events): the
 * connection stays open, its answer never ends, and it carries what
 * http_stream_write queues. The request is freed when the client leaves
 * (its work_free tells whoever writes to it). */
void http_stream_begin(http_req *r, const char *content_type);
/* Queues len bytes on a stream; -1 (nothing queued) when more than
 * HTTP_STREAM_QUEUE_MAX would wait for a client that does not read. */
int http_stream_write(http_req *r, const char *data, size_t len);
/* Ends a stream: the connection closes once what is queued is written. */
void http_stream_end(http_req *r);
/* True when the client is gone: the request is freed and must not be touched. */
bool http_req_gone(http_req *r);

/* The value of query argument name (case-insensitive, already decoded), or NULL. */
const char *http_req_arg(const http_req *r, const char *name);
/* $skip and $top into r->skip and r->top, checked and capped; -1 (answered
 * 400) when malformed. */
int http_req_paging(http_req *r);
/* "https://host" or "http://host" as the client reached us. */
void http_req_base(const http_req *r, http_xml_buf *b);
/* enrich=true|false (any case) is taken, anything else answered 400 (-1).
 * Runtime figures are always in the answer: Python reads them with
 * enrich=false and JS never sends it. */
int http_req_enrich(http_req *r);
/* Copies name into dst (a fixed buffer of r); -1 (answered 404 naming what)
 * when it cannot be a name that long. */
int http_req_keep(http_req *r, char *dst, size_t size, const char *name, const char *what);
/* The PUT body as an entry; -1 when it is not one (answered 400). */
int http_req_entry(http_req *r, http_xml_entry *e);
/* Answers (st, body) once this emulator's entity cache has refilled after
 * the change just committed, so that the client's next AMQP attach or send
 * already sees it (other emulators follow the database's NOTIFY). created:
 * 201 Created. body NULL: an empty 200. */
void http_answer_after_refill(http_req *r, bool created, char *body, size_t len);
/* Writes the whole <entry> of one row (a store_admin_* row or a store_rule). */
typedef void (*http_entry_fn)(http_xml_buf *b, const http_req *r, const char *base, const void *row, bool top_level);
/* The entry of one row as a document (ent_malloc'd), or NULL out of memory. */
char *http_entry_body(const http_req *r, const void *row, http_entry_fn fn, size_t *len);
/* Answers the feed of the page r->skip.. of the list at path: n rows of size
 * bytes each, total in the whole list (a next link when more follow). */
void http_respond_feed(http_req *r, const char *path, const char *title, const void *rows, size_t n, size_t size,
                       int64_t total, http_entry_fn fn);
/* Answers the common store outcomes: 404 and 409 naming the entity at path
 * (sb://host/path), 500 for the store failing. */
void http_respond_store_error(http_req *r, sb_status st, const char *path);

/* ---- SAS (http_auth.c) ---- */

/* SB_OK when the Authorization header holds a SAS token signed with the
 * namespace key whose audience covers the request's path (as on AMQP's
 * $cbs: the namespace root covers everything), with r->token_ns the
 * namespace the token is for (its audience's host, else its key name:
 * ent_namespace_choose); else SB_ERR_UNAUTHORIZED with the reason in why. */
sb_status http_auth_check(http_req *r, char *why, size_t whylen);

/* ---- namespaces (http_ns.c) ---- */

/* The namespace a request is in: the one its Host header names
 * (`<name>.localhost`), else its token's (r->token_ns), into out ("" for the
 * default). 0, or -1 with why (the Host names none a namespace may have). */
int http_ns_choose(const http_req *r, char *out, size_t outlen, char *why, size_t whylen);
/* Whether r's token may act on namespace name (one a path names): a token
 * for the default namespace (its key names) may act on any, another only on
 * its own. false answers 401 naming both. */
bool http_ns_token_allows(http_req *r, const char *name);
/* Resolves name ("" the default) into r->ns and r->ns_name, making it on
 * first use when create, else answering 404 when it does not exist; then
 * r->now_ms is that namespace's clock and next(r) goes on (maybe before
 * this returns; never when the client is gone or an answer was given). */
void http_ns_resolve(http_req *r, const char *name, bool create, void (*next)(http_req *r));

/* ---- the resources ----
 * Names are borrowed for the call: a handler copies what it keeps. */

/* http_queue.c, http_topic.c: one path names a queue or a topic. */
void http_entity_get(http_req *r, const char *name);
void http_entity_put(http_req *r, const char *name);
void http_entity_delete(http_req *r, const char *name);
void http_queue_put(http_req *r, const char *name, const http_xml_entry *e);
void http_queue_list(http_req *r);
/* Answers the topic's entry (created: 201 after the cache refill). */
void http_topic_respond(http_req *r, const store_admin_topic *t, bool created, bool after_refill);
void http_topic_put(http_req *r, const char *name, const http_xml_entry *e);
void http_topic_list(http_req *r);
/* http_subscription.c */
void http_subscription_get(http_req *r, const char *topic, const char *name);
void http_subscription_put(http_req *r, const char *topic, const char *name);
void http_subscription_delete(http_req *r, const char *topic, const char *name);
void http_subscription_list(http_req *r, const char *topic);
/* http_rule.c */
void http_rule_get(http_req *r, const char *topic, const char *sub, const char *name);
void http_rule_put(http_req *r, const char *topic, const char *sub, const char *name);
void http_rule_delete(http_req *r, const char *topic, const char *sub, const char *name);
void http_rule_list(http_req *r, const char *topic, const char *sub);
/* http_namespace.c */
void http_namespace_get(http_req *r);

#endif
