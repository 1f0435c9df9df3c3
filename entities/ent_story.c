/* See ent_story.h. */
#include "ent_story.h"

#include "ent_props.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[ENT_STORY_KIND_MAX + 1] = {
    [ENT_STORY_SENT] = "sent",
    [ENT_STORY_SCHEDULED] = "scheduled",
    [ENT_STORY_ROUTED] = "routed",
    [ENT_STORY_NOT_ROUTED] = "not-routed",
    [ENT_STORY_FORWARDED] = "forwarded",
    [ENT_STORY_LOCKED] = "locked",
    [ENT_STORY_ABANDONED] = "abandoned",
    [ENT_STORY_DEFERRED] = "deferred",
    [ENT_STORY_DEAD_LETTERED] = "dead-lettered",
    [ENT_STORY_EXPIRED] = "expired",
    [ENT_STORY_LOCK_LAPSED] = "lock-lapsed",
    [ENT_STORY_COMPLETED] = "completed",
    [ENT_STORY_RECEIVED] = "received-and-deleted",
    [ENT_STORY_ACTIVATED] = "activated",
    [ENT_STORY_RELEASED] = "released",
    [ENT_STORY_CANCELLED] = "cancelled",
    [ENT_STORY_PURGED] = "purged",
    [ENT_STORY_DELETED] = "deleted",
};

const char *ent_story_kind_name(int kind)
{
    return kind > 0 && kind <= ENT_STORY_KIND_MAX ? kind_names[kind] : NULL;
}

ent_story_shape ent_story_shape_of(int kind)
{
    ent_story_shape s = {0};
    switch (kind) {
    case ENT_STORY_SENT:
    case ENT_STORY_SCHEDULED:
        s.note = "traceparent";
        s.peer = true;
        break;
    case ENT_STORY_ROUTED:
        s.note = "rule";
        s.other = "topic";
        s.number_is_entity = true;
        break;
    case ENT_STORY_NOT_ROUTED:
        s.note = "rules";
        s.other = "topic";
        s.number_is_entity = true;
        break;
    case ENT_STORY_FORWARDED:
        s.note = "rule"; /* a subscription's copy: the rule that made it */
        s.other = "from";
        break;
    case ENT_STORY_LOCKED:
        s.peer = true;
        s.lock = true;
        s.number = "deliveryCount";
        break;
    case ENT_STORY_ABANDONED:
    case ENT_STORY_DEFERRED:
    case ENT_STORY_LOCK_LAPSED:
    case ENT_STORY_RELEASED:
        s.number = "deliveryCount";
        break;
    case ENT_STORY_DEAD_LETTERED:
        s.note = "reason";
        s.description = "description";
        s.other = "forwardedTo";
        break;
    case ENT_STORY_RECEIVED:
        s.peer = true;
        break;
    case ENT_STORY_ACTIVATED:
        s.number = "scheduledSequenceNumber";
        break;
    default:
        break;
    }
    return s;
}

const char *const ent_story_trace_properties[ENT_STORY_TRACE_PROPERTIES] = {"traceparent", "Diagnostic-Id"};

size_t ent_story_text_keep(const char *p, size_t len, size_t max)
{
    if (!p || memchr(p, 0, len))
        return 0;
    size_t keep = len < max ? len : max;
    /* a cut inside a character backs off to its first byte */
    while (keep < len && keep > 0 && ((unsigned char)p[keep] & 0xC0) == 0x80)
        keep--;
    return ent_utf8_length_n(p, keep) < 0 ? 0 : keep;
}

int64_t ent_story_prune_before(int64_t now_ms, int64_t retention_ms)
{
    return retention_ms < now_ms ? now_ms - retention_ms : 0;
}

/* A whole number in [0, INT64_MAX]: digits only, no sign, no spaces. */
static bool whole(const char *s, int64_t *out)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s))
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
        return false;
    *out = (int64_t)v;
    return true;
}

static sb_status refuse(char *why, size_t n, const char *text, const char *value)
{
    if (value)
        snprintf(why, n, text, value);
    else
        snprintf(why, n, "%s", text);
    return SB_ERR_ARGUMENT;
}

static sb_status parse_page(const char *page, ent_story_cursor *out, char *why, size_t n)
{
    char id[32], ord[32];
    const char *dash = strchr(page, '-');
    size_t idlen = dash ? (size_t)(dash - page) : 0;
    if (!dash || idlen >= sizeof id || strlen(dash + 1) >= sizeof ord)
        return refuse(why, n, "page must be the 'next' value of an earlier answer (two numbers, as 1234-5), not '%s'",
                      page);
    memcpy(id, page, idlen);
    id[idlen] = 0;
    snprintf(ord, sizeof ord, "%s", dash + 1);
    if (!whole(id, &out->id) || !whole(ord, &out->ord) || out->id < 1 || out->ord < 1)
        return refuse(why, n, "page must be the 'next' value of an earlier answer (two numbers, as 1234-5), not '%s'",
                      page);
    return SB_OK;
}

sb_status ent_story_query_parse(const char *entity, const char *sequence_number, const char *message_id,
                                const char *top, const char *page, ent_story_query *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    out->top = ENT_STORY_PAGE_DEFAULT;
    if (entity && !*entity)
        return refuse(why, whylen, "entity is empty: name a queue, a topic or topic/Subscriptions/name", NULL);
    if (entity && strlen(entity) >= ENT_ENTITY_PATH_SIZE)
        return refuse(why, whylen, "entity is longer than any entity path can be", NULL);
    out->entity = entity;
    if (message_id) {
        if (sequence_number)
            return refuse(why, whylen, "give messageId or sequenceNumber, not both", NULL);
        if (!*message_id)
            return refuse(why, whylen, "messageId is empty", NULL);
        if (strlen(message_id) >= ENT_MESSAGE_ID_SIZE)
            return refuse(why, whylen, "messageId is longer than a MessageId can be (128 characters)", NULL);
        if (page || top)
            return refuse(why, whylen, "page and top apply to an entity's events, not to a message's story", NULL);
        out->kind = ENT_STORY_BY_MESSAGE_ID;
        out->message_id = message_id;
        return SB_OK;
    }
    if (!entity)
        return refuse(why, whylen,
                      "name what to tell: entity (its latest events), entity and sequenceNumber, or messageId", NULL);
    if (sequence_number) {
        if (!whole(sequence_number, &out->sequence_number))
            return refuse(why, whylen, "sequenceNumber must be a whole number from 0 to 9223372036854775807, not '%s'",
                          sequence_number);
        if (page || top)
            return refuse(why, whylen, "page and top apply to an entity's events, not to a message's story", NULL);
        out->kind = ENT_STORY_BY_SEQUENCE;
        return SB_OK;
    }
    out->kind = ENT_STORY_OF_ENTITY;
    if (top) {
        int64_t t;
        if (!whole(top, &t) || t < 1 || t > ENT_STORY_PAGE_MAX) {
            snprintf(why, whylen, "top must be a whole number from 1 to %d, not '%s'", ENT_STORY_PAGE_MAX, top);
            return SB_ERR_ARGUMENT;
        }
        out->top = (int)t;
    }
    if (page)
        return parse_page(page, &out->page, why, whylen);
    return SB_OK;
}

void ent_story_cursor_format(ent_story_cursor c, char *out, size_t n)
{
    snprintf(out, n, "%" PRId64 "-%" PRId64, c.id, c.ord);
}

void ent_story_rule_names(const ent_filter_rule *rules, size_t nrules, char *out, size_t n)
{
    size_t len = 0;
    if (n)
        out[0] = 0;
    for (size_t i = 0; i < nrules && len + 1 < n; i++) {
        int w = snprintf(out + len, n - len, "%s%s", i ? ", " : "", rules[i].name);
        if (w < 0 || (size_t)w >= n - len) {
            out[len] = 0; /* a name that does not fit is left out whole */
            break;
        }
        len += (size_t)w;
    }
}
