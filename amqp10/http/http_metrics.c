/* GET /metrics: what sbemu shows Prometheus (the format is written by
 * http_metrics_text.c). Three sources, each read at the scrape and never
 * kept up to date for it:
 *  - the process's counters: per entity (the broker's, broker_figures.h),
 *    the wire's and this plane's (broker_door_figures), the store's
 *    (store_figures.h). They start at zero with the process;
 *  - the database's counts per entity (active, dead-letter, scheduled,
 *    deferred, size), read by one statement per scrape (store_admin_counts),
 *    so that every replica on one database shows the same numbers;
 *  - whether PostgreSQL is there.
 * If the counts cannot be read (PostgreSQL is away), the answer is still
 * 200 with everything else and sbemu_entity_counts_read 0: a scrape that
 * fails would hide sbemu_postgresql_up 0, the figure that says why.
 *
 * Access: no token by default, as /health (Prometheus scrapes without one
 * unless told); --metrics-token-required asks for the management API's SAS
 * token (http_auth_check). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_config.h"
#include "http_metrics_text.h"
#include "http_router.h"
#include "store_admin.h"
#include "store_figures.h"

/* The namespace label of an entity: its namespace's name (the default's:
 * Config.json's, or sbemulatorns); a namespace this process does not know
 * yet is labelled by its id. */
static const char *namespace_of(const http_req *r, int32_t ns, char *buf, size_t n)
{
    const ent_namespace *known = ns > 0 && ns != ENT_NAMESPACE_DEFAULT_ID
                                     ? ent_namespaces_get(broker_namespaces(r->broker), ns)
                                     : NULL;
    if (known)
        return known->name;
    if (ns > 0 && ns != ENT_NAMESPACE_DEFAULT_ID) {
        snprintf(buf, n, "#%d", (int)ns);
        return buf;
    }
    return r->plane && r->plane->namespace_name ? r->plane->namespace_name : ENT_CONFIG_DEFAULT_NAMESPACE;
}

static const char *kind_name(ent_kind k)
{
    return k == ENT_KIND_TOPIC ? "topic" : k == ENT_KIND_SUBSCRIPTION ? "subscription" : "queue";
}

/* {namespace, entity, kind}, and room for one more (a reason); buf holds
 * the namespace's label when it is made here. */
#define ENTITY_LABELS 3
static void entity_labels(const http_req *r, int32_t ns, const char *name, ent_kind kind, http_mtext_label *out,
                          char *buf, size_t n)
{
    out[0] = (http_mtext_label){"namespace", namespace_of(r, ns, buf, n)};
    out[1] = (http_mtext_label){"entity", name};
    out[2] = (http_mtext_label){"kind", kind_name(kind)};
}

/* ---- the process's counters per entity ---- */

static const struct {
    broker_event ev;
    const char *name, *help;
} entity_counters[] = {
    {BROKER_EV_IN, "sbemu_messages_in_total",
     "Messages accepted into the entity (sent, published, routed or forwarded there) by this process."},
    {BROKER_EV_OUT, "sbemu_messages_out_total",
     "Messages this process delivered from the entity (locked for a receiver, or received and deleted)."},
    {BROKER_EV_COMPLETED, "sbemu_messages_completed_total", "Messages of the entity completed through this process."},
    {BROKER_EV_ABANDONED, "sbemu_messages_abandoned_total", "Messages of the entity abandoned through this process."},
    {BROKER_EV_DEFERRED, "sbemu_messages_deferred_total", "Messages of the entity deferred through this process."},
    {BROKER_EV_EXPIRED, "sbemu_messages_expired_total",
     "Messages of the entity this process's sweep found expired (dead-lettered or dropped)."},
    {BROKER_EV_SCHEDULED, "sbemu_messages_scheduled_total",
     "Messages accepted into the entity for a later enqueue time, by this process."},
};

static int by_name(const void *a, const void *b)
{
    return strcasecmp((*(const ent_entity *const *)a)->name, (*(const ent_entity *const *)b)->name);
}

/* The entities this process knows (its cache), by name; NULL when none. */
static const ent_entity **cached_entities(const broker *br, size_t *n)
{
    const ent_cache *c = broker_cache(br);
    *n = c ? ent_cache_count(c) : 0;
    const ent_entity **v = *n ? ent_malloc(*n * sizeof *v) : NULL;
    if (!v) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        v[i] = ent_cache_at(c, i);
    qsort(v, *n, sizeof *v, by_name);
    return v;
}

static void write_entity_counters(http_xml_buf *b, const http_req *r)
{
    size_t n;
    const ent_entity **es = cached_entities(r->broker, &n);
    const broker_counts *counts = broker_counts_of(r->broker);
    http_mtext_label l[ENTITY_LABELS + 1];
    char nsbuf[16];
    for (size_t f = 0; f < sizeof entity_counters / sizeof entity_counters[0]; f++) {
        http_mtext_family(b, entity_counters[f].name, HTTP_MTEXT_COUNTER, entity_counters[f].help);
        for (size_t i = 0; i < n; i++) {
            const broker_entity_counts *c = broker_counts_get(counts, es[i]->id);
            entity_labels(r, es[i]->namespace_id, es[i]->name, es[i]->kind, l, nsbuf, sizeof nsbuf);
            http_mtext_u64(b, entity_counters[f].name, l, ENTITY_LABELS, c ? c->n[entity_counters[f].ev] : 0);
        }
    }
    const char *dl = "sbemu_messages_dead_lettered_total";
    http_mtext_family(b, dl, HTTP_MTEXT_COUNTER,
                      "Messages of the entity this process dead-lettered, by DeadLetterReason (the client's, or "
                      "Service Bus's: MaxDeliveryCountExceeded, TTLExpiredException, ...); an entity keeps "
                      BROKER_REASON_OTHER " for reasons past its first few.");
    for (size_t i = 0; i < n; i++) {
        const broker_entity_counts *c = broker_counts_get(counts, es[i]->id);
        entity_labels(r, es[i]->namespace_id, es[i]->name, es[i]->kind, l, nsbuf, sizeof nsbuf);
        for (size_t k = 0; c && k < c->nreasons; k++) {
            l[ENTITY_LABELS] = (http_mtext_label){"reason", c->reasons[k].reason};
            http_mtext_u64(b, dl, l, ENTITY_LABELS + 1, c->reasons[k].n);
        }
    }
    ent_free(es);
}

/* ---- the database's counts per entity ---- */

static const struct {
    size_t offset; /* of an int64_t in store_admin_counts_row; 0: always 0 */
    const char *name, *help;
} entity_gauges[] = {
    {offsetof(store_admin_counts_row, active), "sbemu_entity_active_messages",
     "Active messages of the entity in the database (deferred ones included, as Service Bus counts them)."},
    {offsetof(store_admin_counts_row, dead_letter), "sbemu_entity_dead_letter_messages",
     "Messages in the entity's dead-letter subqueue, in the database."},
    {offsetof(store_admin_counts_row, scheduled), "sbemu_entity_scheduled_messages",
     "Scheduled messages of the entity, in the database."},
    {offsetof(store_admin_counts_row, deferred), "sbemu_entity_deferred_messages",
     "Deferred messages of the entity, in the database."},
    {0, "sbemu_entity_transfer_messages", "Messages in the entity's transfer queue (always 0: sbemu forwards at once)."},
    {0, "sbemu_entity_transfer_dead_letter_messages",
     "Messages in the entity's transfer dead-letter queue (always 0: failed forwards dead-letter in the source)."},
    {offsetof(store_admin_counts_row, size_in_bytes), "sbemu_entity_size_bytes",
     "Bytes of the entity's messages in the database (a topic's: its subscriptions' too)."},
};

static void write_entity_gauges(http_xml_buf *b, const http_req *r, sb_status st, const store_admin_counts_row *rows,
                                size_t n)
{
    http_mtext_family(b, "sbemu_entity_counts_read", HTTP_MTEXT_GAUGE,
                      "1 when this scrape read the entities' counts from the database, 0 when it could not.");
    http_mtext_u64(b, "sbemu_entity_counts_read", NULL, 0, st == SB_OK);
    http_mtext_label l[ENTITY_LABELS];
    char nsbuf[16];
    for (size_t f = 0; f < sizeof entity_gauges / sizeof entity_gauges[0]; f++) {
        http_mtext_family(b, entity_gauges[f].name, HTTP_MTEXT_GAUGE, entity_gauges[f].help);
        for (size_t i = 0; i < n; i++) {
            int64_t v = 0;
            if (entity_gauges[f].offset)
                memcpy(&v, (const char *)&rows[i] + entity_gauges[f].offset, sizeof v);
            entity_labels(r, rows[i].namespace_id, rows[i].path, rows[i].kind, l, nsbuf, sizeof nsbuf);
            http_mtext_i64(b, entity_gauges[f].name, l, ENTITY_LABELS, v);
        }
    }
}

/* ---- the front doors ---- */

static void write_refusals(http_xml_buf *b, const broker_door_figures *const *doors, size_t ndoors)
{
    static const struct {
        broker_refusal_kind kind;
        const char *name, *help;
    } families[] = {
        {BROKER_REFUSED_SERVER_ERROR, "sbemu_server_errors_total",
         "Requests refused because the emulator or its store failed, by door and status."},
        {BROKER_REFUSED_THROTTLED, "sbemu_throttled_requests_total",
         "Requests refused as server-busy (the SDKs wait and retry: PostgreSQL away or full), by door and status."},
        {BROKER_REFUSED_CLIENT_ERROR, "sbemu_user_errors_total",
         "Requests refused for what the client asked (a lost lock, a missing entity, a bad argument), by door and "
         "status."},
    };
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        http_mtext_family(b, families[f].name, HTTP_MTEXT_COUNTER, families[f].help);
        for (size_t d = 0; d < ndoors; d++)
            for (int st = SB_ERR_ARGUMENT; st < SB_STATUS_COUNT; st++) {
                if (broker_refusal_kind_of((sb_status)st) != families[f].kind)
                    continue;
                /* a client error shows once it happened; the two the operator watches always do */
                if (families[f].kind == BROKER_REFUSED_CLIENT_ERROR && !doors[d]->refusals[st])
                    continue;
                http_mtext_label l[] = {{"door", doors[d]->door}, {"status", sb_status_name((sb_status)st)}};
                http_mtext_u64(b, families[f].name, l, 2, doors[d]->refusals[st]);
            }
    }
}

static void write_wire(http_xml_buf *b, const broker_door_figures *w)
{
    http_mtext_label door[] = {{"door", w->door}};
    http_mtext_family(b, "sbemu_connections", HTTP_MTEXT_GAUGE, "Connections open (their protocol's open came).");
    http_mtext_u64(b, "sbemu_connections", door, 1, w->connections_open);
    http_mtext_family(b, "sbemu_connections_opened_total", HTTP_MTEXT_COUNTER, "Connections opened so far.");
    http_mtext_u64(b, "sbemu_connections_opened_total", door, 1, w->connections_opened);
    http_mtext_family(b, "sbemu_links", HTTP_MTEXT_GAUGE,
                      "Links open, by role as the client sees it (sender, receiver, management, cbs, coordinator).");
    for (int k = 0; k < BROKER_LINK_KINDS; k++) {
        http_mtext_label l[] = {{"door", w->door}, {"role", broker_link_kind_name((broker_link_kind)k)}};
        http_mtext_u64(b, "sbemu_links", l, 2, w->links_open[k]);
    }
    http_mtext_family(b, "sbemu_management_requests_total", HTTP_MTEXT_COUNTER,
                      "$management requests, by operation (unknown: one the emulator does not know).");
    for (size_t i = 0; i <= w->nops; i++) {
        http_mtext_label l[] = {{"door", w->door}, {"operation", i < w->nops ? w->op_names[i] : "unknown"}};
        http_mtext_u64(b, "sbemu_management_requests_total", l, 2, w->op_requests[i]);
    }
    http_mtext_family(b, "sbemu_cbs_put_tokens_total", HTTP_MTEXT_COUNTER,
                      "$cbs put-token requests (accepted or refused).");
    http_mtext_u64(b, "sbemu_cbs_put_tokens_total", door, 1, w->cbs_put_tokens);
    http_mtext_family(b, "sbemu_receive_claims_ahead_total", HTTP_MTEXT_COUNTER,
                      "Receivers' claims sent while their previous claim was in the store (large messages).");
    http_mtext_u64(b, "sbemu_receive_claims_ahead_total", door, 1, w->claims_ahead);
}

/* ---- the store ---- */

static void write_store(http_xml_buf *b, const store *s)
{
    store_figures f;
    store_get_figures(s, &f);
    http_mtext_family(b, "sbemu_postgresql_up", HTTP_MTEXT_GAUGE, "1 when the emulator is connected to PostgreSQL.");
    http_mtext_u64(b, "sbemu_postgresql_up", NULL, 0, f.up);
    http_mtext_family(b, "sbemu_store_commits_total", HTTP_MTEXT_COUNTER, "Transactions the store committed.");
    http_mtext_u64(b, "sbemu_store_commits_total", NULL, 0, f.commits);
    http_mtext_family(b, "sbemu_store_commit_failures_total", HTTP_MTEXT_COUNTER,
                      "Transactions that did not commit (rolled back by an error, whose operations are then retried "
                      "one by one, or cut off by a lost connection).");
    http_mtext_u64(b, "sbemu_store_commit_failures_total", NULL, 0, f.commit_failures);
    http_mtext_family(b, "sbemu_store_commit_seconds", HTTP_MTEXT_HISTOGRAM,
                      "Time from a transaction's send to PostgreSQL's answer, for committed transactions.");
    http_mtext_histogram(b, "sbemu_store_commit_seconds", NULL, 0, store_commit_seconds_bounds,
                         STORE_COMMIT_SECONDS_NBOUNDS, f.commit_seconds.counts, f.commit_seconds.sum);
    http_mtext_family(b, "sbemu_store_commit_batch_operations", HTTP_MTEXT_HISTOGRAM,
                      "Operations per committed transaction (group commit), each message of a send or settlement "
                      "counting as one.");
    http_mtext_histogram(b, "sbemu_store_commit_batch_operations", NULL, 0, store_batch_size_bounds,
                         STORE_BATCH_SIZE_NBOUNDS, f.batch_size.counts, f.batch_size.sum);
    http_mtext_family(b, "sbemu_store_pending_operations", HTTP_MTEXT_GAUGE,
                      "Operations waiting for the next commit.");
    http_mtext_u64(b, "sbemu_store_pending_operations", NULL, 0, f.pending_ops);
    http_mtext_family(b, "sbemu_store_inflight_operations", HTTP_MTEXT_GAUGE,
                      "Operations of the transaction being committed now.");
    http_mtext_u64(b, "sbemu_store_inflight_operations", NULL, 0, f.inflight_ops);
    http_mtext_family(b, "sbemu_store_pending_bytes", HTTP_MTEXT_GAUGE,
                      "Bytes of the operations pending or being committed (what receivers' credit waits on).");
    http_mtext_u64(b, "sbemu_store_pending_bytes", NULL, 0, f.held_bytes);
}

/* ---- the request ---- */

static void on_counts(void *ctx, sb_status st, const store_admin_counts_row *rows, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    http_xml_buf b;
    http_xml_buf_init(&b);
    write_entity_counters(&b, r);
    write_entity_gauges(&b, r, st, rows, n);
    const broker_door_figures *doors[2];
    size_t ndoors = 0;
    if (r->plane && r->plane->wire) {
        write_wire(&b, r->plane->wire);
        doors[ndoors++] = r->plane->wire;
    }
    if (r->plane)
        doors[ndoors++] = &r->plane->figures;
    write_refusals(&b, doors, ndoors);
    write_store(&b, broker_store(r->broker));
    size_t len = 0;
    char *body = http_xml_take(&b, &len);
    http_respond_text(r, SB_OK, HTTP_MTEXT_CONTENT_TYPE, body, len);
}

/* A refusal in plain text, as a scraper shows it. */
static void refuse(http_req *r, sb_status st, const char *text)
{
    size_t n = strlen(text);
    char *body = ent_malloc(n + 2);
    if (body) {
        memcpy(body, text, n);
        memcpy(body + n, "\n", 2);
    }
    http_respond_text(r, st, "text/plain; charset=utf-8", body, n + 1);
}

void http_metrics(http_req *r)
{
    if (r->method != HTTP_GET) {
        refuse(r, SB_ERR_METHOD_NOT_ALLOWED,
               "/metrics takes GET only (Prometheus' scrape, in its text format 0.0.4); this method changes nothing.");
        return;
    }
    if (!r->broker) {
        refuse(r, SB_ERR_SERVER_BUSY, "The emulator is starting; /metrics answers once it is ready.");
        return;
    }
    if (r->plane && r->plane->metrics_token_required) {
        char why[512], text[1024];
        if (http_auth_check(r, why, sizeof why) != SB_OK) {
            snprintf(text, sizeof text,
                     "Unauthorized: %s. This emulator runs with --metrics-token-required: give Prometheus the "
                     "management API's SharedAccessSignature token as its Authorization header.",
                     why);
            refuse(r, SB_ERR_UNAUTHORIZED, text);
            return;
        }
    }
    store_admin_counts(broker_store(r->broker), on_counts, r);
}
