/* See amqp_rule_action.h. The action runs against an overlay: reads fall
 * through to amqp_filter_view unless the action changed that property, writes
 * are owned copies. Encoding then walks the original sections and replaces
 * only what the overlay names. */
#include "amqp_rule_action.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_filter_msg.h"
#include "ent_alloc.h"
#include "ent_duration.h"
#include "ent_message_rules.h"
#include "ent_props.h"

#define OVERLAY_INITIAL_CAP 8
/* How the .NET SDK sends a TimeSpan application property (AmqpMessageConverter). */
#define DESC_TIMESPAN "com.microsoft:timespan"
#define ANNOTATION_PARTITION_KEY "x-opt-partition-key"
#define ANNOTATION_VIA_PARTITION_KEY "x-opt-via-partition-key"
#define ANNOTATION_SCHEDULED "x-opt-scheduled-enqueue-time"
/* header: durable, priority, ttl, first-acquirer, delivery-count (part 3 §3.2.1) */
#define HEADER_FIELDS 5
#define HEADER_TTL_FIELD 2

/* One user property the action set or removed. */
typedef struct ov_prop {
    char *name; /* owned, NUL-terminated */
    size_t len;
    bool removed;
    bool written; /* already put in place of an original entry */
    ent_filter_value value; /* string owned */
} ov_prop;

typedef struct overlay {
    amqp_filter_view view;
    ent_filter_value sys[ENT_SYS_COUNT]; /* strings owned */
    bool sys_changed[ENT_SYS_COUNT];
    bool sys_set[ENT_SYS_COUNT]; /* changed and not removed */
    ov_prop *user;
    size_t nuser, cap;
    bool oom;
} overlay;

/* The system properties kept in the properties list, and where. */
static const struct {
    ent_filter_sys id;
    int field;
    bool symbol; /* content-type is a symbol, the others strings */
} prop_fields[] = {
    {ENT_SYS_MESSAGE_ID, AMQP_PROP_FIELD_MESSAGE_ID, false},
    {ENT_SYS_TO, AMQP_PROP_FIELD_TO, false},
    {ENT_SYS_LABEL, AMQP_PROP_FIELD_SUBJECT, false},
    {ENT_SYS_REPLY_TO, AMQP_PROP_FIELD_REPLY_TO, false},
    {ENT_SYS_CORRELATION_ID, AMQP_PROP_FIELD_CORRELATION_ID, false},
    {ENT_SYS_CONTENT_TYPE, AMQP_PROP_FIELD_CONTENT_TYPE, true},
    {ENT_SYS_SESSION_ID, AMQP_PROP_FIELD_GROUP_ID, false},
    {ENT_SYS_REPLY_TO_SESSION_ID, AMQP_PROP_FIELD_REPLY_TO_GROUP_ID, false},
};
#define NPROP_FIELDS (sizeof prop_fields / sizeof prop_fields[0])

/* And those kept in message-annotations. */
static const struct {
    ent_filter_sys id;
    const char *key;
} annotation_fields[] = {
    {ENT_SYS_PARTITION_KEY, ANNOTATION_PARTITION_KEY},
    {ENT_SYS_VIA_PARTITION_KEY, ANNOTATION_VIA_PARTITION_KEY},
    {ENT_SYS_SCHEDULED_ENQUEUE_TIME_UTC, ANNOTATION_SCHEDULED},
};
#define NANNOTATION_FIELDS (sizeof annotation_fields / sizeof annotation_fields[0])

/* ---- the overlay ---- */

static void release(ent_filter_value *v)
{
    if (v->type == ENT_FV_STRING)
        ent_free((char *)v->u.s.ptr);
    *v = ent_fv_null();
}

static int copy_value(overlay *o, const ent_filter_value *v, ent_filter_value *out)
{
    *out = *v;
    if (v->type != ENT_FV_STRING)
        return 0;
    char *s = ent_malloc(v->u.s.len + 1);
    if (!s) {
        o->oom = true;
        return -1;
    }
    if (v->u.s.len)
        memcpy(s, v->u.s.ptr, v->u.s.len);
    s[v->u.s.len] = 0;
    out->u.s.ptr = s;
    return 0;
}

static void overlay_free(overlay *o)
{
    for (int i = 0; i < ENT_SYS_COUNT; i++)
        release(&o->sys[i]);
    for (size_t i = 0; i < o->nuser; i++) {
        ent_free(o->user[i].name);
        release(&o->user[i].value);
    }
    ent_free(o->user);
}

static ov_prop *find_user(const overlay *o, const uint8_t *name, size_t len)
{
    for (size_t i = 0; i < o->nuser; i++)
        if (amqp_filter_name_eq(name, len, o->user[i].name, o->user[i].len))
            return &o->user[i];
    return NULL;
}

/* What Service Bus' own setters refuse (BrokeredMessage/ServiceBusMessage):
 * a non-positive TimeToLive, ids and keys over 128 characters. */
static bool sys_acceptable(ent_filter_sys id, const ent_filter_value *v)
{
    if (!v)
        return true;
    switch (id) {
    case ENT_SYS_TIME_TO_LIVE: return v->u.i > 0;
    case ENT_SYS_SESSION_ID:
    case ENT_SYS_REPLY_TO_SESSION_ID: return ent_message_ids_check(0, ent_utf8_length_n(v->u.s.ptr, v->u.s.len), NULL, 0) == SB_OK;
    case ENT_SYS_MESSAGE_ID:
    case ENT_SYS_PARTITION_KEY:
    case ENT_SYS_VIA_PARTITION_KEY: return ent_message_ids_check(ent_utf8_length_n(v->u.s.ptr, v->u.s.len), 0, NULL, 0) == SB_OK;
    default: return true;
    }
}

static int ov_get_sys(const void *self, ent_filter_sys id, ent_filter_value *out)
{
    const overlay *o = self;
    if ((unsigned)id < ENT_SYS_COUNT && o->sys_changed[id]) {
        if (!o->sys_set[id])
            return 0;
        *out = o->sys[id];
        return 1;
    }
    return amqp_filter_view_get_sys(&o->view, id, out);
}

static int ov_get_user(const void *self, const char *name, size_t len, ent_filter_value *out)
{
    const overlay *o = self;
    const ov_prop *p = find_user(o, (const uint8_t *)name, len);
    if (p) {
        if (p->removed)
            return 0;
        *out = p->value;
        return 1;
    }
    return amqp_filter_view_get_user(&o->view, name, len, out);
}

static int ov_set_sys(void *self, ent_filter_sys id, const ent_filter_value *v)
{
    overlay *o = self;
    ent_filter_value copy = ent_fv_null();
    if ((unsigned)id >= ENT_SYS_COUNT || !sys_acceptable(id, v))
        return -1;
    /* Copy first: v may point at the value being replaced. */
    if (v && copy_value(o, v, &copy) < 0)
        return -1;
    release(&o->sys[id]);
    o->sys[id] = copy;
    o->sys_changed[id] = true;
    o->sys_set[id] = v != NULL;
    return 0;
}

static int ov_set_user(void *self, const char *name, size_t len, const ent_filter_value *v)
{
    overlay *o = self;
    ent_filter_value copy = ent_fv_null();
    if (v && copy_value(o, v, &copy) < 0)
        return -1;
    ov_prop *p = find_user(o, (const uint8_t *)name, len);
    if (!p) {
        if (o->nuser == o->cap) {
            size_t cap = o->cap ? o->cap * 2 : OVERLAY_INITIAL_CAP;
            ov_prop *grown = ent_realloc(o->user, cap * sizeof *grown);
            if (!grown)
                goto oom;
            o->user = grown;
            o->cap = cap;
        }
        char *n = ent_malloc(len + 1);
        if (!n)
            goto oom;
        if (len)
            memcpy(n, name, len);
        n[len] = 0;
        p = &o->user[o->nuser++];
        *p = (ov_prop){.name = n, .len = len, .value = ent_fv_null()};
    }
    release(&p->value);
    p->value = copy;
    p->removed = v == NULL;
    return 0;
oom:
    release(&copy);
    o->oom = true;
    return -1;
}

static const ent_filter_mut_ops overlay_ops = {
    .read = {.get_sys = ov_get_sys, .get_user = ov_get_user},
    .set_sys = ov_set_sys,
    .set_user = ov_set_user,
};

/* ---- encoding ---- */

static void put_raw_value(amqp_buf *b, const amqp_val *v) { amqp_buf_raw(b, v->start, (size_t)(v->end - v->start)); }

/* str8/str32 or sym8/sym32 from bytes that need not end in NUL. */
static void put_text(amqp_buf *b, const ent_filter_value *v, bool symbol)
{
    size_t n = v->u.s.len;
    if (!symbol) {
        amqp_buf_string(b, v->u.s.ptr, n);
        return;
    }
    uint8_t head[5] = {0xa3, (uint8_t)n};
    if (n <= UINT8_MAX) {
        amqp_buf_raw(b, head, 2);
    } else {
        head[0] = 0xb3;
        for (int i = 0; i < 4; i++)
            head[1 + i] = (uint8_t)(n >> (24 - 8 * i));
        amqp_buf_raw(b, head, 5);
    }
    amqp_buf_raw(b, v->u.s.ptr, n);
}

static void put_double(amqp_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    uint8_t x[9] = {0x82};
    for (int i = 0; i < 8; i++)
        x[1 + i] = (uint8_t)(u >> (56 - 8 * i));
    amqp_buf_raw(b, x, sizeof x);
}

static void put_user_value(amqp_buf *b, const ent_filter_value *v)
{
    static const uint8_t described = 0x00;
    switch (v->type) {
    case ENT_FV_BOOL: amqp_buf_bool(b, v->u.b); break;
    case ENT_FV_INT: amqp_buf_long(b, v->u.i); break;
    case ENT_FV_DOUBLE: put_double(b, v->u.d); break;
    case ENT_FV_STRING: put_text(b, v, false); break;
    case ENT_FV_TIME: amqp_buf_timestamp(b, v->u.i); break;
    case ENT_FV_UUID: amqp_buf_uuid(b, v->u.uuid); break;
    case ENT_FV_DURATION: {
        /* TimeSpan ticks; the evaluator keeps durations within TimeSpan's range */
        int64_t ms = v->u.i, lim = INT64_MAX / ENT_TICKS_PER_MS;
        amqp_buf_raw(b, &described, 1);
        amqp_buf_symbol(b, DESC_TIMESPAN);
        amqp_buf_long(b, (ms > lim ? lim : ms < -lim ? -lim : ms) * ENT_TICKS_PER_MS);
        break;
    }
    default: amqp_buf_null(b); break;
    }
}

/* Reads the described list or map that a section span holds. */
static bool read_compound(amqp_span s, amqp_val *v)
{
    const uint8_t *p = s.p;
    return s.len && !amqp_read(&p, s.p + s.len, v);
}

static void encode_header(const overlay *o, amqp_buf *out)
{
    amqp_span s = o->view.parsed->header;
    if (!o->sys_changed[ENT_SYS_TIME_TO_LIVE]) {
        amqp_buf_raw(out, s.p, s.len);
        return;
    }
    amqp_val list, fields[HEADER_FIELDS];
    uint32_t have = 0;
    if (read_compound(s, &list)) {
        const uint8_t *p = list.data;
        while (have < list.count && have < HEADER_FIELDS && !amqp_read(&p, list.data + list.size, &fields[have]))
            have++;
    }
    bool set = o->sys_set[ENT_SYS_TIME_TO_LIVE];
    uint32_t n = set && have <= HEADER_TTL_FIELD ? HEADER_TTL_FIELD + 1 : have;
    if (!n)
        return;
    amqp_buf_descriptor(out, AMQP_SEC_HEADER);
    size_t mark = amqp_buf_list_begin(out);
    for (uint32_t i = 0; i < n; i++) {
        if (i == HEADER_TTL_FIELD) {
            int64_t ttl = o->sys[ENT_SYS_TIME_TO_LIVE].u.i; /* > 0 (sys_acceptable) */
            if (set)
                amqp_buf_uint(out, ttl > UINT32_MAX ? UINT32_MAX : (uint32_t)ttl); /* as .NET and JS cap it */
            else
                amqp_buf_null(out);
        } else if (i < have) {
            put_raw_value(out, &fields[i]);
        } else {
            amqp_buf_null(out);
        }
    }
    amqp_buf_compound_end(out, mark, n);
}

static bool annotation_changed(const overlay *o, const amqp_val *key)
{
    for (size_t i = 0; i < NANNOTATION_FIELDS; i++)
        if (o->sys_changed[annotation_fields[i].id] && amqp_val_is_symbol(key, annotation_fields[i].key))
            return true;
    return false;
}

static void encode_annotations(const overlay *o, amqp_buf *out)
{
    amqp_span s = o->view.parsed->message_annotations;
    bool changed = false, any_set = false;
    for (size_t i = 0; i < NANNOTATION_FIELDS; i++) {
        changed |= o->sys_changed[annotation_fields[i].id];
        any_set |= o->sys_set[annotation_fields[i].id];
    }
    if (!changed || (!s.len && !any_set)) {
        amqp_buf_raw(out, s.p, s.len);
        return;
    }
    amqp_buf_descriptor(out, AMQP_SEC_MESSAGE_ANNOTATIONS);
    size_t mark = amqp_buf_map_begin(out);
    uint32_t n = 0;
    amqp_val map, k, v;
    if (read_compound(s, &map) && (map.code == 0xc1 || map.code == 0xd1)) {
        const uint8_t *p = map.data, *end = map.data + map.size;
        for (uint32_t i = 0; i + 1 < map.count; i += 2) {
            if (amqp_read(&p, end, &k) || amqp_read(&p, end, &v))
                break;
            if (annotation_changed(o, &k))
                continue;
            put_raw_value(out, &k);
            put_raw_value(out, &v);
            n += 2;
        }
    }
    for (size_t i = 0; i < NANNOTATION_FIELDS; i++) {
        ent_filter_sys id = annotation_fields[i].id;
        if (!o->sys_set[id])
            continue;
        amqp_buf_symbol(out, annotation_fields[i].key);
        if (id == ENT_SYS_SCHEDULED_ENQUEUE_TIME_UTC)
            amqp_buf_timestamp(out, o->sys[id].u.i);
        else
            put_text(out, &o->sys[id], false);
        n += 2;
    }
    amqp_buf_compound_end(out, mark, n);
}

static int changed_prop_field(const overlay *o, uint32_t field)
{
    for (size_t i = 0; i < NPROP_FIELDS; i++)
        if ((uint32_t)prop_fields[i].field == field && o->sys_changed[prop_fields[i].id])
            return (int)i;
    return -1;
}

static void encode_properties(const overlay *o, amqp_buf *out)
{
    amqp_span s = o->view.parsed->properties;
    uint32_t n = o->view.nfields;
    bool changed = false;
    for (size_t i = 0; i < NPROP_FIELDS; i++) {
        changed |= o->sys_changed[prop_fields[i].id];
        if (o->sys_set[prop_fields[i].id] && n < (uint32_t)prop_fields[i].field + 1)
            n = (uint32_t)prop_fields[i].field + 1;
    }
    if (!changed || !n) {
        amqp_buf_raw(out, s.p, s.len);
        return;
    }
    amqp_buf_descriptor(out, AMQP_SEC_PROPERTIES);
    size_t mark = amqp_buf_list_begin(out);
    for (uint32_t i = 0; i < n; i++) {
        int c = changed_prop_field(o, i);
        amqp_val f;
        const uint8_t *p = i < AMQP_FILTER_PROPERTIES_FIELDS ? o->view.field[i] : NULL;
        if (c >= 0 && o->sys_set[prop_fields[c].id])
            put_text(out, &o->sys[prop_fields[c].id], prop_fields[c].symbol);
        else if (c < 0 && p && !amqp_read(&p, s.p + s.len, &f))
            put_raw_value(out, &f);
        else
            amqp_buf_null(out);
    }
    amqp_buf_compound_end(out, mark, n);
}

static bool is_rule_name(const uint8_t *name, size_t len, const char *rule_name)
{
    return rule_name && amqp_filter_name_eq(name, len, AMQP_RULE_NAME_PROPERTY, strlen(AMQP_RULE_NAME_PROPERTY));
}

static void encode_application_properties(overlay *o, const char *rule_name, amqp_buf *out)
{
    amqp_span s = o->view.parsed->application_properties;
    if (!o->nuser && !rule_name) {
        amqp_buf_raw(out, s.p, s.len);
        return;
    }
    amqp_buf_descriptor(out, AMQP_SEC_APPLICATION_PROPERTIES);
    size_t mark = amqp_buf_map_begin(out);
    uint32_t n = 0;
    const uint8_t *p = o->view.app, *d;
    size_t len;
    amqp_val k, v;
    for (uint32_t i = 0; p && i + 1 < o->view.app_count; i += 2) {
        if (amqp_read(&p, o->view.app_end, &k) || amqp_read(&p, o->view.app_end, &v))
            break;
        ov_prop *c = NULL;
        if (amqp_val_bytes(&k, &d, &len) && k.code != 0xa0 && k.code != 0xb0) {
            if (is_rule_name(d, len, rule_name))
                continue;
            c = find_user(o, d, len);
        }
        if (c && c->removed)
            continue;
        put_raw_value(out, &k); /* a changed property keeps its key's spelling */
        if (c) {
            put_user_value(out, &c->value);
            c->written = true;
        } else {
            put_raw_value(out, &v);
        }
        n += 2;
    }
    for (size_t i = 0; i < o->nuser; i++) {
        const ov_prop *c = &o->user[i];
        if (c->removed || c->written || is_rule_name((const uint8_t *)c->name, c->len, rule_name))
            continue;
        amqp_buf_string(out, c->name, c->len);
        put_user_value(out, &c->value);
        n += 2;
    }
    if (rule_name) {
        amqp_buf_string(out, AMQP_RULE_NAME_PROPERTY, strlen(AMQP_RULE_NAME_PROPERTY));
        amqp_buf_string(out, rule_name, strlen(rule_name));
        n += 2;
    }
    amqp_buf_compound_end(out, mark, n);
}

/* ---- the whole ---- */

static void fail(ent_filter_error *err, ent_filter_err_kind kind, const char *msg)
{
    memset(err, 0, sizeof *err);
    err->kind = kind;
    err->line = 1;
    snprintf(err->message, sizeof err->message, "%s", msg);
}

int amqp_rule_apply(const uint8_t *bytes, size_t len, const amqp_msg *parsed, int64_t enqueued_ms,
                    const ent_filter_action *action, const char *rule_name, uint8_t **out, size_t *outlen,
                    ent_filter_error *err)
{
    ent_filter_error local;
    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    *out = NULL;
    *outlen = 0;

    overlay o;
    memset(&o, 0, sizeof o);
    amqp_filter_view_init(&o.view, bytes, len, parsed, enqueued_ms);
    if (o.view.malformed) {
        /* rewriting what cannot be read would lose it */
        fail(err, ENT_FILTER_ERR_MESSAGE, "the message's properties or application-properties section is malformed");
        return -1;
    }
    if (action) {
        ent_filter_mut_msg mut = {&overlay_ops, &o};
        if (ent_filter_action_exec(action, &mut, err) < 0) {
            if (o.oom)
                fail(err, ENT_FILTER_ERR_NOMEM, "out of memory");
            overlay_free(&o);
            return -1;
        }
    }

    amqp_buf b = {0};
    encode_header(&o, &b);
    amqp_buf_raw(&b, parsed->delivery_annotations.p, parsed->delivery_annotations.len);
    encode_annotations(&o, &b);
    encode_properties(&o, &b);
    encode_application_properties(&o, rule_name, &b);
    amqp_buf_raw(&b, parsed->body.p, parsed->body.len);
    amqp_buf_raw(&b, parsed->footer.p, parsed->footer.len);
    overlay_free(&o);
    if (b.failed) {
        amqp_buf_free(&b);
        fail(err, ENT_FILTER_ERR_NOMEM, "out of memory");
        return -1;
    }
    *out = b.data;
    *outlen = b.len;
    return 0;
}
