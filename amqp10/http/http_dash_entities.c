/* GET /$sbemu/api/entities: the namespace and its queues, topics and
 * subscriptions (with how many rules each has), their properties from the
 * entity cache and their counts from the database (one statement,
 * store_admin_counts, as GET /metrics reads them: every replica on the
 * database shows the same). The page builds its tree from it; the event
 * stream sends the same document when it changes (http_dash_live.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_config.h"
#include "http_dash.h"

static json_t *entity_json(const ent_cache *cache, const ent_entity *e, const store_admin_counts_row *row)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const char *path = e ? e->name : row->path;
    ent_kind kind = e ? e->kind : row->kind;
    json_object_set_new(o, "id", json_integer(e ? e->id : row->id));
    json_object_set_new(o, "kind", json_string(http_dash_kind_name(kind)));
    json_object_set_new(o, "path", json_string(path));
    if (kind == ENT_KIND_SUBSCRIPTION) {
        const char *sep = strstr(path, "/Subscriptions/");
        json_object_set_new(o, "topic", sep ? json_stringn(path, (size_t)(sep - path)) : json_null());
        json_object_set_new(o, "name", json_string(sep ? sep + strlen("/Subscriptions/") : path));
    } else {
        json_object_set_new(o, "name", json_string(path));
    }
    if (e) {
        json_object_set_new(o, "status", json_string(e->status));
        json_object_set_new(o, "requiresSession", json_boolean(e->requires_session));
        if (kind != ENT_KIND_TOPIC) {
            json_object_set_new(o, "lockDurationMs", json_integer(e->lock_duration_ms));
            json_object_set_new(o, "maxDeliveryCount", json_integer(e->max_delivery_count));
            json_object_set_new(o, "deadLetteringOnMessageExpiration", json_boolean(e->dead_lettering_on_expiration));
            json_object_set_new(o, "forwardTo", json_string(e->forward_to));
            json_object_set_new(o, "forwardDeadLetteredMessagesTo", json_string(e->forward_dead_lettered_to));
        }
        json_object_set_new(o, "defaultMessageTimeToLiveMs", json_integer(e->default_ttl_ms));
        if (kind != ENT_KIND_SUBSCRIPTION) {
            json_object_set_new(o, "requiresDuplicateDetection", json_boolean(e->requires_duplicate_detection));
            json_object_set_new(o, "maxSizeInMegabytes", json_integer(e->max_size_mb));
        }
        if (kind == ENT_KIND_SUBSCRIPTION) {
            size_t nrules = 0;
            ent_cache_rules(cache, e, &nrules);
            json_object_set_new(o, "rules", json_integer((json_int_t)nrules));
        }
    }
    if (row) {
        /* active holds deferred messages too, as Service Bus counts them */
        json_object_set_new(o, "counts",
                            json_pack("{s:I, s:I, s:I, s:I, s:i, s:i}", "active", (json_int_t)row->active,
                                      "deferred", (json_int_t)row->deferred, "scheduled", (json_int_t)row->scheduled,
                                      "deadLetter", (json_int_t)row->dead_letter, "transfer", 0,
                                      "transferDeadLetter", 0));
        json_object_set_new(o, "sizeBytes", json_integer(row->size_in_bytes));
    }
    return o;
}

static int by_name(const void *a, const void *b)
{
    return strcasecmp((*(const ent_entity *const *)a)->name, (*(const ent_entity *const *)b)->name);
}

json_t *http_dash_entities_json(const http_plane *plane, const store_admin_counts_row *rows, size_t n)
{
    const ent_cache *cache = broker_cache(plane->broker);
    json_t *list = json_array(), *doc = json_object();
    if (!list || !doc) {
        json_decref(list);
        json_decref(doc);
        return NULL;
    }
    if (rows) {
        /* the database's list (sorted by path): an entity made a moment ago with SQL shows before the cache has it;
         * the dashboard is the default namespace's */
        for (size_t i = 0; i < n; i++)
            if (rows[i].namespace_id == ENT_NAMESPACE_DEFAULT_ID)
                json_array_append_new(list,
                                      entity_json(cache, cache ? ent_cache_get(cache, rows[i].id) : NULL, &rows[i]));
    } else if (cache) {
        size_t count = ent_cache_count(cache);
        const ent_entity **v = count ? ent_malloc(count * sizeof *v) : NULL;
        size_t k = 0;
        for (size_t i = 0; v && i < count; i++)
            if (ent_cache_at(cache, i)->namespace_id == ENT_NAMESPACE_DEFAULT_ID)
                v[k++] = ent_cache_at(cache, i);
        count = k;
        if (v)
            qsort(v, count, sizeof *v, by_name);
        for (size_t i = 0; v && i < count; i++)
            json_array_append_new(list, entity_json(cache, v[i], NULL));
        ent_free(v);
    }
    const char *ns = plane->namespace_name ? plane->namespace_name : ENT_CONFIG_DEFAULT_NAMESPACE;
    json_object_set_new(doc, "namespace", json_string(ns));
    json_object_set_new(doc, "readOnly", json_boolean(plane->dashboard_read_only));
    json_object_set_new(doc, "countsRead", json_boolean(rows != NULL));
    json_object_set_new(doc, "clockOffsetMs", json_integer(ent_clock_offset_ms()));
    json_object_set_new(doc, "entities", list);
    return doc;
}

static void on_counts(void *ctx, sb_status st, const store_admin_counts_row *rows, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the entities' counts");
        return;
    }
    json_t *doc = r->plane ? http_dash_entities_json(r->plane, rows, n) : NULL;
    if (!doc) {
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    http_dash_json(r, SB_OK, doc);
}

void http_dash_entities(http_req *r) { store_admin_counts(broker_store(r->broker), on_counts, r); }
