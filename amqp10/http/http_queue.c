/* Queues over the ATOM API, and the paths that name a queue or a topic:
 * GET, PUT (create; update with If-Match) and DELETE of /<name>, and
 * GET /$Resources/Queues. A PUT's description says which it makes
 * (QueueDescription or TopicDescription); GET and DELETE find either. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_session.h"
#include "http_apply.h"
#include "http_describe.h"
#include "http_internal.h"

static void queue_entry(http_xml_buf *b, const http_req *r, const char *base, const void *row, bool top_level)
{
    const store_admin_queue *q = row;
    http_describe_entry_begin(b, base, q->props.name, q->props.name, &q->rt, top_level);
    http_describe_queue(b, q, r->host, broker_settings_of(r->broker)->max_message_size / 1024);
    http_xml_entry_end(b);
}

/* ---- GET /<name> ---- */

static void on_topic_got(void *ctx, sb_status st, const store_admin_topic *rows, size_t n, int64_t total)
{
    (void)total;
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st == SB_OK && n == 0)
        st = SB_ERR_NOT_FOUND;
    if (st != SB_OK)
        http_respond_store_error(r, st, r->entity);
    else
        http_topic_respond(r, &rows[0], false, false);
}

static void on_queue_got(void *ctx, sb_status st, const store_admin_queue *rows, size_t n, int64_t total)
{
    (void)total;
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK) {
        http_respond_store_error(r, st, r->entity);
    } else if (n == 0) { /* a topic, maybe */
        store_admin_get_topic(broker_store(r->broker), r->ns, r->entity, on_topic_got, r);
    } else {
        size_t len = 0;
        char *body = http_entry_body(r, &rows[0], queue_entry, &len);
        http_respond_xml(r, SB_OK, false, body, len);
    }
}

void http_entity_get(http_req *r, const char *name)
{
    if (http_req_enrich(r) || http_req_keep(r, r->entity, sizeof r->entity, name, "queue or topic"))
        return;
    store_admin_get_queue(broker_store(r->broker), r->ns, r->entity, on_queue_got, r);
}

/* ---- PUT /<name> ---- */

void http_entity_put(http_req *r, const char *name)
{
    http_xml_entry e;
    if (http_req_entry(r, &e))
        return;
    if (!strcmp(e.description, HTTP_APPLY_TOPIC))
        http_topic_put(r, name, &e);
    else if (!strcmp(e.description, HTTP_APPLY_QUEUE))
        http_queue_put(r, name, &e);
    else
        http_respond_error(r, SB_ERR_ARGUMENT, "A PUT on '/%s' takes a <%s> or a <%s>, not a <%s>.", name,
                           HTTP_APPLY_QUEUE, HTTP_APPLY_TOPIC, e.description);
    http_xml_entry_free(&e);
}

static void on_queue_put(void *ctx, sb_status st, const store_admin_queue *rows, size_t n, int64_t total)
{
    (void)total;
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st == SB_ERR_NOT_ALLOWED) {
        char why[ENT_ENTITY_PATH_SIZE + 160];
        sb_status refused = ent_session_requires_session_fixed("queue", r->entity, n && rows[0].props.requires_session,
                                                               why, sizeof why);
        http_respond_error(r, refused, "%s", why);
        return;
    }
    if (st != SB_OK || n == 0) {
        http_respond_store_error(r, st == SB_OK ? SB_ERR_INTERNAL : st, r->entity);
        return;
    }
    size_t len = 0;
    char *body = http_entry_body(r, &rows[0], queue_entry, &len);
    if (!body)
        http_respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
    else
        http_answer_after_refill(r, !r->if_match, body, len);
}

void http_queue_put(http_req *r, const char *name, const http_xml_entry *e)
{
    ent_queue_props q;
    char err[1024];
    sb_status st = ent_queue_props_init(&q, name, err, sizeof err);
    if (st == SB_OK)
        st = http_apply_queue(&q, e, broker_settings_of(r->broker)->max_message_size / 1024, err, sizeof err);
    if (st != SB_OK) {
        http_respond_error(r, st, "%s", err);
        return;
    }
    snprintf(r->entity, sizeof r->entity, "%s", q.name);
    store_admin_put_queue(broker_store(r->broker), r->ns, &q, r->if_match, r->now_ms, on_queue_put, r);
}

/* ---- DELETE /<name> ---- */

static void on_deleted(void *ctx, sb_status st)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK)
        http_respond_store_error(r, st, r->entity);
    else
        http_answer_after_refill(r, false, NULL, 0);
}

void http_entity_delete(http_req *r, const char *name)
{
    if (http_req_keep(r, r->entity, sizeof r->entity, name, "queue or topic"))
        return;
    store_admin_delete_entity(broker_store(r->broker), r->ns, r->entity, on_deleted, r);
}

/* ---- GET /$Resources/Queues ---- */

static void on_queues_listed(void *ctx, sb_status st, const store_admin_queue *rows, size_t n, int64_t total)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK)
        http_respond_store_error(r, st, "$Resources/Queues");
    else
        http_respond_feed(r, "$Resources/Queues", "Queues", rows, n, sizeof *rows, total, queue_entry);
}

void http_queue_list(http_req *r)
{
    if (http_req_paging(r))
        return;
    store_admin_list_queues(broker_store(r->broker), r->ns, r->skip, r->top, on_queues_listed, r);
}
