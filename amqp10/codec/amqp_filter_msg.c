/* See amqp_filter_msg.h. */
#include "amqp_filter_msg.h"
#include "ent_duration.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* AMQP format codes this file tells apart (part 1 §1.6). */
enum {
    CODE_NULL = 0x40,
    CODE_BOOL_TRUE = 0x41, CODE_BOOL_FALSE = 0x42, CODE_BOOL = 0x56,
    CODE_UBYTE = 0x50, CODE_USHORT = 0x60, CODE_UINT = 0x70, CODE_SMALLUINT = 0x52, CODE_UINT0 = 0x43,
    CODE_ULONG = 0x80, CODE_SMALLULONG = 0x53, CODE_ULONG0 = 0x44,
    CODE_BYTE = 0x51, CODE_SHORT = 0x61, CODE_INT = 0x71, CODE_SMALLINT = 0x54,
    CODE_LONG = 0x81, CODE_SMALLLONG = 0x55,
    CODE_FLOAT = 0x72, CODE_DOUBLE = 0x82,
    CODE_TIMESTAMP = 0x83, CODE_UUID = 0x98,
    CODE_BIN8 = 0xa0, CODE_BIN32 = 0xb0,
    CODE_STR8 = 0xa1, CODE_STR32 = 0xb1, CODE_SYM8 = 0xa3, CODE_SYM32 = 0xb3,
    CODE_LIST0 = 0x45, CODE_LIST8 = 0xc0, CODE_LIST32 = 0xd0,
    CODE_MAP8 = 0xc1, CODE_MAP32 = 0xd1,
};

/* .NET types the SDKs send as described values in application-properties
 * (Azure.Messaging.ServiceBus AmqpMessageConverter; AmqpMessageConstants). */
#define DESC_TIMESPAN "com.microsoft:timespan"               /* long: TimeSpan ticks */
#define DESC_DATETIME_OFFSET "com.microsoft:datetime-offset" /* long: UtcTicks */
#define DESC_URI "com.microsoft:uri"                         /* string: AbsoluteUri */

#define ANNOTATION_PARTITION_KEY "x-opt-partition-key"
#define ANNOTATION_VIA_PARTITION_KEY "x-opt-via-partition-key"

static bool is_list(uint8_t code) { return code == CODE_LIST0 || code == CODE_LIST8 || code == CODE_LIST32; }
static bool is_map(uint8_t code) { return code == CODE_MAP8 || code == CODE_MAP32; }

bool amqp_filter_name_eq(const uint8_t *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++) {
        unsigned char x = a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

static bool within(const amqp_span *s, const uint8_t *bytes, size_t len)
{
    return !s->len || (s->p >= bytes && s->len <= len && (size_t)(s->p - bytes) <= len - s->len);
}

/* Text of a message-id/correlation-id that is not a string, in the forms
 * amqp_message.c gives MessageId: decimal ulong, guid, lowercase hex binary. */
static size_t format_id(const amqp_val *f, char *out, size_t cap)
{
    uint64_t u;
    const uint8_t *d;
    size_t n, o = 0;
    if (f->code == CODE_UUID)
        return ent_fv_format_uuid(f->data, out, cap) < cap ? ENT_FV_UUID_TEXT_LEN : 0;
    if (amqp_val_u64(f, &u)) {
        int w = snprintf(out, cap, "%" PRIu64, u);
        return w > 0 && (size_t)w < cap ? (size_t)w : 0;
    }
    if (amqp_val_bytes(f, &d, &n))
        for (size_t i = 0; i < n && o + 2 < cap; i++)
            o += (size_t)snprintf(out + o, cap - o, "%02x", d[i]);
    return o;
}

static void index_properties(amqp_filter_view *v, amqp_span s)
{
    const uint8_t *p = s.p;
    amqp_val list, f;
    if (amqp_read(&p, s.p + s.len, &list) || !is_list(list.code)) {
        v->malformed = true;
        return;
    }
    p = list.data;
    const uint8_t *end = list.data + list.size;
    for (uint32_t i = 0; i < list.count && i < AMQP_FILTER_PROPERTIES_FIELDS; i++) {
        if (amqp_read(&p, end, &f)) {
            v->malformed = true;
            return;
        }
        v->nfields = i + 1;
        if (!amqp_val_is_null(&f))
            v->field[i] = f.start;
    }
    const uint8_t *c = v->field[AMQP_PROP_FIELD_CORRELATION_ID];
    if (c && !amqp_read(&c, end, &f) && !amqp_val_is_string_type(&f))
        v->correlation_len = format_id(&f, v->correlation_id, sizeof v->correlation_id);
}

static void index_application_properties(amqp_filter_view *v, amqp_span s)
{
    const uint8_t *p = s.p;
    amqp_val map;
    if (amqp_read(&p, s.p + s.len, &map) || !is_map(map.code)) {
        v->malformed = true;
        return;
    }
    v->app = map.data;
    v->app_end = map.data + map.size;
    v->app_count = map.count;
}

void amqp_filter_view_init(amqp_filter_view *v, const uint8_t *bytes, size_t len, const amqp_msg *parsed,
                           int64_t enqueued_ms)
{
    memset(v, 0, sizeof *v);
    v->parsed = parsed;
    v->len = len;
    v->enqueued_ms = enqueued_ms;
    /* A parse of other bytes would send every lookup astray: answer nothing. */
    if (!within(&parsed->properties, bytes, len) || !within(&parsed->application_properties, bytes, len) ||
        !within(&parsed->message_annotations, bytes, len)) {
        v->malformed = true;
        return;
    }
    if (parsed->properties.len)
        index_properties(v, parsed->properties);
    if (parsed->application_properties.len)
        index_application_properties(v, parsed->application_properties);
}

/* ---- system properties ---- */

static const uint8_t *section_end(const amqp_span *s) { return s->p + s->len; }

/* A string or symbol field of the properties list. */
static int text_field(const amqp_filter_view *v, int index, ent_filter_value *out)
{
    const uint8_t *p = v->field[index], *d;
    size_t n;
    amqp_val f;
    if (!p || amqp_read(&p, section_end(&v->parsed->properties), &f) || f.code == CODE_BIN8 ||
        f.code == CODE_BIN32 || !amqp_val_bytes(&f, &d, &n))
        return 0;
    *out = ent_fv_string((const char *)d, n);
    return 1;
}

/* message-id and correlation-id may be any id type: strings are shown as
 * they are, the others as the text prepared for them. */
static int id_field(const amqp_filter_view *v, int index, ent_filter_value *out)
{
    if (!v->field[index])
        return 0;
    if (text_field(v, index, out))
        return 1;
    if (index == AMQP_PROP_FIELD_MESSAGE_ID) {
        if (!v->parsed->has_message_id)
            return 0;
        *out = ent_fv_cstr(v->parsed->message_id);
        return 1;
    }
    *out = ent_fv_string(v->correlation_id, v->correlation_len);
    return 1;
}

static int annotation_string(const amqp_filter_view *v, const char *key, ent_filter_value *out)
{
    amqp_span s = v->parsed->message_annotations;
    const uint8_t *p = s.p, *d;
    size_t n;
    amqp_val map, k, val;
    if (!s.len || amqp_read(&p, section_end(&s), &map) || !is_map(map.code))
        return 0;
    p = map.data;
    for (uint32_t i = 0; i + 1 < map.count; i += 2) {
        if (amqp_read(&p, map.data + map.size, &k) || amqp_read(&p, map.data + map.size, &val))
            return 0;
        if (amqp_val_is_symbol(&k, key)) {
            if (!amqp_val_is_string_type(&val) || !amqp_val_bytes(&val, &d, &n))
                return 0;
            *out = ent_fv_string((const char *)d, n);
            return 1;
        }
    }
    return 0;
}

int amqp_filter_view_get_sys(const amqp_filter_view *v, ent_filter_sys id, ent_filter_value *out)
{
    if (v->malformed && id != ENT_SYS_ENQUEUED_TIME_UTC && id != ENT_SYS_SIZE)
        return 0;
    switch (id) {
    case ENT_SYS_MESSAGE_ID: return id_field(v, AMQP_PROP_FIELD_MESSAGE_ID, out);
    case ENT_SYS_CORRELATION_ID: return id_field(v, AMQP_PROP_FIELD_CORRELATION_ID, out);
    case ENT_SYS_LABEL: return text_field(v, AMQP_PROP_FIELD_SUBJECT, out);
    case ENT_SYS_TO: return text_field(v, AMQP_PROP_FIELD_TO, out);
    case ENT_SYS_REPLY_TO: return text_field(v, AMQP_PROP_FIELD_REPLY_TO, out);
    case ENT_SYS_REPLY_TO_SESSION_ID: return text_field(v, AMQP_PROP_FIELD_REPLY_TO_GROUP_ID, out);
    case ENT_SYS_SESSION_ID: return text_field(v, AMQP_PROP_FIELD_GROUP_ID, out);
    case ENT_SYS_CONTENT_TYPE: return text_field(v, AMQP_PROP_FIELD_CONTENT_TYPE, out);
    case ENT_SYS_PARTITION_KEY: return annotation_string(v, ANNOTATION_PARTITION_KEY, out);
    case ENT_SYS_VIA_PARTITION_KEY: return annotation_string(v, ANNOTATION_VIA_PARTITION_KEY, out);
    case ENT_SYS_SCHEDULED_ENQUEUE_TIME_UTC:
        if (!v->parsed->scheduled_enqueue_ms)
            return 0;
        *out = ent_fv_time(v->parsed->scheduled_enqueue_ms);
        return 1;
    case ENT_SYS_TIME_TO_LIVE:
        if (v->parsed->ttl_ms < 0)
            return 0;
        *out = ent_fv_duration(v->parsed->ttl_ms);
        return 1;
    case ENT_SYS_ENQUEUED_TIME_UTC: *out = ent_fv_time(v->enqueued_ms); return 1;
    case ENT_SYS_SIZE: *out = ent_fv_int((int64_t)v->len); return 1;
    default: return 0; /* the broker's, and not known before the commit */
    }
}

/* ---- application properties ---- */

/* A described value the .NET SDK uses for a type AMQP lacks. */
static int described_value(const amqp_val *val, ent_filter_value *out)
{
    const uint8_t *p = val->start + 1, *d;
    size_t n;
    int64_t i;
    amqp_val desc;
    if (amqp_read(&p, val->end, &desc))
        return 0;
    if (amqp_val_is_symbol(&desc, DESC_TIMESPAN) && amqp_val_i64(val, &i)) {
        *out = ent_fv_duration(i / ENT_TICKS_PER_MS);
        return 1;
    }
    if (amqp_val_is_symbol(&desc, DESC_DATETIME_OFFSET) && amqp_val_i64(val, &i)) {
        *out = ent_fv_time((i - ENT_TICKS_AT_UNIX_EPOCH) / ENT_TICKS_PER_MS);
        return 1;
    }
    if (amqp_val_is_symbol(&desc, DESC_URI) && amqp_val_is_string_type(val) && amqp_val_bytes(val, &d, &n)) {
        *out = ent_fv_string((const char *)d, n);
        return 1;
    }
    return 0;
}

static double be_double(const uint8_t *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | p[i];
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static float be_float(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* One application-property value as the rule language types it. What it has
 * no type for (binary, char, decimal32/64/128, lists, maps, arrays, other
 * described values) is present but NULL: EXISTS sees it, comparisons are
 * unknown, as the broker cannot compare them either. */
static ent_filter_value user_value(const amqp_val *val)
{
    ent_filter_value out = ent_fv_null();
    uint64_t u;
    int64_t i;
    bool b;
    const uint8_t *d;
    size_t n;
    if (val->described) {
        described_value(val, &out);
        return out;
    }
    switch (val->code) {
    case CODE_BOOL_TRUE: case CODE_BOOL_FALSE: case CODE_BOOL:
        amqp_val_bool(val, &b);
        return ent_fv_bool(b);
    case CODE_ULONG: case CODE_SMALLULONG: case CODE_ULONG0:
    case CODE_UINT: case CODE_SMALLUINT: case CODE_UINT0: case CODE_USHORT: case CODE_UBYTE:
        amqp_val_u64(val, &u);
        return u > INT64_MAX ? ent_fv_double((double)u) : ent_fv_int((int64_t)u);
    case CODE_LONG: case CODE_SMALLLONG: case CODE_INT: case CODE_SMALLINT: case CODE_SHORT: case CODE_BYTE:
        amqp_val_i64(val, &i);
        return ent_fv_int(i);
    case CODE_FLOAT: return ent_fv_double(be_float(val->data));
    case CODE_DOUBLE: return ent_fv_double(be_double(val->data));
    case CODE_TIMESTAMP:
        amqp_val_timestamp(val, &i);
        return ent_fv_time(i);
    case CODE_UUID: return ent_fv_uuid(val->data);
    case CODE_STR8: case CODE_STR32: case CODE_SYM8: case CODE_SYM32:
        amqp_val_bytes(val, &d, &n);
        return ent_fv_string((const char *)d, n);
    default: return out;
    }
}

int amqp_filter_view_get_user(const amqp_filter_view *v, const char *name, size_t len, ent_filter_value *out)
{
    const uint8_t *p = v->app, *d;
    size_t n;
    amqp_val k, val;
    for (uint32_t i = 0; p && i + 1 < v->app_count; i += 2) {
        if (amqp_read(&p, v->app_end, &k) || amqp_read(&p, v->app_end, &val))
            return 0;
        /* keys are strings (AMQP 1.0 §3.2.5); a symbol key is read the same way */
        if (k.code == CODE_BIN8 || k.code == CODE_BIN32 || !amqp_val_bytes(&k, &d, &n) ||
            !amqp_filter_name_eq(d, n, name, len))
            continue;
        *out = user_value(&val);
        return 1;
    }
    return 0;
}

static int view_get_sys(const void *self, ent_filter_sys id, ent_filter_value *out)
{
    return amqp_filter_view_get_sys(self, id, out);
}

static int view_get_user(const void *self, const char *name, size_t len, ent_filter_value *out)
{
    return amqp_filter_view_get_user(self, name, len, out);
}

static const ent_filter_msg_ops view_ops = {.get_sys = view_get_sys, .get_user = view_get_user};

ent_filter_msg amqp_filter_view_msg(const amqp_filter_view *v) { return (ent_filter_msg){&view_ops, v}; }
