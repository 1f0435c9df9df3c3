/* Rule values <-> JSON (see store_rule_json.h). */
#include "store_rule_json.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"

static const char *const type_names[] = {"timestamp", "timespan", "guid"};

char *store_json_text(const struct json_t *j, size_t flags)
{
    size_t n = json_dumpb(j, NULL, 0, flags);
    char *text = n ? ent_malloc(n + 1) : NULL;
    if (text && json_dumpb(j, text, n, flags) == n) {
        text[n] = 0;
        return text;
    }
    ent_free(text);
    return NULL;
}

/* Bytes of text one value needs once parsed (name and string kept). */
static size_t text_need(const char *name, json_t *v)
{
    size_t n = strlen(name) + 1;
    if (json_is_string(v))
        n += json_string_length(v) + 1;
    return n;
}

static int parse_value(json_t *v, char **text, ent_filter_value *out, char *err, size_t errlen, const char *name)
{
    switch (json_typeof(v)) {
    case JSON_STRING: {
        size_t len = json_string_length(v);
        memcpy(*text, json_string_value(v), len + 1);
        *out = ent_fv_string(*text, len);
        *text += len + 1;
        return 0;
    }
    case JSON_INTEGER: *out = ent_fv_int(json_integer_value(v)); return 0;
    case JSON_REAL: *out = ent_fv_double(json_real_value(v)); return 0;
    case JSON_TRUE: *out = ent_fv_bool(1); return 0;
    case JSON_FALSE: *out = ent_fv_bool(0); return 0;
    case JSON_NULL: *out = ent_fv_null(); return 0;
    case JSON_OBJECT: {
        const char *type = json_string_value(json_object_get(v, "type"));
        const char *s = json_string_value(json_object_get(v, "value"));
        if (type && s) {
            size_t len = strlen(s);
            if (!strcmp(type, "timestamp") && !ent_fv_parse_time(s, len, &out->u.i)) {
                out->type = ENT_FV_TIME;
                return 0;
            }
            if (!strcmp(type, "guid") && !ent_fv_parse_uuid(s, len, out->u.uuid)) {
                out->type = ENT_FV_UUID;
                return 0;
            }
            if (!strcmp(type, "timespan")) {
                /* [-][d.]hh:mm:ss[.fff] */
                int neg = *s == '-';
                long long d = 0, h, m;
                double sec;
                const char *p = s + neg;
                if ((strchr(p, '.') && strchr(p, '.') < strchr(p, ':') && sscanf(p, "%lld.%lld:%lld:%lf", &d, &h, &m, &sec) == 4) ||
                    sscanf(p, "%lld:%lld:%lf", &h, &m, &sec) == 3) {
                    int64_t ms = (int64_t)(((d * 24 + h) * 60 + m) * 60000) + (int64_t)(sec * 1000 + 0.5);
                    *out = ent_fv_duration(neg ? -ms : ms);
                    return 0;
                }
            }
        }
        break;
    }
    default: break;
    }
    snprintf(err, errlen, "the value of \"%s\" is not a string, number, boolean, null or {\"type\": timestamp|timespan|guid, \"value\"}", name);
    return -1;
}

int store_rule_props_parse(const char *json, store_rule_props *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!json || !*json)
        return 0;
    json_error_t je;
    json_t *o = json_loads(json, JSON_DECODE_ANY, &je);
    if (!json_is_object(o)) {
        snprintf(err, errlen, "not a JSON object: %s", o ? "another JSON value" : je.text);
        json_decref(o);
        return -1;
    }
    size_t need = 1;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) need += text_need(k, v);
    size_t n = json_object_size(o);
    out->props = ent_calloc(n ? n : 1, sizeof *out->props);
    out->storage = ent_malloc(need);
    if (!out->props || !out->storage) {
        snprintf(err, errlen, "out of memory");
        json_decref(o);
        store_rule_props_free(out);
        return -1;
    }
    char *text = out->storage;
    json_object_foreach(o, k, v) {
        size_t kl = strlen(k);
        memcpy(text, k, kl + 1);
        out->props[out->n].name = text;
        text += kl + 1;
        if (parse_value(v, &text, &out->props[out->n].value, err, errlen, k)) {
            json_decref(o);
            store_rule_props_free(out);
            return -1;
        }
        out->n++;
    }
    json_decref(o);
    return 0;
}

void store_rule_props_free(store_rule_props *p)
{
    ent_free(p->props);
    ent_free(p->storage);
    memset(p, 0, sizeof *p);
}

static json_t *typed(int which, const char *text)
{
    return json_pack("{s:s, s:s}", "type", type_names[which], "value", text);
}

char *store_rule_props_json(const ent_filter_prop *props, size_t n)
{
    json_t *o = json_object();
    char buf[64];
    for (size_t i = 0; o && i < n; i++) {
        const ent_filter_value *v = &props[i].value;
        json_t *j = NULL;
        switch (v->type) {
        case ENT_FV_NULL: j = json_null(); break;
        case ENT_FV_BOOL: j = json_boolean(v->u.b); break;
        case ENT_FV_INT: j = json_integer(v->u.i); break;
        case ENT_FV_DOUBLE: j = json_real(v->u.d); break;
        case ENT_FV_STRING: j = json_stringn(v->u.s.ptr, v->u.s.len); break;
        case ENT_FV_TIME: ent_fv_format_time(v->u.i, buf, sizeof buf); j = typed(0, buf); break;
        case ENT_FV_DURATION: ent_fv_format_duration(v->u.i, buf, sizeof buf); j = typed(1, buf); break;
        case ENT_FV_UUID: ent_fv_format_uuid(v->u.uuid, buf, sizeof buf); j = typed(2, buf); break;
        }
        if (!j || json_object_set_new(o, props[i].name, j)) {
            json_decref(o);
            return NULL;
        }
    }
    char *text = o ? store_json_text(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return text;
}

/* The correlation fields, in the order of ent_filter_correlation. */
static const char *const correlation_keys[] = {"CorrelationId", "MessageId", "To", "ReplyTo", "Label",
                                               "SessionId", "ReplyToSessionId", "ContentType"};

int store_rule_correlation_parse(const char *json, ent_filter_correlation *out, char **storage,
                                 store_rule_props *props, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    memset(props, 0, sizeof *props);
    *storage = NULL;
    json_error_t je;
    json_t *o = json ? json_loads(json, 0, &je) : NULL;
    if (!json_is_object(o)) {
        snprintf(err, errlen, "the correlation filter is not a JSON object");
        json_decref(o);
        return -1;
    }
    size_t need = 1;
    for (size_t i = 0; i < 8; i++) {
        json_t *v = json_object_get(o, correlation_keys[i]);
        if (json_is_string(v))
            need += json_string_length(v) + 1;
    }
    char *text = *storage = ent_malloc(need);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        json_decref(o);
        return -1;
    }
    const char **fields[8] = {&out->correlation_id, &out->message_id, &out->to, &out->reply_to, &out->label,
                              &out->session_id, &out->reply_to_session_id, &out->content_type};
    for (size_t i = 0; i < 8; i++) {
        json_t *v = json_object_get(o, correlation_keys[i]);
        if (!json_is_string(v))
            continue;
        size_t len = json_string_length(v);
        memcpy(text, json_string_value(v), len + 1);
        *fields[i] = text;
        text += len + 1;
    }
    int rc = 0;
    json_t *p = json_object_get(o, "Properties");
    if (json_is_object(p)) {
        char *ptext = store_json_text(p, JSON_COMPACT);
        rc = ptext ? store_rule_props_parse(ptext, props, err, errlen) : -1;
        ent_free(ptext);
        out->properties = props->props;
        out->nproperties = props->n;
    }
    json_decref(o);
    if (rc) {
        ent_free(*storage);
        *storage = NULL;
    }
    return rc;
}
