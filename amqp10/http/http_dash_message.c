/* A stored AMQP message as the dashboard shows it (http_dash.h): every
 * section read with the codec (amqp_codec.h, amqp_message.h), each value
 * with its AMQP type, the Service Bus names of the system properties, and
 * the body as text (when it is UTF-8), whether that text is JSON, and hex.
 *
 * A value is {"type": "...", "value": ...}: integers as JSON numbers (a
 * ulong above 2^63 as text), timestamps as ISO 8601, uuids as GUID text,
 * binary as hex, lists as arrays and maps as [{"key", "value"}] of typed
 * values, and the .NET SDK's described types (timespan, datetime-offset,
 * uri) under their own names. A message that is not well-formed AMQP is
 * shown as far as it reads, with "error" saying where it stopped. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "amqp_message.h"
#include "ent_alloc.h"
#include "ent_filter.h"
#include "ent_props.h"
#include "http_dash.h"

/* .NET ticks (100 ns) in a millisecond, and the tick of 1970-01-01 (DateTime's epoch is year 1). */
#define TICKS_PER_MS INT64_C(10000)
#define TICKS_AT_UNIX_EPOCH INT64_C(621355968000000000)

/* Fields of the header and properties lists, by position (AMQP 1.0 part 3 §3.2). */
static const char *const header_fields[] = {"durable", "priority", "ttl", "firstAcquirer", "deliveryCount"};
static const char *const property_fields[] = {
    "messageId",          "userId",     "to",          "subject",     "replyTo",
    "correlationId",      "contentType", "contentEncoding", "absoluteExpiryTime", "creationTime",
    "groupId",            "groupSequence", "replyToGroupId",
};

static json_t *hex_of(const uint8_t *p, size_t n, size_t max)
{
    size_t shown = n < max ? n : max;
    char *s = ent_malloc(2 * shown + 1);
    if (!s)
        return json_null();
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < shown; i++) {
        s[2 * i] = digits[p[i] >> 4];
        s[2 * i + 1] = digits[p[i] & 15];
    }
    s[2 * shown] = 0;
    json_t *j = json_stringn(s, 2 * shown);
    ent_free(s);
    return j;
}

static json_t *typed(const char *type, json_t *value)
{
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string(type));
    json_object_set_new(o, "value", value ? value : json_null());
    return o;
}

/* A string that is UTF-8 as JSON text; NULL when it is not. */
static json_t *utf8_text(const uint8_t *p, size_t n)
{
    if (ent_utf8_length_n((const char *)p, n) < 0)
        return NULL;
    return json_stringn((const char *)p, n);
}

static json_t *value_json(const amqp_val *v, int depth);

static json_t *described_json(const amqp_val *v, int depth)
{
    const uint8_t *d;
    size_t n;
    int64_t i;
    amqp_val inner = *v;
    inner.described = false;
    if (!v->descriptor_is_code) {
        /* the descriptor is the symbol just after the 0x00 */
        const uint8_t *p = v->start + 1;
        amqp_val desc;
        if (!amqp_read(&p, v->end, &desc) && amqp_val_bytes(&desc, &d, &n)) {
            if (amqp_val_is_symbol(&desc, "com.microsoft:timespan") && amqp_val_i64(&inner, &i))
                return typed("timespan", json_integer(i / TICKS_PER_MS)); /* milliseconds */
            if (amqp_val_is_symbol(&desc, "com.microsoft:datetime-offset") && amqp_val_i64(&inner, &i))
                return typed("datetime-offset", http_dash_time((i - TICKS_AT_UNIX_EPOCH) / TICKS_PER_MS));
            if (amqp_val_is_symbol(&desc, "com.microsoft:uri") && amqp_val_bytes(&inner, &d, &n)) {
                json_t *t = utf8_text(d, n);
                return typed("uri", t ? t : hex_of(d, n, HTTP_DASH_BODY_SHOWN_MAX));
            }
            json_t *o = typed("described", value_json(&inner, depth + 1));
            json_t *dt = utf8_text(d, n);
            json_object_set_new(o, "descriptor", dt ? dt : json_null());
            return o;
        }
    }
    json_t *o = typed("described", value_json(&inner, depth + 1));
    json_object_set_new(o, "descriptor", json_integer((json_int_t)v->descriptor));
    return o;
}

/* Entries of a list or map value as JSON (a map's as [{"key", "value"}]). */
static json_t *compound_json(const amqp_val *v, bool map, int depth)
{
    json_t *a = json_array();
    const uint8_t *p = v->data, *end = v->data + v->size;
    for (uint32_t i = 0; i < v->count; i += map ? 2 : 1) {
        amqp_val x, y;
        if (amqp_read(&p, end, &x) || (map && amqp_read(&p, end, &y)))
            break;
        if (map)
            json_array_append_new(a, json_pack("{s:o, s:o}", "key", value_json(&x, depth + 1), "value",
                                               value_json(&y, depth + 1)));
        else
            json_array_append_new(a, value_json(&x, depth + 1));
    }
    return a;
}

static json_t *value_json(const amqp_val *v, int depth)
{
    if (depth > HTTP_DASH_VALUE_DEPTH_MAX)
        return typed("nested too deep", hex_of(v->start, (size_t)(v->end - v->start), HTTP_DASH_BODY_SHOWN_MAX));
    if (v->described)
        return described_json(v, depth);
    const uint8_t *d;
    size_t n;
    int64_t i;
    uint64_t u;
    bool b;
    char buf[64];
    switch (v->code) {
    case 0x40: return typed("null", json_null());
    case 0x41: case 0x42: case 0x56: amqp_val_bool(v, &b); return typed("boolean", json_boolean(b));
    case 0x50: amqp_val_u64(v, &u); return typed("ubyte", json_integer((json_int_t)u));
    case 0x60: amqp_val_u64(v, &u); return typed("ushort", json_integer((json_int_t)u));
    case 0x70: case 0x52: case 0x43: amqp_val_u64(v, &u); return typed("uint", json_integer((json_int_t)u));
    case 0x80: case 0x53: case 0x44:
        amqp_val_u64(v, &u);
        if (u > INT64_MAX) {
            snprintf(buf, sizeof buf, "%" PRIu64, u);
            return typed("ulong", json_string(buf));
        }
        return typed("ulong", json_integer((json_int_t)u));
    case 0x51: amqp_val_i64(v, &i); return typed("byte", json_integer(i));
    case 0x61: amqp_val_i64(v, &i); return typed("short", json_integer(i));
    case 0x71: case 0x54: amqp_val_i64(v, &i); return typed("int", json_integer(i));
    case 0x81: case 0x55: amqp_val_i64(v, &i); return typed("long", json_integer(i));
    case 0x72: case 0x82: {
        double x;
        if (v->code == 0x72) {
            uint32_t bits = (uint32_t)v->data[0] << 24 | (uint32_t)v->data[1] << 16 | (uint32_t)v->data[2] << 8 |
                            v->data[3];
            float f;
            memcpy(&f, &bits, sizeof f);
            x = f;
        } else {
            uint64_t bits = 0;
            for (int k = 0; k < 8; k++)
                bits = bits << 8 | v->data[k];
            memcpy(&x, &bits, sizeof x);
        }
        const char *type = v->code == 0x72 ? "float" : "double";
        if (!isfinite(x)) {
            ent_fv_format_double(x, buf, sizeof buf);
            return typed(type, json_string(buf));
        }
        return typed(type, json_real(x));
    }
    case 0x73: {
        uint32_t c = (uint32_t)v->data[0] << 24 | (uint32_t)v->data[1] << 16 | (uint32_t)v->data[2] << 8 | v->data[3];
        snprintf(buf, sizeof buf, "U+%04" PRIX32, c);
        return typed("char", json_string(buf));
    }
    case 0x83:
        amqp_val_timestamp(v, &i);
        ent_fv_format_time(i, buf, sizeof buf);
        return typed("timestamp", json_string(buf));
    case 0x98: return typed("uuid", http_dash_uuid(v->data));
    case 0xa0: case 0xb0: amqp_val_bytes(v, &d, &n); return typed("binary", hex_of(d, n, HTTP_DASH_BODY_SHOWN_MAX));
    case 0xa1: case 0xb1: {
        amqp_val_bytes(v, &d, &n);
        json_t *t = utf8_text(d, n);
        return t ? typed("string", t) : typed("string (not UTF-8, as hex)", hex_of(d, n, HTTP_DASH_BODY_SHOWN_MAX));
    }
    case 0xa3: case 0xb3: {
        amqp_val_bytes(v, &d, &n);
        json_t *t = utf8_text(d, n);
        return t ? typed("symbol", t) : typed("symbol (as hex)", hex_of(d, n, HTTP_DASH_BODY_SHOWN_MAX));
    }
    case 0x45: case 0xc0: case 0xd0: return typed("list", compound_json(v, false, depth));
    case 0xc1: case 0xd1: return typed("map", compound_json(v, true, depth));
    default: {
        /* arrays, decimals: their encoding as it is */
        json_t *o = typed(v->code == 0xe0 || v->code == 0xf0 ? "array" : "other",
                          hex_of(v->start, (size_t)(v->end - v->start), HTTP_DASH_BODY_SHOWN_MAX));
        if (v->code == 0xe0 || v->code == 0xf0)
            json_object_set_new(o, "count", json_integer(v->count));
        return o;
    }
    }
}

/* A section's described value: the value inside it. */
static bool section_value(amqp_span s, amqp_val *out)
{
    const uint8_t *p = s.p;
    return s.len && !amqp_read(&p, s.p + s.len, out);
}

/* A list section's fields by name (absent and null fields left out). */
static json_t *fields_json(amqp_span s, const char *const *names, size_t nnames)
{
    amqp_val list;
    json_t *o = json_object();
    if (!section_value(s, &list) || (list.code != 0x45 && list.code != 0xc0 && list.code != 0xd0))
        return o;
    const uint8_t *p = list.data, *end = list.data + list.size;
    for (uint32_t i = 0; i < list.count && i < nnames; i++) {
        amqp_val f;
        if (amqp_read(&p, end, &f))
            break;
        if (!amqp_val_is_null(&f))
            json_object_set_new(o, names[i], value_json(&f, 1));
    }
    return o;
}

/* A map section's entries as [{"key", "type", "value"}] (the key as text). */
static json_t *entries_json(amqp_span s, const char *key_name)
{
    amqp_val map;
    json_t *a = json_array();
    if (!section_value(s, &map) || (map.code != 0xc1 && map.code != 0xd1))
        return a;
    const uint8_t *p = map.data, *end = map.data + map.size;
    for (uint32_t i = 0; i + 1 < map.count; i += 2) {
        amqp_val k, v;
        const uint8_t *d;
        size_t n;
        if (amqp_read(&p, end, &k) || amqp_read(&p, end, &v))
            break;
        json_t *e = value_json(&v, 1);
        json_t *key = amqp_val_bytes(&k, &d, &n) && k.code != 0xa0 && k.code != 0xb0 ? utf8_text(d, n) : NULL;
        json_object_set_new(e, key_name, key ? key : json_string("(a key that is not text)"));
        json_array_append_new(a, e);
    }
    return a;
}

/* The value of a typed entry (value_json's) as plain JSON, for the system view. */
static json_t *plain(json_t *typed_value)
{
    json_t *v = json_object_get(typed_value, "value");
    return v ? json_incref(v) : json_null();
}

/* Service Bus's names for what the sections carry (as ServiceBusReceivedMessage shows them). */
static json_t *system_json(json_t *props, json_t *annotations, const amqp_msg *m)
{
    json_t *s = json_object();
    static const struct {
        const char *sb, *amqp;
    } from_props[] = {
        {"messageId", "messageId"},       {"correlationId", "correlationId"}, {"subject", "subject"},
        {"to", "to"},                     {"replyTo", "replyTo"},             {"sessionId", "groupId"},
        {"replyToSessionId", "replyToGroupId"}, {"contentType", "contentType"},
    };
    for (size_t i = 0; i < sizeof from_props / sizeof from_props[0]; i++) {
        json_t *v = json_object_get(props, from_props[i].amqp);
        if (v)
            json_object_set_new(s, from_props[i].sb, plain(v));
    }
    if (m->ttl_ms >= 0)
        json_object_set_new(s, "timeToLiveMs", json_integer(m->ttl_ms));
    size_t i;
    json_t *e;
    json_array_foreach(annotations, i, e) {
        const char *k = json_string_value(json_object_get(e, "key"));
        if (!k)
            continue;
        if (!strcmp(k, "x-opt-partition-key"))
            json_object_set_new(s, "partitionKey", plain(e));
        else if (!strcmp(k, "x-opt-via-partition-key"))
            json_object_set_new(s, "viaPartitionKey", plain(e));
        else if (!strcmp(k, "x-opt-scheduled-enqueue-time"))
            json_object_set_new(s, "scheduledEnqueueTime", plain(e));
    }
    return s;
}

/* The body: every data section's bytes together (or the amqp-value / amqp-sequence). */
static json_t *body_json(const amqp_msg *m)
{
    json_t *b = json_object();
    if (!m->body.len) {
        json_object_set_new(b, "kind", json_string("none"));
        json_object_set_new(b, "size", json_integer(0));
        return b;
    }
    const uint8_t *p = m->body.p, *end = m->body.p + m->body.len;
    amqp_val sec;
    if (m->body_is_only_data) {
        /* gather the data sections' payloads (usually one) up to what is shown */
        size_t total = 0, shown = 0;
        uint8_t *all = ent_malloc(HTTP_DASH_BODY_SHOWN_MAX);
        while (p < end && !amqp_read(&p, end, &sec)) {
            const uint8_t *d;
            size_t n;
            if (!amqp_val_bytes(&sec, &d, &n))
                continue;
            total += n;
            size_t take = n < HTTP_DASH_BODY_SHOWN_MAX - shown ? n : HTTP_DASH_BODY_SHOWN_MAX - shown;
            if (all && take)
                memcpy(all + shown, d, take);
            shown += take;
        }
        json_object_set_new(b, "kind", json_string("data"));
        json_object_set_new(b, "sections", json_integer(m->body_sections));
        json_object_set_new(b, "size", json_integer((json_int_t)total));
        json_object_set_new(b, "truncated", json_boolean(shown < total));
        if (all) {
            json_t *t = utf8_text(all, shown);
            bool is_json = false;
            if (t && shown == total) {
                json_t *parsed = json_loadb((const char *)all, shown, JSON_DECODE_ANY, NULL);
                is_json = parsed != NULL;
                json_decref(parsed);
            }
            json_object_set_new(b, "text", t ? t : json_null());
            json_object_set_new(b, "json", json_boolean(is_json));
            json_object_set_new(b, "hex", hex_of(all, shown, HTTP_DASH_BODY_SHOWN_MAX));
        }
        ent_free(all);
        return b;
    }
    if (amqp_read(&p, end, &sec)) {
        json_object_set_new(b, "kind", json_string("unreadable"));
        return b;
    }
    bool value = sec.descriptor == AMQP_SEC_AMQP_VALUE;
    json_object_set_new(b, "kind", json_string(value ? "amqpValue" : "amqpSequence"));
    json_object_set_new(b, "sections", json_integer(m->body_sections));
    json_object_set_new(b, "size", json_integer((json_int_t)m->body.len));
    amqp_val inner = sec;
    inner.described = false;
    json_object_set_new(b, "value", value_json(&inner, 1));
    const uint8_t *d;
    size_t n;
    if (value && amqp_val_is_string_type(&inner) && amqp_val_bytes(&inner, &d, &n)) {
        json_t *t = utf8_text(d, n);
        bool is_json = false;
        if (t) {
            json_t *parsed = json_loadb((const char *)d, n, JSON_DECODE_ANY, NULL);
            is_json = parsed != NULL;
            json_decref(parsed);
        }
        json_object_set_new(b, "text", t ? t : json_null());
        json_object_set_new(b, "json", json_boolean(is_json));
    }
    json_object_set_new(b, "hex", hex_of(m->body.p, m->body.len, HTTP_DASH_BODY_SHOWN_MAX));
    json_object_set_new(b, "truncated", json_boolean(m->body.len > HTTP_DASH_BODY_SHOWN_MAX));
    return b;
}

json_t *http_dash_message_json(const uint8_t *bytes, size_t len)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    amqp_msg m;
    char err[256];
    if (amqp_msg_parse(bytes, len, &m, err, sizeof err)) {
        json_object_set_new(o, "error", json_string(err));
        json_object_set_new(o, "hex", hex_of(bytes, len, HTTP_DASH_BODY_SHOWN_MAX));
        return o;
    }
    json_t *header = fields_json(m.header, header_fields, sizeof header_fields / sizeof header_fields[0]);
    json_t *props = fields_json(m.properties, property_fields, sizeof property_fields / sizeof property_fields[0]);
    json_t *annotations = entries_json(m.message_annotations, "key");
    json_object_set_new(o, "system", system_json(props, annotations, &m));
    json_object_set_new(o, "header", header);
    json_object_set_new(o, "deliveryAnnotations", entries_json(m.delivery_annotations, "key"));
    json_object_set_new(o, "messageAnnotations", annotations);
    json_object_set_new(o, "properties", props);
    json_object_set_new(o, "applicationProperties", entries_json(m.application_properties, "name"));
    json_object_set_new(o, "body", body_json(&m));
    if (m.footer.len)
        json_object_set_new(o, "footer", entries_json(m.footer, "key"));
    return o;
}
