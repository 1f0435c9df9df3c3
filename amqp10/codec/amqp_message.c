/* See amqp_message.h. */
#include "amqp_message.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ent_props.h"

static void set_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

/* Writes any message-id type (string, ulong, uuid, binary) the way .NET shows
 * it (cut to outlen) and returns its length in characters, uncut (-1 for a
 * string that is not UTF-8). Ids over the limits are refused by whoever stores the message (ent_message_ids_check);
 * parsing goes on past them, so that a batch stays a batch. */
static long format_id(const amqp_val *v, char *out, size_t outlen)
{
    const uint8_t *d;
    size_t n;
    uint64_t u;
    if (amqp_val_bytes(v, &d, &n) && v->code != 0xa0 && v->code != 0xb0) {
        long chars = ent_utf8_length_n((const char *)d, n);
        if (n >= outlen)
            n = outlen - 1;
        memcpy(out, d, n);
        out[n] = 0;
        return chars;
    } else if (amqp_val_u64(v, &u)) {
        snprintf(out, outlen, "%" PRIu64, u);
    } else if (v->code == 0x98) {
        const uint8_t *g = v->data;
        snprintf(out, outlen, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", g[0], g[1],
                 g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
    } else if (amqp_val_bytes(v, &d, &n)) {
        size_t o = 0;
        for (size_t i = 0; i < n && o + 3 < outlen; i++)
            o += (size_t)snprintf(out + o, outlen - o, "%02x", d[i]);
        out[o] = 0;
        return (long)(2 * n);
    } else {
        out[0] = 0;
    }
    return (long)strlen(out);
}

/* Reads field `index` of a described list section; returns false if absent. */
static bool list_field(const amqp_val *list, uint32_t index, amqp_val *field)
{
    if (list->code != 0x45 && list->code != 0xc0 && list->code != 0xd0)
        return false;
    const uint8_t *p = list->data, *end = list->data + list->size;
    for (uint32_t i = 0; i < list->count; i++) {
        if (amqp_read(&p, end, field))
            return false;
        if (i == index)
            return !amqp_val_is_null(field);
    }
    return false;
}

static void extract_header(const amqp_val *v, amqp_msg *m)
{
    amqp_val f;
    uint64_t ttl;
    if (list_field(v, 2, &f) && amqp_val_u64(&f, &ttl))
        m->ttl_ms = (int64_t)ttl;
}

static void extract_properties(const amqp_val *v, amqp_msg *m)
{
    amqp_val f;
    if (list_field(v, 0, &f)) {
        m->has_message_id = true;
        m->message_id_chars = format_id(&f, m->message_id, sizeof m->message_id);
    }
    const uint8_t *d;
    size_t n;
    if (list_field(v, 10, &f) && amqp_val_bytes(&f, &d, &n)) {
        m->has_session_id = true;
        m->session_id_chars = ent_utf8_length_n((const char *)d, n);
        if (n >= sizeof m->session_id)
            n = sizeof m->session_id - 1; /* refused by ent_message_ids_check */
        memcpy(m->session_id, d, n);
        m->session_id[n] = 0;
    }
}

static void extract_annotations(const amqp_val *v, amqp_msg *m)
{
    if (v->code != 0xc1 && v->code != 0xd1)
        return;
    const uint8_t *p = v->data, *end = v->data + v->size;
    for (uint32_t i = 0; i + 1 < v->count; i += 2) {
        amqp_val k, val;
        if (amqp_read(&p, end, &k) || amqp_read(&p, end, &val))
            return;
        if (amqp_val_is_symbol(&k, "x-opt-scheduled-enqueue-time"))
            amqp_val_timestamp(&val, &m->scheduled_enqueue_ms);
    }
}

int amqp_msg_parse(const uint8_t *buf, size_t len, amqp_msg *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->ttl_ms = -1;
    m->body_is_only_data = true;
    const uint8_t *p = buf, *end = buf + len;
    int last = 0;
    while (p < end) {
        amqp_val v;
        const uint8_t *start = p;
        if (amqp_read(&p, end, &v)) {
            set_err(err, errlen, "the message is not well-formed AMQP");
            return -1;
        }
        if (!v.described || !v.descriptor_is_code || v.descriptor < AMQP_SEC_HEADER || v.descriptor > AMQP_SEC_FOOTER) {
            set_err(err, errlen, "the message holds a value that is not an AMQP message section");
            return -1;
        }
        int code = (int)v.descriptor;
        int order = code >= AMQP_SEC_DATA && code <= AMQP_SEC_AMQP_VALUE ? AMQP_SEC_DATA : code;
        if (order < last || (order == last && order != AMQP_SEC_DATA)) {
            set_err(err, errlen, "the message sections are out of order or repeated");
            return -1;
        }
        last = order;
        amqp_span s = {start, (size_t)(p - start)};
        switch (code) {
        case AMQP_SEC_HEADER: m->header = s; extract_header(&v, m); break;
        case AMQP_SEC_DELIVERY_ANNOTATIONS: m->delivery_annotations = s; break;
        case AMQP_SEC_MESSAGE_ANNOTATIONS: m->message_annotations = s; extract_annotations(&v, m); break;
        case AMQP_SEC_PROPERTIES: m->properties = s; extract_properties(&v, m); break;
        case AMQP_SEC_APPLICATION_PROPERTIES: m->application_properties = s; break;
        case AMQP_SEC_FOOTER: m->footer = s; break;
        default:
            if (!m->body.p)
                m->body.p = start;
            m->body.len = (size_t)(p - m->body.p);
            m->body_sections++;
            if (code != AMQP_SEC_DATA)
                m->body_is_only_data = false;
            break;
        }
    }
    return 0;
}

/* A data section whose payload is itself a complete message starting with a section. */
static bool data_holds_message(const amqp_val *data)
{
    const uint8_t *d;
    size_t n;
    if (!amqp_val_bytes(data, &d, &n) || n < 3 || d[0] != 0x00 || d[1] != 0x53 || d[2] < AMQP_SEC_HEADER ||
        d[2] > AMQP_SEC_FOOTER)
        return false;
    amqp_msg inner;
    return amqp_msg_parse(d, n, &inner, NULL, 0) == 0;
}

bool amqp_msg_is_batch(const amqp_msg *m)
{
    if (!m->body_sections || !m->body_is_only_data)
        return false;
    const uint8_t *p = m->body.p, *end = m->body.p + m->body.len;
    while (p < end) {
        amqp_val v;
        if (amqp_read(&p, end, &v) || !data_holds_message(&v))
            return false;
    }
    return true;
}

int amqp_msg_batch_next(const amqp_msg *batch, const uint8_t **cursor, amqp_span *inner)
{
    const uint8_t *p = *cursor ? *cursor : batch->body.p, *end = batch->body.p + batch->body.len;
    amqp_val v;
    if (p >= end || amqp_read(&p, end, &v) || !amqp_val_bytes(&v, &inner->p, &inner->len))
        return 0;
    *cursor = p;
    return 1;
}

/* ---- delivery encoding ---- */

static const char *const broker_annotations[] = {
    "x-opt-sequence-number", "x-opt-enqueued-time", "x-opt-locked-until", "x-opt-message-state",
    "x-opt-deadletter-source", "x-opt-enqueue-sequence-number", NULL,
};

static bool is_broker_annotation(const amqp_val *k)
{
    for (int i = 0; broker_annotations[i]; i++)
        if (amqp_val_is_symbol(k, broker_annotations[i]))
            return true;
    return false;
}

static bool is_string_key(const amqp_val *k, const char *name)
{
    const uint8_t *d;
    size_t n;
    return amqp_val_is_string_type(k) && amqp_val_bytes(k, &d, &n) && n == strlen(name) && !memcmp(d, name, n);
}

/* Copies the entries of a map section, dropping those `skip` rejects; returns the entry count. */
static uint32_t copy_map_entries(amqp_buf *out, amqp_span section, bool (*skip)(const amqp_val *k))
{
    if (!section.len)
        return 0;
    const uint8_t *p = section.p;
    amqp_val map, k, v;
    if (amqp_read(&p, section.p + section.len, &map) || (map.code != 0xc1 && map.code != 0xd1))
        return 0;
    uint32_t n = 0;
    p = map.data;
    const uint8_t *end = map.data + map.size;
    for (uint32_t i = 0; i + 1 < map.count; i += 2) {
        if (amqp_read(&p, end, &k) || amqp_read(&p, end, &v))
            break;
        if (skip(&k))
            continue;
        amqp_buf_raw(out, k.start, (size_t)(k.end - k.start));
        amqp_buf_raw(out, v.start, (size_t)(v.end - v.start));
        n += 2;
    }
    return n;
}

static bool is_dead_letter_key(const amqp_val *k)
{
    return is_string_key(k, "DeadLetterReason") || is_string_key(k, "DeadLetterErrorDescription");
}

static void encode_header(const amqp_msg *m, const amqp_delivery_info *info, amqp_buf *out)
{
    bool durable = false;
    uint64_t priority = 4;
    if (m->header.len) {
        const uint8_t *p = m->header.p;
        amqp_val h, f;
        if (!amqp_read(&p, m->header.p + m->header.len, &h)) {
            if (list_field(&h, 0, &f))
                amqp_val_bool(&f, &durable);
            if (list_field(&h, 1, &f))
                amqp_val_u64(&f, &priority);
        }
    }
    amqp_buf_descriptor(out, AMQP_SEC_HEADER);
    size_t mark = amqp_buf_list_begin(out);
    amqp_buf_bool(out, durable);
    amqp_buf_ubyte(out, (uint8_t)(priority > 255 ? 255 : priority));
    if (info->ttl_ms >= 0)
        amqp_buf_uint(out, info->ttl_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)info->ttl_ms);
    else
        amqp_buf_null(out);
    amqp_buf_bool(out, info->header_delivery_count == 0);
    amqp_buf_uint(out, info->header_delivery_count);
    amqp_buf_compound_end(out, mark, 5);
}

static void encode_annotations(const amqp_msg *m, const amqp_delivery_info *info, amqp_buf *out)
{
    amqp_buf_descriptor(out, AMQP_SEC_MESSAGE_ANNOTATIONS);
    size_t mark = amqp_buf_map_begin(out);
    uint32_t n = copy_map_entries(out, m->message_annotations, is_broker_annotation);
    amqp_buf_symbol(out, "x-opt-sequence-number");
    amqp_buf_long(out, info->sequence_number);
    amqp_buf_symbol(out, "x-opt-enqueued-time");
    amqp_buf_timestamp(out, info->enqueued_ms);
    n += 4;
    if (info->locked_until_ms) {
        amqp_buf_symbol(out, "x-opt-locked-until");
        amqp_buf_timestamp(out, info->locked_until_ms);
        n += 2;
    }
    if (info->message_state >= 0) {
        amqp_buf_symbol(out, "x-opt-message-state");
        amqp_buf_int(out, info->message_state);
        n += 2;
    }
    if (info->dead_letter_source) {
        amqp_buf_symbol(out, "x-opt-deadletter-source");
        amqp_buf_string(out, info->dead_letter_source, strlen(info->dead_letter_source));
        n += 2;
    }
    amqp_buf_compound_end(out, mark, n);
}

static void encode_application_properties(const amqp_msg *m, const amqp_delivery_info *info, amqp_buf *out)
{
    if (!info->dead_letter_reason && !info->dead_letter_description) {
        amqp_buf_raw(out, m->application_properties.p, m->application_properties.len);
        return;
    }
    amqp_buf_descriptor(out, AMQP_SEC_APPLICATION_PROPERTIES);
    size_t mark = amqp_buf_map_begin(out);
    uint32_t n = copy_map_entries(out, m->application_properties, is_dead_letter_key);
    if (info->dead_letter_reason) {
        amqp_buf_string(out, "DeadLetterReason", 16);
        amqp_buf_string(out, info->dead_letter_reason, strlen(info->dead_letter_reason));
        n += 2;
    }
    if (info->dead_letter_description) {
        amqp_buf_string(out, "DeadLetterErrorDescription", 26);
        amqp_buf_string(out, info->dead_letter_description, strlen(info->dead_letter_description));
        n += 2;
    }
    amqp_buf_compound_end(out, mark, n);
}

/* Properties as sent, except that the broker fills in message-id when the
 * sender set none and makes absolute-expiry-time authoritative (DOC-PG). */
#define AMQP_PROPERTIES_FIELDS 13
#define AMQP_PROP_MESSAGE_ID 0
#define AMQP_PROP_ABSOLUTE_EXPIRY 8
#define AMQP_PROP_CREATION_TIME 9

static void encode_properties(const amqp_msg *m, const amqp_delivery_info *info, amqp_buf *out)
{
    bool set_id = !m->has_message_id && info->message_id;
    if (!set_id && !info->expires_ms) {
        amqp_buf_raw(out, m->properties.p, m->properties.len);
        return;
    }
    amqp_val fields[AMQP_PROPERTIES_FIELDS];
    uint32_t have = 0;
    if (m->properties.len) {
        const uint8_t *p = m->properties.p;
        amqp_val list;
        if (!amqp_read(&p, m->properties.p + m->properties.len, &list) && (list.code == 0xc0 || list.code == 0xd0)) {
            p = list.data;
            const uint8_t *end = list.data + list.size;
            while (have < list.count && have < AMQP_PROPERTIES_FIELDS && !amqp_read(&p, end, &fields[have]))
                have++;
        }
    }
    /* Clients derive TimeToLive as absolute-expiry-time - creation-time (JS core-amqp),
     * so count from the sender's creation time when it gave one. */
    int64_t expires = info->expires_ms, created;
    if (expires && info->ttl_ms >= 0 && have > AMQP_PROP_CREATION_TIME &&
        amqp_val_timestamp(&fields[AMQP_PROP_CREATION_TIME], &created))
        expires = created + info->ttl_ms;
    uint32_t n = have;
    if (set_id && n < AMQP_PROP_MESSAGE_ID + 1)
        n = AMQP_PROP_MESSAGE_ID + 1;
    if (info->expires_ms && n < AMQP_PROP_ABSOLUTE_EXPIRY + 1)
        n = AMQP_PROP_ABSOLUTE_EXPIRY + 1;
    amqp_buf_descriptor(out, AMQP_SEC_PROPERTIES);
    size_t mark = amqp_buf_list_begin(out);
    for (uint32_t i = 0; i < n; i++) {
        if (i == AMQP_PROP_MESSAGE_ID && set_id)
            amqp_buf_string(out, info->message_id, strlen(info->message_id));
        else if (i == AMQP_PROP_ABSOLUTE_EXPIRY && info->expires_ms)
            amqp_buf_timestamp(out, expires);
        else if (i < have)
            amqp_buf_raw(out, fields[i].start, (size_t)(fields[i].end - fields[i].start));
        else
            amqp_buf_null(out);
    }
    amqp_buf_compound_end(out, mark, n);
}

int amqp_msg_encode_delivery_head(const uint8_t *stored, size_t len, const amqp_delivery_info *info, amqp_buf *out,
                                  amqp_span tail[2])
{
    amqp_msg m;
    if (amqp_msg_parse(stored, len, &m, NULL, 0))
        return -1;
    encode_header(&m, info, out);
    /* delivery-annotations are for one hop only and are not forwarded */
    encode_annotations(&m, info, out);
    encode_properties(&m, info, out);
    encode_application_properties(&m, info, out);
    tail[0] = m.body;
    tail[1] = m.footer;
    return out->failed ? -1 : 0;
}

int amqp_msg_encode_delivery(const uint8_t *stored, size_t len, const amqp_delivery_info *info, amqp_buf *out)
{
    amqp_span tail[2];
    if (amqp_msg_encode_delivery_head(stored, len, info, out, tail))
        return -1;
    amqp_buf_raw(out, tail[0].p, tail[0].len);
    amqp_buf_raw(out, tail[1].p, tail[1].len);
    return out->failed ? -1 : 0;
}
