/* GET /$sbemu/api/events: server-sent events (text/event-stream) that keep
 * an open dashboard true without a reload:
 *
 *   event: entities     the document of GET entities (counts, statuses), when it changed
 *   event: connections  the document of GET connections, when it changed
 *   event: clock        {"now", "offsetMs"}, when the namespace clock moved
 *
 * A new watcher gets all three at once, then changes only. While anyone
 * watches, a timer reads the counts every HTTP_DASH_LIVE_INTERVAL_MS (one
 * statement, store_admin_counts: the database's, so it sees what every
 * replica did, completes and sweeps included) and compares; when nobody
 * does, there is no timer, no state and no cost. */
#include <string.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "http_dash.h"

/* How often counts are read while someone watches. */
#define HTTP_DASH_LIVE_INTERVAL_MS 500
/* A comment line this often keeps proxies and the browser from giving up on a quiet stream. */
#define HTTP_DASH_LIVE_KEEPALIVE_MS 15000
/* How long a browser waits before it connects again after a drop (the stream's retry:). */
#define HTTP_DASH_LIVE_RETRY_MS 2000

typedef struct live_client {
    struct live_client *next;
    struct http_dash_live *live;
    http_req *r;
    bool needs_all; /* joined since the last round: send it everything */
} live_client;

/* Ownership: the plane's (plane->live) while anyone watches; freed when the
 * last watcher leaves, or, if a read is in the store then, when it ends. */
typedef struct http_dash_live {
    http_plane *plane;
    struct lws_context *ctx;
    lws_sorted_usec_list_t timer;
    live_client *clients;
    bool reading;  /* a counts read is in the store */
    bool orphaned; /* nobody watches any more: the read in flight frees this */
    char *last_entities, *last_connections; /* what was sent last (ent_malloc'd), NULL: nothing yet */
    int64_t last_offset;
    int64_t last_keepalive_ms;
} http_dash_live;

static void live_free(http_dash_live *l)
{
    ent_free(l->last_entities);
    ent_free(l->last_connections);
    ent_free(l);
}

static void schedule(http_dash_live *l);

/* A JSON document as the text sent; NULL when out of memory (doc taken). */
static char *text_of(json_t *doc)
{
    char *t = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    char *copy = t ? ent_strdup(t) : NULL;
    free(t); /* jansson's (malloc) */
    return copy;
}

static void send_event(live_client *c, const char *name, const char *data)
{
    size_t n = strlen(name) + strlen(data) + 32;
    char *frame = ent_malloc(n);
    if (!frame)
        return;
    int len = snprintf(frame, n, "event: %s\ndata: %s\n\n", name, data);
    if (http_stream_write(c->r, frame, (size_t)len))
        http_stream_end(c->r); /* too far behind: it reconnects and reads afresh */
    ent_free(frame);
}

/* Sends what changed (or everything, to whoever joined), keeping it as the last sent. */
static void broadcast(http_dash_live *l, const char *name, char *text, char **last)
{
    if (!text)
        return;
    bool changed = !*last || strcmp(*last, text);
    for (live_client *c = l->clients; c; c = c->next)
        if (changed || c->needs_all)
            send_event(c, name, text);
    ent_free(*last);
    *last = text;
}

static void on_counts(void *ctx, sb_status st, const store_admin_counts_row *rows, size_t n)
{
    http_dash_live *l = ctx;
    l->reading = false;
    if (l->orphaned) {
        live_free(l);
        return;
    }
    /* counts that could not be read show as such (countsRead false), never as zeros */
    broadcast(l, "entities", text_of(http_dash_entities_json(l->plane, st == SB_OK ? rows : NULL, n)),
              &l->last_entities);
    broadcast(l, "connections", text_of(http_dash_connections_json(l->plane)), &l->last_connections);
    int64_t offset = ent_clock_offset_ms();
    bool clock_moved = offset != l->last_offset;
    char *clock = text_of(json_pack("{s:o, s:I}", "now", http_dash_time(ent_clock_now_ms()), "offsetMs",
                                    (json_int_t)offset));
    for (live_client *c = l->clients; clock && c; c = c->next)
        if (clock_moved || c->needs_all)
            send_event(c, "clock", clock);
    ent_free(clock);
    l->last_offset = offset;
    int64_t now = ent_clock_wall_ms();
    bool keepalive = now - l->last_keepalive_ms >= HTTP_DASH_LIVE_KEEPALIVE_MS;
    for (live_client *c = l->clients; c; c = c->next) {
        c->needs_all = false;
        if (keepalive && http_stream_write(c->r, ": keep-alive\n\n", 14))
            http_stream_end(c->r);
    }
    if (keepalive)
        l->last_keepalive_ms = now;
    schedule(l);
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
    http_dash_live *l = lws_container_of(sul, http_dash_live, timer);
    if (l->reading || !l->clients)
        return;
    l->reading = true;
    store_admin_counts(broker_store(l->plane->broker), on_counts, l);
}

static void schedule(http_dash_live *l)
{
    if (l->clients && l->ctx)
        lws_sul_schedule(l->ctx, 0, &l->timer, on_tick, (lws_usec_t)HTTP_DASH_LIVE_INTERVAL_MS * 1000);
}

/* The request ended (the client left, or the stream was ended): r->work_free. */
static void unsubscribe(void *p)
{
    live_client *c = p;
    http_dash_live *l = c->live;
    for (live_client **pp = &l->clients; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    ent_free(c);
    if (l->clients)
        return;
    lws_sul_cancel(&l->timer);
    l->plane->live = NULL;
    if (l->reading)
        l->orphaned = true; /* on_counts frees it */
    else
        live_free(l);
}

void http_dash_events(http_req *r)
{
    http_plane *plane = r->plane;
    if (!plane || !r->wsi) {
        http_dash_error(r, SB_ERR_SERVER_BUSY, "The emulator is starting; the event stream opens once it is ready.");
        return;
    }
    http_dash_live *l = plane->live;
    if (!l && (l = ent_calloc(1, sizeof *l))) {
        l->plane = plane;
        l->ctx = lws_get_context(r->wsi);
        l->last_offset = ent_clock_offset_ms();
        l->last_keepalive_ms = ent_clock_wall_ms();
        plane->live = l;
    }
    live_client *c = l ? ent_calloc(1, sizeof *c) : NULL;
    if (!c) {
        if (l && !l->clients) {
            plane->live = NULL;
            live_free(l);
        }
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    *c = (live_client){l->clients, l, r, true};
    l->clients = c;
    r->work = c;
    r->work_free = unsubscribe;
    http_stream_begin(r, "text/event-stream");
    char retry[32];
    int n = snprintf(retry, sizeof retry, "retry: %d\n\n", HTTP_DASH_LIVE_RETRY_MS);
    http_stream_write(r, retry, (size_t)n);
    /* the first round at once, for this watcher's first view */
    if (!l->reading)
        lws_sul_schedule(l->ctx, 0, &l->timer, on_tick, 1);
}
