/* Subscriptions over the ATOM API: GET, PUT (create, with the rule it starts
 * with; update with If-Match) and DELETE of /<topic>/Subscriptions/<name>,
 * and the list GET /<topic>/Subscriptions. Entries are identified by
 * <topic>/Subscriptions/<name>: JS takes both names from that path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_session.h"
#include "http_apply.h"
#include "http_describe.h"
#include "http_internal.h"

static void subscription_entry(http_xml_buf *b, const http_req *r, const char *base, const void *row, bool top_level)
{
    const store_admin_subscription *s = row;
    char path[ENT_ENTITY_PATH_SIZE + ENT_SUBSCRIPTION_NAME_SIZE + 16];
    snprintf(path, sizeof path, "%s/Subscriptions/%s", s->props.topic, s->props.name);
    http_describe_entry_begin(b, base, path, s->props.name, &s->rt, top_level);
    http_describe_subscription(b, s, r->host);
    http_xml_entry_end(b);
}

/* The path error texts name: <topic>/Subscriptions/<name>. */
static const char *sub_path(http_req *r, char *buf, size_t size)
{
    snprintf(buf, size, "%s/Subscriptions/%s", r->entity, r->sub);
    return buf;
}

static int keep_names(http_req *r, const char *topic, const char *name)
{
    return http_req_keep(r, r->entity, sizeof r->entity, topic, "topic") ||
           http_req_keep(r, r->sub, sizeof r->sub, name, "subscription");
}

static void respond_rows(http_req *r, sb_status st, const store_admin_subscription *rows, size_t n, bool put)
{
    char path[sizeof r->entity + sizeof r->sub + 16];
    if (st == SB_ERR_NOT_ALLOWED) {
        char why[sizeof path + 160];
        sb_status refused = ent_session_requires_session_fixed(
            "subscription", sub_path(r, path, sizeof path), n && rows[0].props.requires_session, why, sizeof why);
        http_respond_error(r, refused, "%s", why);
        return;
    }
    if (st == SB_OK && n == 0)
        st = put ? SB_ERR_INTERNAL : SB_ERR_NOT_FOUND;
    if (st != SB_OK) {
        /* a create on a missing topic names the topic */
        http_respond_store_error(r, st, put && !r->if_match && st == SB_ERR_NOT_FOUND ? r->entity
                                                                                         : sub_path(r, path, sizeof path));
        return;
    }
    size_t len = 0;
    char *body = http_entry_body(r, &rows[0], subscription_entry, &len);
    if (!body)
        http_respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
    else if (put)
        http_answer_after_refill(r, !r->if_match, body, len);
    else
        http_respond_xml(r, SB_OK, false, body, len);
}

static void on_got(void *ctx, sb_status st, const store_admin_subscription *rows, size_t n, int64_t total)
{
    (void)total;
    http_req *r = ctx;
    if (!http_req_gone(r))
        respond_rows(r, st, rows, n, false);
}

void http_subscription_get(http_req *r, const char *topic, const char *name)
{
    if (http_req_enrich(r) || keep_names(r, topic, name))
        return;
    store_admin_get_subscription(broker_store(r->broker), r->ns, r->entity, r->sub, on_got, r);
}

static void on_put(void *ctx, sb_status st, const store_admin_subscription *rows, size_t n, int64_t total)
{
    (void)total;
    http_req *r = ctx;
    if (!http_req_gone(r))
        respond_rows(r, st, rows, n, true);
}

static void rule_free(void *p)
{
    broker_rule_def_free(p);
    ent_free(p);
}

void http_subscription_put(http_req *r, const char *topic, const char *name)
{
    if (keep_names(r, topic, name))
        return;
    http_xml_entry e;
    if (http_req_entry(r, &e))
        return;
    ent_subscription_props s;
    char err[1024];
    bool has_rule = false;
    sb_status st = ent_subscription_props_init(&s, topic, name, err, sizeof err);
    if (st == SB_OK)
        st = http_apply_subscription(&s, &e, &has_rule, err, sizeof err);
    if (st == SB_OK && has_rule && r->if_match)
        st = SB_ERR_ARGUMENT,
        snprintf(err, sizeof err, "%s: %s is taken only when the subscription is created; change its rules through "
                 "/%s/Subscriptions/%s/Rules", HTTP_APPLY_SUBSCRIPTION, HTTP_APPLY_DEFAULT_RULE, topic, name);
    broker_rule_def *rule = NULL;
    if (st == SB_OK && has_rule) {
        /* the definition (its texts) must live until the store has copied them */
        if (!(rule = ent_calloc(1, sizeof *rule)))
            st = SB_ERR_INTERNAL, snprintf(err, sizeof err, "The emulator ran out of memory.");
        else
            st = http_apply_rule(rule, &e, HTTP_APPLY_DEFAULT_RULE, NULL, err, sizeof err);
    }
    http_xml_entry_free(&e);
    if (st != SB_OK) {
        if (rule)
            rule_free(rule);
        http_respond_error(r, st, "%s", err);
        return;
    }
    if (rule) {
        r->work = rule;
        r->work_free = rule_free;
    }
    store_admin_put_subscription(broker_store(r->broker), r->ns, &s, rule ? &rule->row : NULL, r->if_match, r->now_ms, on_put, r);
}

static void on_deleted(void *ctx, sb_status st)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    char path[sizeof r->entity + sizeof r->sub + 16];
    if (st != SB_OK)
        http_respond_store_error(r, st, sub_path(r, path, sizeof path));
    else
        http_answer_after_refill(r, false, NULL, 0);
}

void http_subscription_delete(http_req *r, const char *topic, const char *name)
{
    if (keep_names(r, topic, name))
        return;
    store_admin_delete_subscription(broker_store(r->broker), r->ns, r->entity, r->sub, on_deleted, r);
}

static void on_listed(void *ctx, sb_status st, const store_admin_subscription *rows, size_t n, int64_t total)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    char path[sizeof r->entity + 16];
    snprintf(path, sizeof path, "%s/Subscriptions", r->entity);
    if (st != SB_OK)
        http_respond_store_error(r, st, st == SB_ERR_NOT_FOUND ? r->entity : path);
    else
        http_respond_feed(r, path, "Subscriptions", rows, n, sizeof *rows, total, subscription_entry);
}

void http_subscription_list(http_req *r, const char *topic)
{
    if (http_req_keep(r, r->entity, sizeof r->entity, topic, "topic") || http_req_paging(r))
        return;
    store_admin_list_subscriptions(broker_store(r->broker), r->ns, r->entity, r->skip, r->top, on_listed, r);
}
