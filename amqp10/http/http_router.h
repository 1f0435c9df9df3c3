/* Which resource a request names (http_router.c): the emulator's own
 * (/health, /$sbemu/clock, /metrics), the dashboard (/ and /$sbemu/api/...,
 * http_dash.h), then, with a valid SAS token, a namespace's reset and
 * snapshots (http_reset.c) and the ATOM API's
 * (wire-protocol §9.2), in any letter case as Service Bus paths are:
 *
 *   $namespaceinfo                                 GET
 *   $Resources/Queues, $Resources/Topics           GET (a feed)
 *   <topic>/Subscriptions/<sub>/Rules/<rule>       GET PUT DELETE
 *   <topic>/Subscriptions/<sub>/Rules[/]           GET (a feed)
 *   <topic>/Subscriptions/<sub>                    GET PUT DELETE
 *   <topic>/Subscriptions[/]                       GET (a feed)
 *   <queue or topic>                               GET PUT DELETE
 *
 *   $sbemu/faults[/<name>]                         GET PUT DELETE (http_fault.c)
 *   $sbemu/story?...                               GET (http_story.c)
 *
 * Queue and topic names may hold '/', so the shapes are matched from the
 * end, as JS matches the ids it gets back. */
#ifndef HTTP_ROUTER_H
#define HTTP_ROUTER_H

#include "http_internal.h"

/* Dispatches r (whose body, if any, has arrived); an answer always follows. */
void http_route(http_req *r);

/* http_sbemu.c: GET /health (Microsoft's emulator's shape) and the movable
 * clocks, GET /$sbemu/clock and POST /$sbemu/clock/advance?by=<duration>
 * (the default namespace's, or the Host header's), and the same under
 * $sbemu/namespaces/{ns}/. True when r's path is a clock's (answered). */
void http_health(http_req *r);
bool http_clock_route(http_req *r);
/* http_metrics.c: GET /metrics, in Prometheus' text format. */
void http_metrics(http_req *r);
/* http_fault.c: the fault rules, /$sbemu/faults (name NULL) and
 * /$sbemu/faults/<name>. */
void http_faults(http_req *r, const char *name);
/* http_story.c: each message's story, /$sbemu/story?entity=&sequenceNumber=&messageId=&top=&page=. */
void http_story(http_req *r);

/* http_reset.c: $sbemu/namespaces/{ns}/reset and .../snapshots[/{name}[/restore]]
 * (and the same without namespaces/{ns}/: the default namespace), after the
 * SAS check. path: r's, without trailing '/'. True when path is one of them
 * (it is then answered); false leaves it to the router. */
bool http_reset_route(http_req *r, const char *path);

/* http_namespaces.c: $sbemu/namespaces (GET) and $sbemu/namespaces/{name}
 * (GET, PUT with the namespace's keys and idle time, DELETE), after the SAS
 * check. True when path is one of them (it is then answered). */
bool http_namespaces_route(http_req *r, const char *path);

#endif
