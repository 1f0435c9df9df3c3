/* Rules over the ATOM API: GET, PUT (create; update with If-Match) and DELETE
 * of /<topic>/Subscriptions/<sub>/Rules/<name>, and the list
 * GET /<topic>/Subscriptions/<sub>/Rules. The subscription is found first;
 * the rule rows then go through store_rules.h, as $management's add-rule,
 * remove-rule and enumerate-rules do (the same per-topic filter limits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "http_apply.h"
#include "http_describe.h"
#include "http_internal.h"

typedef enum rule_step { STEP_GET, STEP_PUT, STEP_DELETE, STEP_LIST } rule_step;

/* What the request carries from the subscription's look-up to the rule's. */
typedef struct rule_work {
    rule_step step;
    int64_t sub_id;
    broker_rule_def def; /* PUT */
} rule_work;

static void work_free(void *p)
{
    rule_work *w = p;
    broker_rule_def_free(&w->def);
    ent_free(w);
}

static void rule_entry(http_xml_buf *b, const http_req *r, const char *base, const void *row, bool top_level)
{
    const store_rule *rule = row;
    char path[sizeof r->entity + sizeof r->sub + ENT_RULE_NAME_SIZE * 4 + 32];
    snprintf(path, sizeof path, "%s/Subscriptions/%s/Rules/%s", r->entity, r->sub, rule->name);
    store_admin_runtime rt = {.created_ms = rule->created_ms, .updated_ms = rule->created_ms};
    http_describe_entry_begin(b, base, path, rule->name, &rt, top_level);
    char err[256];
    if (http_describe_rule(b, rule, err, sizeof err))
        b->oom = true; /* a row plain SQL wrote and no reader reads: answered as a failure */
    http_xml_entry_end(b);
}

static const char *rule_path(http_req *r, char *buf, size_t size)
{
    snprintf(buf, size, "%s/Subscriptions/%s/Rules/%s", r->entity, r->sub, r->rule);
    return buf;
}

static void respond_rule(http_req *r, const store_rule *rule, bool after_refill, bool created)
{
    size_t len = 0;
    char *body = http_entry_body(r, rule, rule_entry, &len);
    if (!body)
        http_respond_error(r, SB_ERR_INTERNAL, "Rule '%s' could not be written (its stored filter or action does "
                           "not read, or memory ran out).", rule->name);
    else if (after_refill)
        http_answer_after_refill(r, created, body, len);
    else
        http_respond_xml(r, SB_OK, false, body, len);
}

/* ---- after the subscription ---- */

static void on_rule_got(void *ctx, sb_status st, const store_rule *rule, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    rule_work *w = r->work;
    char path[sizeof r->entity + sizeof r->sub + sizeof r->rule + 32];
    if (st == SB_OK && n == 0)
        st = SB_ERR_NOT_FOUND;
    if (st != SB_OK)
        http_respond_store_error(r, st, rule_path(r, path, sizeof path));
    else
        respond_rule(r, rule, w->step == STEP_PUT, w->step == STEP_PUT && !r->if_match);
}

static void on_rule_added(void *ctx, sb_status st, int64_t count)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    rule_work *w = r->work;
    char path[sizeof r->entity + sizeof r->sub + sizeof r->rule + 32];
    bool correlation = w->def.kind == ENT_FILTER_KIND_CORRELATION;
    if (st == SB_ERR_QUOTA_EXCEEDED)
        http_respond_error(r, st, "Topic '%s' already has %lld %s filters over its subscriptions; the limit is %d.",
                           r->entity, (long long)count, correlation ? "correlation" : "SQL",
                           correlation ? BROKER_RULES_CORRELATION_FILTERS_PER_TOPIC : BROKER_RULES_SQL_FILTERS_PER_TOPIC);
    else if (st != SB_OK)
        http_respond_store_error(r, st, rule_path(r, path, sizeof path));
    else /* the row as stored (its created time) */
        store_admin_get_rule(broker_store(r->broker), w->sub_id, r->rule, on_rule_got, r);
}

static void on_rule_changed(void *ctx, sb_status st)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    rule_work *w = r->work;
    char path[sizeof r->entity + sizeof r->sub + sizeof r->rule + 32];
    if (st != SB_OK)
        http_respond_store_error(r, st, rule_path(r, path, sizeof path));
    else if (w->step == STEP_DELETE)
        http_answer_after_refill(r, false, NULL, 0);
    else
        store_admin_get_rule(broker_store(r->broker), w->sub_id, r->rule, on_rule_got, r);
}

static void on_rules_listed(void *ctx, sb_status st, const store_rule *rules, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    char path[sizeof r->entity + sizeof r->sub + 32];
    snprintf(path, sizeof path, "%s/Subscriptions/%s/Rules", r->entity, r->sub);
    if (st != SB_OK) {
        http_respond_store_error(r, st, path);
        return;
    }
    /* one more than the page was asked for: whether a next page exists */
    bool more = n > (size_t)r->top;
    if (more)
        n = (size_t)r->top;
    http_respond_feed(r, path, "Rules", rules, n, sizeof *rules, r->skip + (int64_t)n + (more ? 1 : 0), rule_entry);
}

static void on_subscription(void *ctx, sb_status st, const store_admin_subscription *rows, size_t n, int64_t total)
{
    (void)total;
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    rule_work *w = r->work;
    char path[sizeof r->entity + sizeof r->sub + 16];
    snprintf(path, sizeof path, "%s/Subscriptions/%s", r->entity, r->sub);
    if (st == SB_OK && n == 0)
        st = SB_ERR_NOT_FOUND;
    if (st != SB_OK) {
        http_respond_store_error(r, st, path);
        return;
    }
    w->sub_id = rows[0].rt.id;
    store *s = broker_store(r->broker);
    switch (w->step) {
    case STEP_GET: store_admin_get_rule(s, w->sub_id, r->rule, on_rule_got, r); break;
    case STEP_DELETE: store_rule_remove(s, w->sub_id, r->rule, r->now_ms, on_rule_changed, r); break;
    case STEP_LIST: store_rule_list(s, w->sub_id, r->skip, r->top + 1, on_rules_listed, r); break;
    case STEP_PUT:
        if (r->if_match)
            store_admin_update_rule(s, w->sub_id, &w->def.row, r->now_ms, on_rule_changed, r);
        else
            store_rule_add(s, w->sub_id, &w->def.row,
                           w->def.kind == ENT_FILTER_KIND_CORRELATION ? BROKER_RULES_CORRELATION_FILTERS_PER_TOPIC
                                                                      : BROKER_RULES_SQL_FILTERS_PER_TOPIC,
                           r->now_ms, on_rule_added, r);
        break;
    }
}

/* ---- the requests ---- */

static rule_work *begin(http_req *r, rule_step step, const char *topic, const char *sub, const char *name)
{
    if (http_req_keep(r, r->entity, sizeof r->entity, topic, "topic") ||
        http_req_keep(r, r->sub, sizeof r->sub, sub, "subscription") ||
        (name && http_req_keep(r, r->rule, sizeof r->rule, name, "rule")))
        return NULL;
    rule_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        http_respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return NULL;
    }
    w->step = step;
    r->work = w;
    r->work_free = work_free;
    return w;
}

void http_rule_get(http_req *r, const char *topic, const char *sub, const char *name)
{
    if (http_req_enrich(r) || !begin(r, STEP_GET, topic, sub, name))
        return;
    store_admin_get_subscription(broker_store(r->broker), r->ns, r->entity, r->sub, on_subscription, r);
}

void http_rule_delete(http_req *r, const char *topic, const char *sub, const char *name)
{
    if (!begin(r, STEP_DELETE, topic, sub, name))
        return;
    store_admin_get_subscription(broker_store(r->broker), r->ns, r->entity, r->sub, on_subscription, r);
}

void http_rule_list(http_req *r, const char *topic, const char *sub)
{
    if (http_req_paging(r) || !begin(r, STEP_LIST, topic, sub, NULL))
        return;
    store_admin_get_subscription(broker_store(r->broker), r->ns, r->entity, r->sub, on_subscription, r);
}

void http_rule_put(http_req *r, const char *topic, const char *sub, const char *name)
{
    rule_work *w = begin(r, STEP_PUT, topic, sub, name);
    if (!w)
        return;
    http_xml_entry e;
    if (http_req_entry(r, &e))
        return;
    char err[1024];
    sb_status st = http_apply_rule(&w->def, &e, "", r->rule, err, sizeof err);
    http_xml_entry_free(&e);
    if (st != SB_OK) {
        http_respond_error(r, st, "%s", err);
        return;
    }
    store_admin_get_subscription(broker_store(r->broker), r->ns, r->entity, r->sub, on_subscription, r);
}
