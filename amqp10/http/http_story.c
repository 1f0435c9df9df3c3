/* Each message's story over HTTP (README "Each message's story"), behind the
 * management API's SAS check:
 *
 *   GET /$sbemu/story?messageId=<id>                      its events, oldest first, across entities
 *   GET /$sbemu/story?entity=<path>&sequenceNumber=<n>    the story of the message n names there
 *   GET /$sbemu/story?entity=<path>[&top=<n>][&page=<p>]  the entity's latest events, newest first
 *
 * The story is the database's (sql/store_story.h), so any emulator on it
 * answers for all of them. What a query may ask, what each kind is called
 * and which of an event's columns it shows under which key are
 * entities/ent_story.h's; this file checks the entity, asks the store and
 * writes JSON. Every refusal is JSON {"error": "..."}: 400 naming the
 * argument, 404 for an entity that does not exist or a message nothing was
 * recorded of, 405 for another method. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ent_address.h"
#include "ent_alloc.h"
#include "ent_log.h"
#include "ent_namespace.h"
#include "ent_story.h"
#include "http_router.h"
#include "store_story.h"

/* The query arguments this resource takes; any other is refused, so a typo
 * (seqNumber) is not mistaken for a request of the entity's latest events. */
static const char *const known_args[] = {"entity", "sequenceNumber", "messageId", "top", "page", "api-version"};

/* What a request keeps between its steps (r->work). */
typedef struct story_work {
    ent_story_query q;
    char entity[ENT_ENTITY_PATH_SIZE]; /* as asked */
    char message_id[ENT_MESSAGE_ID_SIZE];
    int64_t entity_id;
} story_work;

__attribute__((format(printf, 3, 4))) static void refuse(http_req *r, sb_status st, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->wsi)
        LOG_INFO("http: GET /%s: %d %s", r->path, sb_status_http_code(st), msg);
    http_respond_json_value(r, st, json_pack("{s:s}", "error", msg));
}

static json_t *iso_time(int64_t ms)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char day[32], out[48];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, sizeof out, "%s.%03dZ", day, (int)(ms % 1000));
    return json_string(out);
}

static json_t *uuid_text(const uint8_t u[16])
{
    char s[37];
    snprintf(s, sizeof s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return json_string(s);
}

/* An entity by its path (what the cache knows now), or its id when it is gone. */
static json_t *entity_json(const http_req *r, int64_t id)
{
    const ent_cache *c = broker_cache(r->broker);
    const ent_entity *e = c ? ent_cache_get(c, id) : NULL;
    if (e)
        return json_string(e->name);
    char text[48];
    snprintf(text, sizeof text, "(deleted entity %lld)", (long long)id);
    return json_string(text);
}

/* One event as the answer shows it: the columns its kind gives meaning to. */
static json_t *event_json(const http_req *r, const store_story_event *e)
{
    const char *kind = ent_story_kind_name(e->kind);
    ent_story_shape shape = ent_story_shape_of(e->kind);
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "time", iso_time(e->at_ms));
    json_object_set_new(o, "kind", kind ? json_string(kind) : json_integer(e->kind));
    /* a copy's event in its topic's row: the subscription is the element's number */
    bool in_other_row = shape.number_is_entity && e->has_number;
    json_object_set_new(o, "entity", entity_json(r, in_other_row ? e->number : e->entity_id));
    if (e->subqueue == 1)
        json_object_set_new(o, "subqueue", json_string("$DeadLetterQueue"));
    if (e->has_sequence_number)
        json_object_set_new(o, "sequenceNumber", json_integer(e->sequence_number));
    json_object_set_new(o, "messageId", json_string(e->message_id));
    if (shape.peer && e->connection)
        json_object_set_new(o, "connection", json_integer(e->connection));
    if (shape.peer && e->link)
        json_object_set_new(o, "link", json_string(e->link));
    if (shape.lock && e->locked_until_ms)
        json_object_set_new(o, "lockedUntil", iso_time(e->locked_until_ms));
    if (shape.lock && e->has_lock_token)
        json_object_set_new(o, "lockToken", uuid_text(e->lock_token));
    if (shape.number && e->has_number && !in_other_row)
        json_object_set_new(o, shape.number, json_integer(e->number));
    if (shape.note && e->note)
        json_object_set_new(o, shape.note, json_string(e->note));
    if (shape.description && e->description)
        json_object_set_new(o, shape.description, json_string(e->description));
    if (shape.other && (in_other_row || e->other_entity_id))
        json_object_set_new(o, shape.other, entity_json(r, in_other_row ? e->entity_id : e->other_entity_id));
    return o;
}

static json_t *events_json(const http_req *r, const store_story_event *events, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        if (json_array_append_new(list, event_json(r, &events[i]))) {
            json_decref(list);
            list = NULL;
        }
    return list;
}

/* 0 reads as the default namespace (ent_namespace.h). */
static int32_t ns_of(int32_t ns) { return ns ? ns : ENT_NAMESPACE_DEFAULT_ID; }

/* Whether event e is the request's namespace's to see: its entity (a
 * copy's subscription, for an event told in its topic's row) is in it. An
 * entity since deleted cannot say which namespace it was in: its events are
 * left out (the story is the database's, its namespaces are not each
 * other's). */
static bool in_namespace(const http_req *r, const store_story_event *e)
{
    const ent_cache *c = broker_cache(r->broker);
    bool in_other_row = ent_story_shape_of(e->kind).number_is_entity && e->has_number;
    const ent_entity *x = c ? ent_cache_get(c, in_other_row ? e->number : e->entity_id) : NULL;
    return x && ns_of(x->namespace_id) == ns_of(r->ns);
}

static const char *why_nothing(void)
{
    return store_story_on() ? "" : " (this emulator records no story: it runs with --story off)";
}

static void on_story(void *ctx, sb_status st, const store_story_event *events, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    story_work *w = r->work;
    if (st != SB_OK) {
        refuse(r, st == SB_ERR_SERVER_BUSY ? st : SB_ERR_INTERNAL,
               "The emulator's store could not read the story (%s); retry.", sb_status_name(st));
        return;
    }
    bool truncated = n >= ENT_STORY_MESSAGE_EVENTS_MAX;
    json_t *list = NULL;
    if (w->q.kind == ENT_STORY_OF_ENTITY) {
        list = events_json(r, events, n); /* the entity's (and its topic's copies to it): its namespace's */
    } else {
        /* a MessageId is not unique across namespaces: only this one's events */
        store_story_event *mine = n ? ent_malloc(n * sizeof *mine) : NULL;
        size_t k = 0;
        for (size_t i = 0; mine && i < n; i++)
            if (in_namespace(r, &events[i]))
                mine[k++] = events[i];
        list = !n || mine ? events_json(r, mine, k) : NULL;
        ent_free(mine);
        events = NULL;
        n = list ? json_array_size(list) : 0;
    }
    if (!list) {
        http_respond_json_value(r, SB_ERR_INTERNAL, NULL);
        return;
    }
    if (w->q.kind == ENT_STORY_OF_ENTITY) {
        json_t *o = json_pack("{s:s s:o}", "entity", w->entity, "events", list);
        if (o && n == (size_t)w->q.top) {
            char next[64];
            ent_story_cursor_format((ent_story_cursor){events[n - 1].id, events[n - 1].ord}, next, sizeof next);
            json_object_set_new(o, "next", json_string(next));
        }
        http_respond_json_value(r, SB_OK, o);
        return;
    }
    if (!n) {
        json_decref(list);
        if (w->q.kind == ENT_STORY_BY_SEQUENCE)
            refuse(r, SB_ERR_NOT_FOUND,
                   "Nothing is recorded of sequence number %lld in '%s': no such message, or its story is older than"
                   " --story-retention%s.",
                   (long long)w->q.sequence_number, w->entity, why_nothing());
        else
            refuse(r, SB_ERR_NOT_FOUND,
                   "Nothing is recorded of messageId '%s': no such message, or its story is older than"
                   " --story-retention%s.",
                   w->message_id, why_nothing());
        return;
    }
    json_t *o = json_pack("{s:O s:o}", "messageId", json_object_get(json_array_get(list, 0), "messageId"), "events",
                          list);
    if (o && truncated)
        json_object_set_new(o, "truncated", json_true());
    http_respond_json_value(r, SB_OK, o);
}

static void on_entity(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)route;
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    story_work *w = r->work;
    if (st == SB_ERR_NOT_FOUND || (st == SB_OK && !e)) {
        refuse(r, SB_ERR_NOT_FOUND, "There is no queue, topic or subscription '%s' (a subscription is "
               "<topic>/Subscriptions/<name>).", w->entity);
        return;
    }
    if (st != SB_OK) {
        refuse(r, st == SB_ERR_SERVER_BUSY ? st : SB_ERR_INTERNAL,
               "The emulator could not look up entity '%s' (%s); retry.", w->entity, sb_status_name(st));
        return;
    }
    w->entity_id = e->id;
    snprintf(w->entity, sizeof w->entity, "%s", e->name); /* as the namespace spells it */
    store *s = broker_store(r->broker);
    /* a subscription's copies are told in its topic's rows */
    store_story_place at = {e->id, e->kind == ENT_KIND_SUBSCRIPTION ? e->topic_id : 0};
    if (w->q.kind == ENT_STORY_BY_SEQUENCE)
        store_story_of_sequence(s, at, w->q.sequence_number, ENT_STORY_MESSAGE_EVENTS_MAX, on_story, r);
    else if (w->q.kind == ENT_STORY_BY_MESSAGE_ID)
        store_story_of_message(s, at, w->message_id, ENT_STORY_MESSAGE_EVENTS_MAX, on_story, r);
    else
        store_story_of_entity(s, at, w->q.page, w->q.top, on_story, r);
}

void http_story(http_req *r)
{
    if (r->method != HTTP_GET) {
        refuse(r, SB_ERR_METHOD_NOT_ALLOWED, "The story takes GET only.");
        return;
    }
    for (int i = 0; i < r->nargs; i++) {
        bool known = false;
        for (size_t k = 0; k < sizeof known_args / sizeof known_args[0] && !known; k++)
            known = !strcasecmp(r->args[i].name, known_args[k]);
        if (!known) {
            refuse(r, SB_ERR_ARGUMENT, "Unknown argument '%s': the story takes entity, sequenceNumber, messageId, top"
                   " and page.", r->args[i].name);
            return;
        }
    }
    story_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        refuse(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    r->work = w;
    r->work_free = ent_free;
    char why[256];
    if (ent_story_query_parse(http_req_arg(r, "entity"), http_req_arg(r, "sequenceNumber"),
                              http_req_arg(r, "messageId"), http_req_arg(r, "top"), http_req_arg(r, "page"), &w->q,
                              why, sizeof why) != SB_OK) {
        refuse(r, SB_ERR_ARGUMENT, "%s.", why);
        return;
    }
    if (w->q.message_id)
        snprintf(w->message_id, sizeof w->message_id, "%s", w->q.message_id);
    if (!w->q.entity) {
        store_story_of_message(broker_store(r->broker), (store_story_place){0, 0}, w->message_id,
                               ENT_STORY_MESSAGE_EVENTS_MAX, on_story, r);
        return;
    }
    /* a subqueue's events are its entity's (they say which subqueue) */
    ent_address a;
    if (ent_address_parse(w->q.entity, &a) || a.kind != ENT_NODE_ENTITY) {
        refuse(r, SB_ERR_ARGUMENT, "entity '%s' is not an entity path (a queue, a topic or "
               "<topic>/Subscriptions/<name>).", w->q.entity);
        return;
    }
    snprintf(w->entity, sizeof w->entity, "%s", a.entity);
    broker_entity_lookup(r->broker, r->ns, a.entity, on_entity, r); /* may answer at once */
}
