/* The emulator's own HTTP resources (http_router.h): /health in the official
 * emulator's shape, and the namespace clocks, movable so that tests need not
 * wait for TTLs, locks, schedules and idle deletion. The clock is one per
 * namespace: $sbemu/clock is the default namespace's (or the one the Host
 * header names, `<name>.localhost`), $sbemu/namespaces/{ns}/clock another's;
 * an advance moves that namespace's clock alone and is answered once the
 * database holds it (and has told the other emulators). Like the clock
 * before namespaces, it takes no token. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ent_clock.h"
#include "ent_duration.h"
#include "ent_namespace.h"
#include "http_router.h"

void http_health(http_req *r)
{
    bool ok = r->plane && r->plane->all_listening && store_healthy(broker_store(r->broker));
    if (ok)
        http_respond_json(r, SB_OK, "{\"status\":\"healthy\",\"message\":\"Service is healthy.\"}");
    else
        http_respond_json(r, SB_ERR_SERVER_BUSY,
                          "{\"status\":\"unhealthy\",\"message\":\"Service not available. Please try after some time.\"}");
}

static void respond_clock(http_req *r)
{
    char body[256], iso[64];
    int64_t now = ent_clock_now_ms_in(r->ns);
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(body, sizeof body, "{\"namespace\":\"%s\",\"now\":\"%s.%03dZ\",\"offsetMs\":%lld}",
             r->ns_name[0] ? r->ns_name : broker_default_namespace_name(r->broker), iso, (int)(now % 1000),
             (long long)ent_clock_offset_ms_in(r->ns));
    http_respond_json(r, SB_OK, body);
}

static void on_clock_published(void *ctx, sb_status st)
{
    (void)st; /* the local clock moved either way; a lost publish only affects other replicas */
    http_req *r = ctx;
    if (!http_req_gone(r))
        respond_clock(r);
}

/* Once r->ns is the clock's namespace. */
static void clock_in_namespace(http_req *r)
{
    size_t n = strlen(r->path);
    static const char advance[] = "/clock/advance";
    if (n < sizeof advance - 1 || strcmp(r->path + n - (sizeof advance - 1), advance)) {
        respond_clock(r);
        return;
    }
    if (r->method != HTTP_POST) {
        http_respond_json(r, SB_ERR_METHOD_NOT_ALLOWED, "{\"error\":\"use POST to advance the clock\"}");
        return;
    }
    const char *by = http_req_arg(r, "by");
    char err[256];
    int64_t ms;
    if (!by || ent_duration_parse(by, &ms, err, sizeof err) || ms == ENT_DURATION_UNLIMITED ||
        ent_clock_advance_in(r->ns, ms)) {
        http_respond_json(r, SB_ERR_ARGUMENT,
                          "{\"error\":\"query parameter 'by' must be an ISO-8601 duration such as PT6M\"}");
        return;
    }
    broker_clock_moved(r->broker, r->ns, on_clock_published, r);
}

bool http_clock_route(http_req *r)
{
    static const char plain[] = "$sbemu/clock", named[] = "$sbemu/namespaces/";
    char ns[ENT_NAMESPACE_NAME_SIZE] = "", why[256];
    const char *rest;
    if (!strncmp(r->path, plain, sizeof plain - 1)) {
        rest = r->path + sizeof plain - 1;
        if (ent_namespace_of_host(r->host, ns, sizeof ns, why, sizeof why) < 0) {
            if (strcmp(rest, "") && strcmp(rest, "/advance"))
                return false;
            http_respond_json(r, SB_ERR_ARGUMENT, "{\"error\":\"the Host header names no namespace\"}");
            return true;
        }
    } else if (!strncmp(r->path, named, sizeof named - 1)) {
        const char *name = r->path + sizeof named - 1, *slash = strchr(name, '/');
        if (!slash || (size_t)(slash - name) >= sizeof ns)
            return false;
        snprintf(ns, sizeof ns, "%.*s", (int)(slash - name), name);
        if (strncmp(slash, "/clock", 6))
            return false;
        rest = slash + 6;
    } else {
        return false;
    }
    if (strcmp(rest, "") && strcmp(rest, "/advance"))
        return false;
    r->json_errors = true;
    http_ns_resolve(r, ns, false, clock_in_namespace); /* a clock is a namespace's that exists */
    return true;
}
