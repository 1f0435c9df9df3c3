/* The dashboard: a page served at / (and its assets under
 * /$sbemu/dashboard/), built into the binary, and the JSON API it reads and
 * acts through, /$sbemu/api/... (http_dash.c routes it). Its files:
 *
 *   http_dash.c           the routes, the SAS check, read-only mode, JSON in and out
 *   http_dash_assets.c    the page and its assets (generated from dashboard/ by dashboard/embed.cmake)
 *   http_dash_entities.c  GET entities: the namespace's entities with the database's counts
 *   http_dash_message.c   a stored AMQP message as JSON (every section, the body as text, JSON and hex)
 *   http_dash_messages.c  GET messages (a page of an entity or its dead letters), delete, purge
 *   http_dash_send.c      send and resubmit, through the broker's send path (broker.h, "sending")
 *   http_dash_rules.c     a subscription's rules, and a filter or action tried on a message
 *   http_dash_admin.c     an entity's status, the clock, sessions, connections
 *   http_dash_live.c      GET events: server-sent events while someone watches
 *
 * Access: the page and its assets need no token (the page asks for the key
 * and signs its own tokens); every API call is checked as the management
 * API's (http_auth_check). With --dashboard-read-only every action (what
 * changes messages, entities or the clock) is refused with 403; what only
 * reads, and a filter tried on a message, is not. Every refusal is JSON:
 * {"error": "...", "status": 400, "code": "argument-error"} (the status's
 * short name; read-only refusals are 403 "forbidden"). */
#ifndef HTTP_DASH_H
#define HTTP_DASH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "http_internal.h"

/* ---- limits ---- */

/* Messages in one page of an entity (top=), and the default. */
#define HTTP_DASH_PAGE_MAX 100
#define HTTP_DASH_PAGE_DEFAULT 20
/* Sequence numbers one request may name (delete, resubmit a selection). */
#define HTTP_DASH_SEQS_MAX 500
/* Bytes of a body shown as hex (and as text): a larger body is cut, and says so. */
#define HTTP_DASH_BODY_SHOWN_MAX (64 * 1024)
/* Nesting of AMQP values shown (lists in maps in lists...); deeper is shown as hex. */
#define HTTP_DASH_VALUE_DEPTH_MAX 8
/* Messages a purge deletes per transaction, so that it never holds the store long. */
#define HTTP_DASH_PURGE_BATCH 1000
/* Dead letters one resubmit round takes (read, sent as one send, deleted); "all" is rounds of these. */
#define HTTP_DASH_RESUBMIT_BATCH 100
/* Application properties a message sent from the dashboard may carry. */
#define HTTP_DASH_SEND_PROPERTIES_MAX 64
/* Sessions listed for an entity. */
#define HTTP_DASH_SESSIONS_MAX 200
/* What a message's story names as the link that sent it from the dashboard
 * (it has no connection). */
#define HTTP_DASH_STORY_LINK "(dashboard)"
/* Bytes of a session's state shown (as hex and text). */
#define HTTP_DASH_SESSION_STATE_SHOWN_MAX 4096

/* ---- the routes (http_dash.c) ---- */

/* Answers r when its path is the dashboard's (the page, its assets, the
 * API): true. false leaves r to the router. Called before the management
 * API's SAS check: the API checks its own. */
bool http_dash_route(http_req *r);
/* Whether r's path is the dashboard's API (its refusals are JSON). */
bool http_dash_route_is_api(const http_req *r);

/* ---- answers and arguments (http_dash.c) ---- */

/* Answers body (taken: decref'd) as JSON with st's HTTP code. */
void http_dash_json(http_req *r, sb_status st, json_t *body);
/* Answers {"error": detail, "status": code, "code": name} with st's HTTP code. */
__attribute__((format(printf, 3, 4))) void http_dash_error(http_req *r, sb_status st, const char *fmt, ...);
/* The common store outcomes, for what: 404 for a missing entity, 503 when PostgreSQL is away, else 500. */
void http_dash_store_error(http_req *r, sb_status st, const char *what);
/* The request's JSON object body (owned by the caller), or NULL (answered 400). */
json_t *http_dash_body(http_req *r);
/* Query argument name as an integer in [min, max] (dflt when absent); -1: answered 400. */
int http_dash_arg_i64(http_req *r, const char *name, int64_t dflt, int64_t min, int64_t max, int64_t *out);
/* The subqueue named by value ("active" or absent: 0, "deadletter": 1; with
 * all_ok, "all": -1); -1 answered 400 naming the argument what. */
int http_dash_subqueue(http_req *r, const char *value, bool all_ok, const char *what, int *out);
/* A JSON array of sequence numbers (at most HTTP_DASH_SEQS_MAX, each > 0)
 * into *seqs (ent_malloc'd); -1: answered 400 naming what. */
int http_dash_seqs(http_req *r, json_t *arr, const char *what, int64_t **seqs, size_t *n);
/* ISO 8601 UTC with milliseconds, or JSON null for 0. */
json_t *http_dash_time(int64_t ms);
/* A lock token (RFC 4122 order) as its GUID text, as the SDKs show it. */
json_t *http_dash_uuid(const uint8_t uuid[16]);

/* An entity found by its path (the cache; a miss waits for one refill):
 * fn(r, e, route) with copies that live until fn returns, or a 404 naming
 * it. what says which argument named it, for the errors. */
typedef void (*http_dash_entity_fn)(http_req *r, const ent_entity *e, const ent_route *route);
void http_dash_with_entity(http_req *r, const char *path, const char *what, http_dash_entity_fn fn);

/* The kind's name as the API says it ("queue", "topic", "subscription"). */
const char *http_dash_kind_name(ent_kind k);

/* ---- what each file serves ---- */

/* http_dash_assets.c: GET of an asset (name: "" for the page); false when there is none of that name. */
bool http_dash_asset(http_req *r, const char *name);
/* http_dash_entities.c */
void http_dash_entities(http_req *r);
/* The entities' JSON ({"namespace", "readOnly", "countsRead",
 * "clockOffsetMs", "entities": [...]}) from the cache and the database's
 * counts (rows NULL: not read); NULL when out of memory. */
json_t *http_dash_entities_json(const http_plane *plane, const store_admin_counts_row *rows, size_t n);
/* http_dash_message.c: the stored bare message as JSON (its sections, the
 * body as text when it is UTF-8, as JSON when that parses, and as hex);
 * never NULL but out of memory (a malformed message says so in "error"). */
json_t *http_dash_message_json(const uint8_t *bytes, size_t len);
/* http_dash_messages.c */
void http_dash_messages(http_req *r);
void http_dash_delete(http_req *r);
void http_dash_purge(http_req *r);
/* http_dash_send.c */
void http_dash_send(http_req *r);
void http_dash_resubmit(http_req *r);
/* http_dash_rules.c */
void http_dash_rules(http_req *r);
void http_dash_rule_test(http_req *r);
/* http_dash_admin.c */
void http_dash_status(http_req *r);
void http_dash_clock(http_req *r);
void http_dash_sessions(http_req *r);
void http_dash_connections(http_req *r);
/* The wire's connections as JSON ({"connections": [...]}); NULL without a wire or memory. */
json_t *http_dash_connections_json(const http_plane *plane);
/* http_dash_live.c: GET events; the stream of "entities", "clock" and
 * "connections" events, each sent when it changed. */
void http_dash_events(http_req *r);

#endif
