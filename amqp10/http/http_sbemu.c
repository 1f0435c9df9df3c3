/* The emulator's own HTTP resources (http_router.h): /health in the official
 * emulator's shape, and the namespace clock, movable so that tests need not
 * wait for TTLs, locks, schedules and idle deletion. The clock is one per
 * namespace: an advance is answered once the database holds it (and has told
 * the other emulators). */
#include <stdio.h>
#include <time.h>

#include "ent_clock.h"
#include "ent_duration.h"
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
    int64_t now = ent_clock_now_ms();
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(body, sizeof body, "{\"now\":\"%s.%03dZ\",\"offsetMs\":%lld}", iso, (int)(now % 1000),
             (long long)ent_clock_offset_ms());
    http_respond_json(r, SB_OK, body);
}

static void on_clock_published(void *ctx, sb_status st)
{
    (void)st; /* the local clock moved either way; a lost publish only affects other replicas */
    http_req *r = ctx;
    if (!http_req_gone(r))
        respond_clock(r);
}

void http_clock(http_req *r)
{
    if (strcmp(r->path, "$sbemu/clock/advance")) {
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
    if (!by || ent_duration_parse(by, &ms, err, sizeof err) || ms == ENT_DURATION_UNLIMITED || ent_clock_advance(ms)) {
        http_respond_json(r, SB_ERR_ARGUMENT,
                          "{\"error\":\"query parameter 'by' must be an ISO-8601 duration such as PT6M\"}");
        return;
    }
    broker_sweep_now(r->broker);
    broker_wake(r->broker, 0); /* every waiting receiver looks again */
    store_clock_publish(broker_store(r->broker), ent_clock_offset_ms(), on_clock_published, r);
}
