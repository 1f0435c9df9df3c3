/* Entities as the management API writes them (http_describe.h): each
 * description's elements in the order Service Bus writes them (its
 * DataContract order, which the SDKs' own serializers follow), with every
 * element the SDKs' readers insist on, and the runtime figures in place. */
#include "http_describe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_duration.h"
#include "store_rule_json.h"

#define SB_XMLNS " xmlns=\"" HTTP_XML_NS_SB "\" xmlns:i=\"" HTTP_XML_NS_XSI "\""

/* ---- URLs ---- */

void http_describe_url(http_xml_buf *b, const char *base, const char *path, const char *query)
{
    http_xml_raw(b, base);
    http_xml_raw(b, "/");
    http_xml_url_encode(b, path, "/$");
    http_xml_raw(b, "?");
    if (query && *query) {
        http_xml_raw(b, query);
        http_xml_raw(b, "&");
    }
    http_xml_raw(b, "api-version=" HTTP_DESCRIBE_API_VERSION);
}

/* ---- values ---- */

static void leaf_duration(http_xml_buf *b, const char *name, int64_t ms)
{
    char t[ENT_DURATION_TEXT_MAX];
    http_xml_leaf(b, name, ent_duration_format(ms, t, sizeof t));
}

/* ForwardTo and ForwardDeadLetteredMessagesTo as Service Bus gives them
 * back: absolute, on the namespace the client reached. */
static void leaf_forward(http_xml_buf *b, const char *name, const char *host, const char *target)
{
    if (!target || !*target)
        return;
    http_xml_rawf(b, "<%s>sb://", name);
    http_xml_text(b, host);
    http_xml_raw(b, "/");
    http_xml_text(b, target);
    http_xml_rawf(b, "</%s>", name);
}

static void leaf_optional(http_xml_buf *b, const char *name, const char *text)
{
    if (text && *text)
        http_xml_leaf(b, name, text);
}

/* Exactly one attribute, the prefix's declaration: JS reads the counts
 * through it (getXMLNSPrefix). */
static void count_details(http_xml_buf *b, const store_admin_runtime *rt)
{
    http_xml_raw(b, "<CountDetails xmlns:d2p1=\"" HTTP_XML_NS_SB_COUNTS "\">");
    http_xml_leaf_i64(b, "d2p1:ActiveMessageCount", rt->active);
    http_xml_leaf_i64(b, "d2p1:DeadLetterMessageCount", rt->dead_letter);
    http_xml_leaf_i64(b, "d2p1:ScheduledMessageCount", rt->scheduled);
    http_xml_leaf_i64(b, "d2p1:TransferMessageCount", 0);
    http_xml_leaf_i64(b, "d2p1:TransferDeadLetterMessageCount", 0);
    http_xml_raw(b, "</CountDetails>");
}

static void times(http_xml_buf *b, const store_admin_runtime *rt)
{
    http_xml_leaf_time(b, "CreatedAt", rt->created_ms);
    http_xml_leaf_time(b, "UpdatedAt", rt->updated_ms);
    http_xml_leaf_time(b, "AccessedAt", rt->accessed_ms);
}

static int64_t message_count(const store_admin_runtime *rt) { return rt->active + rt->dead_letter + rt->scheduled; }

/* ---- descriptions ---- */

void http_describe_queue(http_xml_buf *b, const store_admin_queue *x, const char *host, int64_t max_message_kb)
{
    const ent_queue_props *q = &x->props;
    http_xml_raw(b, "<QueueDescription" SB_XMLNS ">");
    leaf_duration(b, "LockDuration", q->lock_duration_ms);
    http_xml_leaf_i64(b, "MaxSizeInMegabytes", q->max_size_in_megabytes);
    http_xml_leaf_bool(b, "RequiresDuplicateDetection", q->requires_duplicate_detection);
    http_xml_leaf_bool(b, "RequiresSession", q->requires_session);
    leaf_duration(b, "DefaultMessageTimeToLive", q->default_message_time_to_live_ms);
    http_xml_leaf_bool(b, "DeadLetteringOnMessageExpiration", q->dead_lettering_on_message_expiration);
    leaf_duration(b, "DuplicateDetectionHistoryTimeWindow", q->duplicate_detection_history_time_window_ms);
    http_xml_leaf_i64(b, "MaxDeliveryCount", q->max_delivery_count);
    http_xml_leaf_bool(b, "EnableBatchedOperations", q->enable_batched_operations);
    http_xml_leaf_i64(b, "SizeInBytes", x->rt.size_in_bytes);
    http_xml_leaf_i64(b, "MessageCount", message_count(&x->rt));
    http_xml_leaf_bool(b, "IsAnonymousAccessible", false);
    http_xml_raw(b, "<AuthorizationRules/>");
    http_xml_leaf(b, "Status", ent_entity_status_name(q->status));
    leaf_forward(b, "ForwardTo", host, q->forward_to);
    leaf_optional(b, "UserMetadata", q->user_metadata);
    times(b, &x->rt);
    http_xml_leaf_bool(b, "SupportOrdering", true);
    count_details(b, &x->rt);
    leaf_duration(b, "AutoDeleteOnIdle", q->auto_delete_on_idle_ms);
    http_xml_leaf_bool(b, "EnablePartitioning", q->enable_partitioning);
    http_xml_leaf(b, "EntityAvailabilityStatus", "Available");
    http_xml_leaf_bool(b, "EnableExpress", false);
    leaf_forward(b, "ForwardDeadLetteredMessagesTo", host, q->forward_dead_lettered_messages_to);
    http_xml_leaf_i64(b, "MaxMessageSizeInKilobytes", max_message_kb);
    http_xml_raw(b, "</QueueDescription>");
}

void http_describe_topic(http_xml_buf *b, const store_admin_topic *x, int64_t max_message_kb)
{
    const ent_topic_props *t = &x->props;
    http_xml_raw(b, "<TopicDescription" SB_XMLNS ">");
    leaf_duration(b, "DefaultMessageTimeToLive", t->default_message_time_to_live_ms);
    http_xml_leaf_i64(b, "MaxSizeInMegabytes", t->max_size_in_megabytes);
    http_xml_leaf_bool(b, "RequiresDuplicateDetection", t->requires_duplicate_detection);
    leaf_duration(b, "DuplicateDetectionHistoryTimeWindow", t->duplicate_detection_history_time_window_ms);
    http_xml_leaf_bool(b, "EnableBatchedOperations", t->enable_batched_operations);
    http_xml_leaf_i64(b, "SizeInBytes", x->rt.size_in_bytes);
    http_xml_leaf_bool(b, "FilteringMessagesBeforePublishing", false);
    http_xml_leaf_bool(b, "IsAnonymousAccessible", false);
    http_xml_raw(b, "<AuthorizationRules/>");
    http_xml_leaf(b, "Status", ent_entity_status_name(t->status));
    leaf_optional(b, "UserMetadata", t->user_metadata);
    times(b, &x->rt);
    http_xml_leaf_bool(b, "SupportOrdering", t->support_ordering);
    count_details(b, &x->rt);
    http_xml_leaf_i64(b, "SubscriptionCount", x->rt.subscriptions);
    leaf_duration(b, "AutoDeleteOnIdle", t->auto_delete_on_idle_ms);
    http_xml_leaf_bool(b, "EnablePartitioning", t->enable_partitioning);
    http_xml_leaf(b, "EntityAvailabilityStatus", "Available");
    http_xml_leaf_bool(b, "EnableSubscriptionPartitioning", false);
    http_xml_leaf_bool(b, "EnableExpress", false);
    /* api-version 2024-05 (what the Go SDK 1.11 asks for) reports these; older readers skip them */
    http_xml_leaf_i64(b, "SqlFilterCount", x->rt.sql_filters);
    http_xml_leaf_i64(b, "CorrelationFilterCount", x->rt.correlation_filters);
    http_xml_leaf_i64(b, "MaxMessageSizeInKilobytes", max_message_kb);
    http_xml_raw(b, "</TopicDescription>");
}

void http_describe_subscription(http_xml_buf *b, const store_admin_subscription *x, const char *host)
{
    const ent_subscription_props *s = &x->props;
    http_xml_raw(b, "<SubscriptionDescription" SB_XMLNS ">");
    leaf_duration(b, "LockDuration", s->lock_duration_ms);
    http_xml_leaf_bool(b, "RequiresSession", s->requires_session);
    leaf_duration(b, "DefaultMessageTimeToLive", s->default_message_time_to_live_ms);
    http_xml_leaf_bool(b, "DeadLetteringOnMessageExpiration", s->dead_lettering_on_message_expiration);
    http_xml_leaf_bool(b, "DeadLetteringOnFilterEvaluationExceptions",
                       s->dead_lettering_on_filter_evaluation_exceptions);
    http_xml_leaf_i64(b, "MessageCount", message_count(&x->rt));
    http_xml_leaf_i64(b, "MaxDeliveryCount", s->max_delivery_count);
    http_xml_leaf_bool(b, "EnableBatchedOperations", s->enable_batched_operations);
    http_xml_leaf(b, "Status", ent_entity_status_name(s->status));
    leaf_forward(b, "ForwardTo", host, s->forward_to);
    leaf_optional(b, "UserMetadata", s->user_metadata);
    times(b, &x->rt);
    count_details(b, &x->rt);
    leaf_forward(b, "ForwardDeadLetteredMessagesTo", host, s->forward_dead_lettered_messages_to);
    leaf_duration(b, "AutoDeleteOnIdle", s->auto_delete_on_idle_ms);
    http_xml_leaf(b, "EntityAvailabilityStatus", "Available");
    http_xml_raw(b, "</SubscriptionDescription>");
}

/* ---- rules ---- */

/* A typed value: JS reads the type by a fixed 5-character prefix
 * ("d6p1:"), .NET and Python resolve it; duration and guid are .NET
 * serialization types, the rest XML Schema ones. */
static void key_value(http_xml_buf *b, const ent_filter_prop *p)
{
    const ent_filter_value *v = &p->value;
    char text[96];
    const char *type = "string", *ns = HTTP_XML_NS_XSD, *s = text;
    switch (v->type) {
    case ENT_FV_NULL: type = "string", s = ""; break;
    case ENT_FV_BOOL: type = "boolean", s = v->u.b ? "true" : "false"; break;
    case ENT_FV_INT:
        type = v->u.i >= INT32_MIN && v->u.i <= INT32_MAX ? "int" : "long";
        snprintf(text, sizeof text, "%lld", (long long)v->u.i);
        break;
    case ENT_FV_DOUBLE:
        type = "double";
        if (isinf(v->u.d))
            s = v->u.d < 0 ? "-INF" : "INF";
        else
            ent_fv_format_double(v->u.d, text, sizeof text);
        break;
    case ENT_FV_STRING: s = NULL; break;
    case ENT_FV_TIME: type = "dateTime", ent_fv_format_time(v->u.i, text, sizeof text); break;
    case ENT_FV_DURATION: type = "duration", ns = HTTP_XML_NS_SERIALIZATION, ent_duration_format(v->u.i, text, sizeof text); break;
    case ENT_FV_UUID: type = "guid", ns = HTTP_XML_NS_SERIALIZATION, ent_fv_format_uuid(v->u.uuid, text, sizeof text); break;
    }
    http_xml_raw(b, "<KeyValueOfstringanyType>");
    http_xml_leaf(b, "Key", p->name);
    http_xml_rawf(b, "<Value i:type=\"d6p1:%s\" xmlns:d6p1=\"%s\">", type, ns);
    if (s) {
        http_xml_text(b, s);
    } else {
        /* strings are not NUL-terminated */
        char *copy = ent_malloc(v->u.s.len + 1);
        if (!copy) {
            b->oom = true;
            return;
        }
        memcpy(copy, v->u.s.ptr, v->u.s.len);
        copy[v->u.s.len] = 0;
        http_xml_text(b, copy);
        ent_free(copy);
    }
    http_xml_raw(b, "</Value></KeyValueOfstringanyType>");
}

/* <name> with the values of a JSON object column, or nothing when it has none. */
static int key_values(http_xml_buf *b, const char *name, const char *json, bool always, char *err, size_t errlen)
{
    store_rule_props props;
    if (store_rule_props_parse(json, &props, err, errlen))
        return -1;
    if (props.n || always) {
        http_xml_rawf(b, "<%s>", name);
        for (size_t i = 0; i < props.n; i++)
            key_value(b, &props.props[i]);
        http_xml_rawf(b, "</%s>", name);
    }
    store_rule_props_free(&props);
    return 0;
}

static int correlation(http_xml_buf *b, const char *json, char *err, size_t errlen)
{
    ent_filter_correlation c;
    char *storage = NULL;
    store_rule_props props = {0};
    if (store_rule_correlation_parse(json, &c, &storage, &props, err, errlen))
        return -1;
    const struct {
        const char *name, *value;
    } fields[] = {
        {"CorrelationId", c.correlation_id}, {"MessageId", c.message_id},   {"To", c.to},
        {"ReplyTo", c.reply_to},             {"Label", c.label},            {"SessionId", c.session_id},
        {"ReplyToSessionId", c.reply_to_session_id}, {"ContentType", c.content_type},
    };
    http_xml_raw(b, "<Filter i:type=\"CorrelationFilter\">");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].value)
            http_xml_leaf(b, fields[i].name, fields[i].value);
    http_xml_raw(b, "<Properties>");
    for (size_t i = 0; i < c.nproperties; i++)
        key_value(b, &c.properties[i]);
    http_xml_raw(b, "</Properties></Filter>");
    ent_free(storage);
    store_rule_props_free(&props);
    return 0;
}

static int rule_body(http_xml_buf *b, const store_rule *r, const char *element, char *err, size_t errlen)
{
    const char *ft = r->filter_type ? r->filter_type : "True";
    http_xml_rawf(b, "<%s", element);
    if (!strcmp(element, "RuleDescription"))
        http_xml_raw(b, SB_XMLNS);
    http_xml_raw(b, ">");
    if (!strcmp(ft, "Correlation")) {
        if (correlation(b, r->correlation, err, errlen))
            return -1;
    } else {
        bool sql = !strcmp(ft, "Sql");
        http_xml_rawf(b, "<Filter i:type=\"%s\">", sql ? "SqlFilter" : !strcmp(ft, "False") ? "FalseFilter" : "TrueFilter");
        http_xml_leaf(b, "SqlExpression", sql ? (r->sql_expression ? r->sql_expression : "") : !strcmp(ft, "False") ? "1=0" : "1=1");
        http_xml_leaf_i64(b, "CompatibilityLevel", HTTP_DESCRIBE_COMPATIBILITY_LEVEL);
        if (sql && key_values(b, "Parameters", r->filter_parameters, false, err, errlen))
            return -1;
        http_xml_raw(b, "</Filter>");
    }
    if (r->action_expression && *r->action_expression) {
        http_xml_raw(b, "<Action i:type=\"SqlRuleAction\">");
        http_xml_leaf(b, "SqlExpression", r->action_expression);
        http_xml_leaf_i64(b, "CompatibilityLevel", HTTP_DESCRIBE_COMPATIBILITY_LEVEL);
        if (key_values(b, "Parameters", r->action_parameters, false, err, errlen))
            return -1;
        http_xml_raw(b, "</Action>");
    } else {
        http_xml_raw(b, "<Action i:type=\"EmptyRuleAction\"/>");
    }
    http_xml_leaf_time(b, "CreatedAt", r->created_ms);
    http_xml_leaf(b, "Name", r->name);
    http_xml_rawf(b, "</%s>", element);
    return 0;
}

int http_describe_rule(http_xml_buf *b, const store_rule *r, char *err, size_t errlen)
{
    return rule_body(b, r, "RuleDescription", err, errlen);
}

/* ---- entries ---- */

void http_describe_entry_begin(http_xml_buf *b, const char *base, const char *path, const char *title,
                               const store_admin_runtime *rt, bool top_level)
{
    http_xml_buf id;
    http_xml_buf_init(&id);
    http_describe_url(&id, base, path, NULL);
    char *url = http_xml_take(&id, NULL);
    if (!url) {
        b->oom = true;
        return;
    }
    http_xml_meta m = {url, title, rt ? rt->created_ms : 0, rt ? rt->updated_ms : 0, HTTP_DESCRIBE_NAMESPACE};
    http_xml_entry_begin(b, &m, top_level);
    ent_free(url);
}

void http_describe_feed_begin(http_xml_buf *b, const char *base, const char *path, const char *title, int64_t skip,
                              int64_t top, bool more, int64_t now_ms)
{
    char q[96];
    http_xml_buf self, next;
    http_xml_buf_init(&self);
    http_xml_buf_init(&next);
    snprintf(q, sizeof q, "$skip=%lld&$top=%lld", (long long)skip, (long long)top);
    http_describe_url(&self, base, path, q);
    if (more) {
        snprintf(q, sizeof q, "$skip=%lld&$top=%lld", (long long)(skip + top), (long long)top);
        http_describe_url(&next, base, path, q);
    }
    char *s = http_xml_take(&self, NULL), *n = more ? http_xml_take(&next, NULL) : NULL;
    if (!s || (more && !n))
        b->oom = true;
    else
        http_xml_feed_begin(b, title, s, n, now_ms);
    ent_free(s);
    ent_free(n);
    http_xml_buf_free(&next);
}
