/* com.microsoft:add-rule, remove-rule and enumerate-rules on a subscription's
 * $management node: the request is read by mgmt_rule_decode.c, the rows are
 * kept by sql/store_rules.c, the answer is written by mgmt_rule_encode.c. */
#include <proton/connection.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_log.h"
#include "mgmt_rules.h"

static const char *host_of(const mgmt_req *r)
{
    const char *h = pn_connection_remote_hostname(r->lk->conn->driver.connection);
    return h && *h ? h : "localhost";
}

static const char *kind_name(ent_kind k)
{
    return k == ENT_KIND_QUEUE ? "a queue" : k == ENT_KIND_TOPIC ? "a topic" : "a subscription";
}

/* Rules live on subscriptions; on a queue, a topic or a dead-letter queue the
 * operation is refused (400 amqp:not-allowed) and false returned. */
static bool on_subscription(mgmt_req *r)
{
    const ent_entity *e = &r->lk->entity;
    if (e->kind == ENT_KIND_SUBSCRIPTION && r->lk->subqueue == 0)
        return true;
    mgmt_respond_error(r, SB_ERR_NOT_ALLOWED,
                       "The operation '%s' applies to subscriptions only, and '%s%s' is %s. Rules are managed on "
                       "'<topic>/Subscriptions/<subscription>/$management'.",
                       r->operation, e->name, r->lk->subqueue ? "/$DeadLetterQueue" : "",
                       r->lk->subqueue ? "a dead-letter queue" : kind_name(e->kind));
    return false;
}

/* What a store callback needs besides the request. */
typedef struct rule_call {
    mgmt_req *r;
    bool correlation;
    char name[BROKER_RULE_NAME_BYTES_MAX];
} rule_call;

static rule_call *rule_call_new(mgmt_req *r, const char *name)
{
    rule_call *c = ent_calloc(1, sizeof *c);
    if (!c) {
        mgmt_respond_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory answering the request.");
        return NULL;
    }
    c->r = r;
    snprintf(c->name, sizeof c->name, "%s", name);
    return c;
}

static void on_refilled(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)st, (void)e, (void)route;
    rule_call *c = ctx;
    mgmt_send(c->r, mgmt_response(c->r, SB_OK)); /* the row is committed whatever the refill did */
    ent_free(c);
}

/* Answers a committed rule change once this emulator's cache holds it, so
 * that the next message the client sends is routed by the new rules (the
 * NOTIFY alone would refill the cache too, but maybe after that send). */
static void answer_after_refill(rule_call *c)
{
    broker_after_refill(c->r->lk->conn->srv->broker, on_refilled, c);
}

static void on_added(void *ctx, sb_status st, int64_t count)
{
    rule_call *c = ctx;
    mgmt_req *r = c->r;
    const char *sub = r->lk->entity.name;
    switch (st) {
    case SB_OK:
        answer_after_refill(c);
        return;
    case SB_ERR_ALREADY_EXISTS:
        mgmt_respond_error(r, st,
                           "The messaging entity 'sb://%s/%s/Rules/%s' already exists (rule names are not "
                           "case-sensitive). To know more visit https://aka.ms/sbResourceMgrExceptions.",
                           host_of(r), sub, c->name);
        break;
    case SB_ERR_NOT_FOUND:
        mgmt_respond_error(r, st,
                           "The messaging entity 'sb://%s/%s' could not be found. To know more visit "
                           "https://aka.ms/sbResourceMgrExceptions.",
                           host_of(r), sub);
        break;
    case SB_ERR_QUOTA_EXCEEDED:
        mgmt_respond_error(r, st,
                           "The topic of subscription '%s' already has %lld %s filters over its subscriptions; the "
                           "limit is %d per topic.",
                           sub, (long long)count, c->correlation ? "correlation" : "SQL",
                           c->correlation ? BROKER_RULES_CORRELATION_FILTERS_PER_TOPIC
                                          : BROKER_RULES_SQL_FILTERS_PER_TOPIC);
        break;
    default:
        mgmt_respond_error(r, st, "The emulator's store could not add rule '%s'; retry.", c->name);
        break;
    }
    ent_free(c);
}

void mgmt_add_rule(mgmt_req *r)
{
    if (!on_subscription(r))
        return;
    broker_rule_def def;
    sb_status st;
    char err[1024];
    if (mgmt_rule_def_decode(r->body, &def, &st, err, sizeof err)) {
        broker_rule_def_free(&def);
        mgmt_respond_error(r, st, "%s", err);
        return;
    }
    rule_call *c = rule_call_new(r, def.name);
    if (!c) {
        broker_rule_def_free(&def);
        return;
    }
    c->correlation = def.kind == ENT_FILTER_KIND_CORRELATION;
    mgmt_hold(r);
    store_rule_add(r->lk->conn->srv->store, r->lk->entity.id, &def.row,
                   c->correlation ? BROKER_RULES_CORRELATION_FILTERS_PER_TOPIC : BROKER_RULES_SQL_FILTERS_PER_TOPIC,
                   r->now_ms, on_added, c); /* the store copied the row's texts */
    broker_rule_def_free(&def);
}

static void on_removed(void *ctx, sb_status st)
{
    rule_call *c = ctx;
    mgmt_req *r = c->r;
    if (st == SB_OK) {
        answer_after_refill(c);
        return;
    }
    if (st == SB_ERR_NOT_FOUND) /* JS maps amqp:not-found to MessagingEntityNotFound by this wording */
        mgmt_respond_error(r, st,
                           "The messaging entity 'sb://%s/%s/Rules/%s' could not be found. To know more visit "
                           "https://aka.ms/sbResourceMgrExceptions.",
                           host_of(r), r->lk->entity.name, c->name);
    else
        mgmt_respond_error(r, st, "The emulator's store could not remove rule '%s'; retry.", c->name);
    ent_free(c);
}

void mgmt_remove_rule(mgmt_req *r)
{
    if (!on_subscription(r))
        return;
    char name[BROKER_RULE_NAME_BYTES_MAX], err[256];
    if (mgmt_arg_string(r->body, "rule-name", true, name, sizeof name, err, sizeof err)) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    rule_call *c = rule_call_new(r, name);
    if (!c)
        return;
    mgmt_hold(r);
    store_rule_remove(r->lk->conn->srv->store, r->lk->entity.id, name, r->now_ms, on_removed, c);
}

static void on_listed(void *ctx, sb_status st, const store_rule *rules, size_t n)
{
    mgmt_req *r = ctx;
    if (mgmt_reply_failed_or_empty(r, st, n, "The emulator's store could not read the rules; retry."))
        return;
    pn_message_t *resp = mgmt_response(r, SB_OK);
    char err[512];
    if (resp && mgmt_rules_encode(pn_message_body(resp), rules, n, err, sizeof err)) {
        pn_message_free(resp);
        LOG_WARN("conn %llu: enumerate-rules on '%s': %s", (unsigned long long)r->lk->conn->id, r->lk->entity.name,
                 err);
        mgmt_respond_error(r, SB_ERR_INTERNAL, "%s", err);
        return;
    }
    mgmt_send(r, resp);
}

void mgmt_enumerate_rules(mgmt_req *r)
{
    if (!on_subscription(r))
        return;
    char err[256];
    int64_t skip = 0, top = INT32_MAX;
    if (mgmt_arg_long(r->body, "skip", false, &skip, err, sizeof err) < 0 ||
        mgmt_arg_long(r->body, "top", false, &top, err, sizeof err) < 0) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT, "%s", err);
        return;
    }
    if (skip < 0 || top < 0) {
        mgmt_respond_error(r, SB_ERR_ARGUMENT_RANGE, "'%s' must not be negative, not %lld.", skip < 0 ? "skip" : "top",
                           (long long)(skip < 0 ? skip : top));
        return;
    }
    if (top == 0) {
        mgmt_send(r, mgmt_response(r, SB_NO_CONTENT));
        return;
    }
    if (top > MGMT_RULES_PAGE_MAX)
        top = MGMT_RULES_PAGE_MAX;
    mgmt_hold(r);
    store_rule_list(r->lk->conn->srv->store, r->lk->entity.id, skip, top, on_listed, r);
}
