/* Sending from the dashboard, through the broker's send path like any
 * client's (broker.h, "sending": the entity's status, the size limit, TTL
 * caps, schedules, sessions, duplicate detection, ForwardTo, a topic's
 * rules), so that receivers wake as for any send (the commit's NOTIFY):
 *
 *   POST send {"entity", "body", "bodyEncoding": "utf8"|"base64", "contentType",
 *              "messageId", "correlationId", "subject", "to", "replyTo",
 *              "replyToSessionId", "sessionId", "partitionKey",
 *              "timeToLive": "PT1H" or milliseconds,
 *              "scheduledEnqueueTime": ISO 8601, "properties": {name: value}}
 *        one message to a queue or topic, its body one data section;
 *   POST resubmit {"entity", "sequenceNumbers": [...]} or {"entity", "all": true}
 *        dead letters of a queue or subscription sent to it again, as they
 *        were sent (a fresh sequence number, delivery count and TTL), then
 *        deleted from the dead-letter subqueue, HTTP_DASH_RESUBMIT_BATCH at
 *        a time; "all" stops at the last dead letter there was when it
 *        began (one dead-lettered again meanwhile is not taken twice). A
 *        dead letter a receiver holds is left alone. Its send
 *        commits before its dead letter is deleted: a crash between the two
 *        leaves both (at least once, never lost). An entity with duplicate
 *        detection is refused: the copy keeps its MessageId and would be
 *        dropped as a duplicate while its dead letter was deleted. */
#include <stdio.h>
#include <string.h>

#include "amqp_codec.h"
#include "amqp_message.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_duration.h"
#include "ent_filter.h"
#include "ent_props.h"
#include "http_dash.h"
#include "store_dash.h"

/* The header's ttl is a uint of milliseconds: a longer TTL cannot be sent. */
#define SEND_TTL_MAX_MS INT64_C(4294967295)

/* ---- the shared part: whole messages into the send path ---- */

/* Checks and commits n messages (spans into buf, which is taken) sent to e
 * through route, as a link's transfer does; cb once committed. SB_OK, or a
 * refusal written into desc (nothing sent, buf freed). */
static sb_status send_whole(http_req *r, const ent_entity *e, const ent_route *route, uint8_t *buf,
                            const size_t *offsets, const size_t *lens, size_t n, store_status_cb cb, void *ctx,
                            char *desc, size_t desclen)
{
    sb_status st = SB_OK;
    uint32_t max = broker_settings_of(r->broker)->max_message_size;
    store_new_message *msgs = ent_calloc(n, sizeof *msgs);
    amqp_msg *parsed = ent_calloc(n, sizeof *parsed);
    int64_t now = ent_clock_now_ms();
    if (!msgs || !parsed) {
        st = ent_fail_status(SB_ERR_INTERNAL, desc, desclen, "The emulator ran out of memory.");
    } else if (!ent_entity_status_allows_send(e->status)) {
        st = ent_fail_status(SB_ERR_ENTITY_DISABLED, desc, desclen,
                             "The messaging entity '%s' is %s; sending is not allowed.", e->name, e->status);
    }
    for (size_t i = 0; st == SB_OK && i < n; i++) {
        char why[256];
        if (lens[i] > max) {
            st = ent_fail_status(SB_ERR_MESSAGE_SIZE_EXCEEDED, desc, desclen,
                                 "The message of %zu bytes exceeds the maximum message size of %u bytes.", lens[i],
                                 max);
        } else if (amqp_msg_parse(buf + offsets[i], lens[i], &parsed[i], why, sizeof why)) {
            st = ent_fail_status(SB_ERR_ARGUMENT, desc, desclen, "Message %zu cannot be sent: %s.", i, why);
        } else if (amqp_msg_is_batch(&parsed[i])) {
            st = ent_fail_status(SB_ERR_ARGUMENT, desc, desclen, "Message %zu is a batch, which is not resent.", i);
        } else {
            broker_send_stamp(route, &parsed[i], buf + offsets[i], lens[i], now, &msgs[i]);
            st = broker_send_check(route, e->name, &parsed[i], &msgs[i], desc, desclen);
        }
    }
    if (st != SB_OK) {
        ent_free(buf);
        ent_free(msgs);
        ent_free(parsed);
        return st;
    }
    int64_t target = broker_send_target(route, e->id, msgs, n);
    broker_story_sent(msgs, parsed, n, 0, HTTP_DASH_STORY_LINK, e->id, target); /* sent by no link: the dashboard */
    broker_send_commit(r->broker, e->id, route, target, buf, msgs, parsed, n, cb, ctx);
    return SB_OK;
}

/* What a failed commit says to the dashboard. */
static void answer_send_failure(http_req *r, sb_status st, const char *entity)
{
    if (st == SB_ERR_QUOTA_EXCEEDED)
        http_dash_error(r, st, "The maximum entity size has been reached for '%s' (MaxSizeInMegabytes); receive or "
                               "purge messages to make room.", entity);
    else
        http_dash_store_error(r, st, "the send");
}

/* ---- send ---- */

typedef struct send_work {
    json_t *body;
    char path[ENT_ENTITY_PATH_MAX + 1];
} send_work;

static void send_work_free(void *p)
{
    send_work *w = p;
    json_decref(w->body);
    ent_free(w);
}

/* A string member (NULL when absent); -1: present but not a string (answered). */
static int opt_string(http_req *r, json_t *o, const char *key, const char **out)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'%s' must be a string.", key);
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

static void put_string_or_null(amqp_buf *b, const char *s)
{
    if (s)
        amqp_buf_string(b, s, strlen(s));
    else
        amqp_buf_null(b);
}

static int base64_value(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+' || c == '-' ? 62 : c == '/' || c == '_' ? 63 : -1;
}

/* Standard or URL-safe base64, padding optional; -1 when it is not base64. */
static int base64_decode(const char *s, size_t len, amqp_buf *out)
{
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '=')
            break;
        if (s[i] == '\n' || s[i] == '\r' || s[i] == ' ')
            continue;
        int v = base64_value((unsigned char)s[i]);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            uint8_t byte = (uint8_t)(acc >> bits);
            amqp_buf_raw(out, &byte, 1);
        }
    }
    return 0;
}

/* The application property of a JSON value: integers as long, reals as
 * double, strings, booleans and null. -1: answered. */
static int put_property(http_req *r, amqp_buf *b, const char *name, json_t *v)
{
    amqp_buf_string(b, name, strlen(name));
    switch (json_typeof(v)) {
    case JSON_STRING: amqp_buf_string(b, json_string_value(v), json_string_length(v)); return 0;
    case JSON_INTEGER: amqp_buf_long(b, json_integer_value(v)); return 0;
    case JSON_REAL: {
        double d = json_real_value(v);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        uint8_t raw[9] = {0x82};
        for (int i = 0; i < 8; i++)
            raw[1 + i] = (uint8_t)(bits >> (56 - 8 * i));
        amqp_buf_raw(b, raw, sizeof raw);
        return 0;
    }
    case JSON_TRUE: amqp_buf_bool(b, true); return 0;
    case JSON_FALSE: amqp_buf_bool(b, false); return 0;
    case JSON_NULL: amqp_buf_null(b); return 0;
    default:
        http_dash_error(r, SB_ERR_ARGUMENT, "properties.%s must be a string, number, boolean or null.", name);
        return -1;
    }
}

/* The message the body describes, encoded as an SDK would; -1: answered. */
static int encode_message(http_req *r, json_t *in, amqp_buf *out)
{
    const char *body, *encoding, *content_type, *message_id, *correlation_id, *subject, *to, *reply_to,
        *reply_to_session, *session_id, *partition_key, *scheduled;
    if (opt_string(r, in, "body", &body) || opt_string(r, in, "bodyEncoding", &encoding) ||
        opt_string(r, in, "contentType", &content_type) || opt_string(r, in, "messageId", &message_id) ||
        opt_string(r, in, "correlationId", &correlation_id) || opt_string(r, in, "subject", &subject) ||
        opt_string(r, in, "to", &to) || opt_string(r, in, "replyTo", &reply_to) ||
        opt_string(r, in, "replyToSessionId", &reply_to_session) || opt_string(r, in, "sessionId", &session_id) ||
        opt_string(r, in, "partitionKey", &partition_key) || opt_string(r, in, "scheduledEnqueueTime", &scheduled))
        return -1;
    static const char *const known[] = {"entity", "body", "bodyEncoding", "contentType", "messageId",
                                        "correlationId", "subject", "to", "replyTo", "replyToSessionId", "sessionId",
                                        "partitionKey", "timeToLive", "scheduledEnqueueTime", "properties"};
    const char *key;
    json_t *v;
    json_object_foreach(in, key, v) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(known[k], key))
            k++;
        if (k == sizeof known / sizeof known[0]) {
            http_dash_error(r, SB_ERR_ARGUMENT, "Unknown member '%.64s' (a message takes body, bodyEncoding, "
                                                "contentType, messageId, correlationId, subject, to, replyTo, "
                                                "replyToSessionId, sessionId, partitionKey, timeToLive, "
                                                "scheduledEnqueueTime and properties).", key);
            return -1;
        }
    }
    if (encoding && strcmp(encoding, "utf8") && strcmp(encoding, "base64")) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'bodyEncoding' must be \"utf8\" or \"base64\", not \"%.32s\".", encoding);
        return -1;
    }
    int64_t ttl = -1, at = 0;
    json_t *jt = json_object_get(in, "timeToLive");
    if (jt && !json_is_null(jt)) {
        char err[128];
        if (json_is_integer(jt))
            ttl = json_integer_value(jt);
        else if (!json_is_string(jt) || ent_duration_parse(json_string_value(jt), &ttl, err, sizeof err))
            ttl = -2;
        if (ttl <= 0 || ttl > SEND_TTL_MAX_MS) {
            http_dash_error(r, SB_ERR_ARGUMENT, "'timeToLive' must be an ISO-8601 duration (PT1H) or milliseconds, "
                                                "above 0 and at most %lld ms (the AMQP header's limit).",
                            (long long)SEND_TTL_MAX_MS);
            return -1;
        }
    }
    if (scheduled && ent_fv_parse_time(scheduled, strlen(scheduled), &at)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'scheduledEnqueueTime' must be an ISO 8601 time such as "
                                            "2030-01-01T00:00:00Z, not \"%.64s\".", scheduled);
        return -1;
    }
    json_t *props = json_object_get(in, "properties");
    if (props && !json_is_object(props) && !json_is_null(props)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'properties' must be an object of name: value.");
        return -1;
    }
    if (json_is_object(props) && json_object_size(props) > HTTP_DASH_SEND_PROPERTIES_MAX) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'properties' holds %zu entries; at most %d.", json_object_size(props),
                        HTTP_DASH_SEND_PROPERTIES_MAX);
        return -1;
    }
    /* header: durable, and the TTL */
    amqp_buf_descriptor(out, AMQP_SEC_HEADER);
    size_t mark = amqp_buf_list_begin(out);
    amqp_buf_bool(out, true);
    uint32_t fields = 1;
    if (ttl > 0) {
        amqp_buf_null(out);
        amqp_buf_uint(out, (uint32_t)ttl);
        fields = 3;
    }
    amqp_buf_compound_end(out, mark, fields);
    /* message annotations: the schedule and partition key */
    if (at || partition_key) {
        amqp_buf_descriptor(out, AMQP_SEC_MESSAGE_ANNOTATIONS);
        mark = amqp_buf_map_begin(out);
        uint32_t entries = 0;
        if (at) {
            amqp_buf_symbol(out, "x-opt-scheduled-enqueue-time");
            amqp_buf_timestamp(out, at);
            entries += 2;
        }
        if (partition_key) {
            amqp_buf_symbol(out, "x-opt-partition-key");
            amqp_buf_string(out, partition_key, strlen(partition_key));
            entries += 2;
        }
        amqp_buf_compound_end(out, mark, entries);
    }
    /* properties, up to the last field set */
    const char *fields_in_order[13] = {message_id, NULL, to, subject, reply_to, correlation_id, content_type,
                                       NULL, NULL, NULL, session_id, NULL, reply_to_session};
    uint32_t last = 0;
    for (uint32_t i = 0; i < 13; i++)
        if (fields_in_order[i])
            last = i + 1;
    if (last) {
        amqp_buf_descriptor(out, AMQP_SEC_PROPERTIES);
        mark = amqp_buf_list_begin(out);
        for (uint32_t i = 0; i < last; i++) {
            if (i == 3 || i == 4 || i == 6) { /* subject, reply-to: string; content-type: symbol */
                if (i == 6 && fields_in_order[i])
                    amqp_buf_symbol(out, fields_in_order[i]);
                else
                    put_string_or_null(out, fields_in_order[i]);
            } else {
                put_string_or_null(out, fields_in_order[i]);
            }
        }
        amqp_buf_compound_end(out, mark, last);
    }
    if (json_is_object(props) && json_object_size(props)) {
        amqp_buf_descriptor(out, AMQP_SEC_APPLICATION_PROPERTIES);
        mark = amqp_buf_map_begin(out);
        json_object_foreach(props, key, v) {
            if (put_property(r, out, key, v))
                return -1;
        }
        amqp_buf_compound_end(out, mark, (uint32_t)(2 * json_object_size(props)));
    }
    /* the body: one data section */
    amqp_buf body_bytes = {0};
    if (body && encoding && !strcmp(encoding, "base64")) {
        if (base64_decode(body, strlen(body), &body_bytes)) {
            amqp_buf_free(&body_bytes);
            http_dash_error(r, SB_ERR_ARGUMENT, "'body' is not base64 (bodyEncoding \"base64\").");
            return -1;
        }
    } else if (body) {
        amqp_buf_raw(&body_bytes, body, strlen(body));
    }
    amqp_buf_descriptor(out, AMQP_SEC_DATA);
    amqp_buf_binary(out, body_bytes.data ? body_bytes.data : (const uint8_t *)"", body_bytes.len);
    bool failed = body_bytes.failed;
    amqp_buf_free(&body_bytes);
    if (out->failed || failed) {
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return -1;
    }
    return 0;
}

static void on_sent(void *ctx, sb_status st)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    send_work *w = r->work;
    if (st != SB_OK) {
        answer_send_failure(r, st, w->path);
        return;
    }
    json_t *mid = json_object_get(w->body, "messageId");
    http_dash_json(r, SB_OK, json_pack("{s:s, s:i, s:O}", "entity", w->path, "sent", 1, "messageId",
                                       mid ? mid : json_null()));
}

static void send_to(http_req *r, const ent_entity *e, const ent_route *route)
{
    send_work *w = r->work;
    snprintf(w->path, sizeof w->path, "%s", e->name);
    if (e->kind == ENT_KIND_SUBSCRIPTION) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'%s' is a subscription: send to its topic (its rules decide which "
                                            "subscriptions get the message).", e->name);
        return;
    }
    amqp_buf b = {0};
    if (encode_message(r, w->body, &b)) {
        amqp_buf_free(&b);
        return;
    }
    size_t offset = 0, len = b.len;
    char desc[512];
    sb_status st = send_whole(r, e, route, b.data, &offset, &len, 1, on_sent, r, desc, sizeof desc);
    if (st != SB_OK)
        http_dash_error(r, st, "%s", desc);
}

void http_dash_send(http_req *r)
{
    json_t *body = http_dash_body(r);
    if (!body)
        return;
    send_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        json_decref(body);
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    w->body = body;
    r->work = w;
    r->work_free = send_work_free;
    json_t *entity = json_object_get(body, "entity");
    if (!json_is_string(entity)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'entity' must name a queue or topic (a string).");
        return;
    }
    http_dash_with_entity(r, json_string_value(entity), "'entity'", send_to);
}

/* ---- resubmit ---- */

typedef struct resubmit_work {
    json_t *body;
    bool all;
    int64_t *seqs; /* a selection; or this round's (all) */
    size_t n;
    int64_t from;  /* all: the next round looks from here */
    ent_entity entity;
    ent_route route;
    int64_t *round; /* this round's sequence numbers, to delete once sent */
    size_t nround;
    bool more;      /* all: another round follows this one */
    int64_t until;  /* all: the last dead letter's sequence number when it began */
    int64_t sent, deleted, skipped_locked;
} resubmit_work;

static void resubmit_work_free(void *p)
{
    resubmit_work *w = p;
    json_decref(w->body);
    ent_free(w->seqs);
    ent_free(w->round);
    ent_free(w);
}

static void next_round(http_req *r);

static void answer_resubmitted(http_req *r)
{
    resubmit_work *w = r->work;
    json_t *doc = json_pack("{s:s, s:I, s:I}", "entity", w->entity.name, "resubmitted", (json_int_t)w->sent,
                            "deletedFromDeadLetter", (json_int_t)w->deleted);
    if (w->skipped_locked)
        json_object_set_new(doc, "leftLocked", json_integer(w->skipped_locked));
    if (w->deleted < w->sent)
        json_object_set_new(doc, "note", json_string("Some dead letters were taken by a receiver while they were "
                                                     "resubmitted: those were delivered again (at least once)."));
    http_dash_json(r, SB_OK, doc);
}

static void on_round_deleted(void *ctx, sb_status st, int64_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    resubmit_work *w = r->work;
    if (st != SB_OK) {
        /* sent but still dead letters too: say so, nothing is lost */
        http_dash_error(r, st, "%lld message(s) were resubmitted, but their dead letters could not be deleted (%s): "
                               "they are in both places now.", (long long)w->sent, sb_status_name(st));
        return;
    }
    w->deleted += n;
    if (w->more)
        next_round(r);
    else
        answer_resubmitted(r);
}

static void on_round_sent(void *ctx, sb_status st)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    resubmit_work *w = r->work;
    if (st != SB_OK) {
        answer_send_failure(r, st, w->entity.name);
        return;
    }
    w->sent += (int64_t)w->nround;
    store_dash_delete(broker_store(r->broker), w->entity.id, 1, w->round, w->nround, true, ent_clock_now_ms(),
                      on_round_deleted, r);
}

static void on_dead_letters(void *ctx, sb_status st, const store_dash_msg *msgs, size_t n)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    resubmit_work *w = r->work;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the dead letters");
        return;
    }
    /* this round: the dead letters nobody holds, their bytes in one buffer */
    int64_t now = ent_clock_now_ms();
    size_t total = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        total += msgs[i].len;
    uint8_t *buf = ent_malloc(total ? total : 1);
    size_t *offsets = ent_calloc(n ? n : 1, sizeof *offsets), *lens = ent_calloc(n ? n : 1, sizeof *lens);
    ent_free(w->round);
    w->round = ent_calloc(n ? n : 1, sizeof *w->round);
    if (!buf || !offsets || !lens || !w->round) {
        ent_free(buf);
        ent_free(offsets);
        ent_free(lens);
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (w->all && msgs[i].sequence_number > w->until)
            break; /* dead-lettered after the resubmit began (perhaps by it): not this time */
        if (msgs[i].has_lock && msgs[i].locked_until_ms > now) {
            w->skipped_locked++;
            continue;
        }
        memcpy(buf + at, msgs[i].bytes, msgs[i].len);
        offsets[k] = at;
        lens[k] = msgs[i].len;
        w->round[k++] = msgs[i].sequence_number;
        at += msgs[i].len;
    }
    w->nround = k;
    /* a full round that has not reached the end yet: more may follow */
    w->more = w->all && n == HTTP_DASH_RESUBMIT_BATCH && msgs[n - 1].sequence_number < w->until;
    if (w->all && n)
        w->from = msgs[n - 1].sequence_number + 1;
    if (!k) { /* nothing to send in this round (none left, or all held by receivers) */
        ent_free(buf);
        ent_free(offsets);
        ent_free(lens);
        if (w->more)
            next_round(r);
        else
            answer_resubmitted(r);
        return;
    }
    char desc[512];
    sb_status s = send_whole(r, &w->entity, &w->route, buf, offsets, lens, k, on_round_sent, r, desc, sizeof desc);
    ent_free(offsets);
    ent_free(lens);
    if (s != SB_OK) {
        if (w->sent)
            http_dash_error(r, s, "%lld message(s) were resubmitted; then: %s", (long long)w->sent, desc);
        else
            http_dash_error(r, s, "%s", desc);
    }
}

static void next_round(http_req *r)
{
    resubmit_work *w = r->work;
    store_dash_peek(broker_store(r->broker), w->entity.id, 1, w->from, HTTP_DASH_RESUBMIT_BATCH, on_dead_letters, r);
}

static void on_last(void *ctx, sb_status st, int64_t last)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    resubmit_work *w = r->work;
    if (st != SB_OK) {
        http_dash_store_error(r, st, "the dead letters");
        return;
    }
    w->until = last;
    if (last)
        next_round(r);
    else
        answer_resubmitted(r);
}

static void resubmit_to(http_req *r, const ent_entity *e, const ent_route *route)
{
    resubmit_work *w = r->work;
    w->entity = *e;
    w->route = *route;
    if (e->kind == ENT_KIND_TOPIC) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'%s' is a topic, which has no dead-letter subqueue: name one of its "
                                            "subscriptions (<topic>/Subscriptions/<name>).", e->name);
        return;
    }
    const ent_cache *cache = broker_cache(r->broker);
    const ent_entity *target = cache ? ent_cache_get(cache, route->send_target_id) : NULL;
    if ((target && target->requires_duplicate_detection) || e->requires_duplicate_detection) {
        http_dash_error(r, SB_ERR_NOT_ALLOWED,
                        "'%s' has duplicate detection: a resubmitted message keeps its MessageId and would be dropped "
                        "as a duplicate within the window while its dead letter is deleted. Resubmit is refused; "
                        "send a copy with a new MessageId instead.", target ? target->name : e->name);
        return;
    }
    if (w->all)
        store_dash_last(broker_store(r->broker), e->id, 1, on_last, r);
    else
        store_dash_pick(broker_store(r->broker), e->id, 1, w->seqs, w->n, false, ent_clock_now_ms(), on_dead_letters,
                        r);
}

void http_dash_resubmit(http_req *r)
{
    json_t *body = http_dash_body(r);
    if (!body)
        return;
    resubmit_work *w = ent_calloc(1, sizeof *w);
    if (!w) {
        json_decref(body);
        http_dash_error(r, SB_ERR_INTERNAL, "The emulator ran out of memory.");
        return;
    }
    w->body = body;
    w->from = 1;
    r->work = w;
    r->work_free = resubmit_work_free;
    json_t *entity = json_object_get(body, "entity"), *all = json_object_get(body, "all"),
           *seqs = json_object_get(body, "sequenceNumbers");
    if (!json_is_string(entity)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'entity' must name the queue or subscription whose dead letters to "
                                            "resubmit (a string).");
        return;
    }
    if (all && !json_is_boolean(all)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "'all' must be true or false.");
        return;
    }
    w->all = json_is_true(all);
    if (w->all == (seqs != NULL)) {
        http_dash_error(r, SB_ERR_ARGUMENT, "Give either 'sequenceNumbers' (the dead letters to resubmit) or "
                                            "\"all\": true, not both or neither.");
        return;
    }
    if (!w->all && http_dash_seqs(r, seqs, "sequenceNumbers", &w->seqs, &w->n))
        return;
    http_dash_with_entity(r, json_string_value(entity), "'entity'", resubmit_to);
}
