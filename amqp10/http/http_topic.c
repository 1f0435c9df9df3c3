/* Topics over the ATOM API: the PUT of a TopicDescription on /<name> (GET and
 * DELETE of /<name> are http_queue.c's, which find either), and
 * GET /$Resources/Topics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_apply.h"
#include "http_describe.h"
#include "http_internal.h"

static void topic_entry(http_xml_buf *b, const http_req *r, const char *base, const void *row, bool top_level)
{
    const store_admin_topic *t = row;
    http_describe_entry_begin(b, base, t->props.name, t->props.name, &t->rt, top_level);
    http_describe_topic(b, t, broker_settings_of(r->broker)->max_message_size / 1024);
    http_xml_entry_end(b);
}

void http_topic_respond(http_req *r, const store_admin_topic *t, bool created, bool after_refill)
{
    size_t len = 0;
    char *body = http_entry_body(r, t, topic_entry, &len);
    if (!body)
        http_respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
    else if (after_refill)
        http_answer_after_refill(r, created, body, len);
    else
        http_respond_xml(r, SB_OK, false, body, len);
}

static void on_topic_put(void *ctx, sb_status st, const store_admin_topic *rows, size_t n, int64_t total)
{
    (void)total;
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK || n == 0)
        http_respond_store_error(r, st == SB_OK ? SB_ERR_INTERNAL : st, r->entity);
    else
        http_topic_respond(r, &rows[0], !r->if_match, true);
}

void http_topic_put(http_req *r, const char *name, const http_xml_entry *e)
{
    ent_topic_props t;
    char err[1024];
    sb_status st = ent_topic_props_init(&t, name, err, sizeof err);
    if (st == SB_OK)
        st = http_apply_topic(&t, e, broker_settings_of(r->broker)->max_message_size / 1024, err, sizeof err);
    if (st != SB_OK) {
        http_respond_error(r, st, "%s", err);
        return;
    }
    snprintf(r->entity, sizeof r->entity, "%s", t.name);
    store_admin_put_topic(broker_store(r->broker), r->ns, &t, r->if_match, r->now_ms, on_topic_put, r);
}

static void on_topics_listed(void *ctx, sb_status st, const store_admin_topic *rows, size_t n, int64_t total)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK)
        http_respond_store_error(r, st, "$Resources/Topics");
    else
        http_respond_feed(r, "$Resources/Topics", "Topics", rows, n, sizeof *rows, total, topic_entry);
}

void http_topic_list(http_req *r)
{
    if (http_req_paging(r))
        return;
    store_admin_list_topics(broker_store(r->broker), r->ns, r->skip, r->top, on_topics_listed, r);
}
