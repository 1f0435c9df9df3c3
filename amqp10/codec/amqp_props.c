/* Properties to modify (see amqp_props.h): read from an outcome's map and
 * merged into a stored message's application-properties. */
#include "amqp_props.h"

#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"

static bool same_string(const amqp_val *a, const amqp_val *b)
{
    const uint8_t *x, *y;
    size_t n, m;
    return amqp_val_bytes(a, &x, &n) && amqp_val_bytes(b, &y, &m) && n == m && !memcmp(x, y, n);
}

static bool key_in_map(const amqp_val *key, const amqp_val *map)
{
    const uint8_t *p = map->data, *end = map->data + map->size;
    amqp_val k, v;
    for (uint32_t i = 0; i + 1 < map->count; i += 2) {
        if (amqp_read(&p, end, &k) || amqp_read(&p, end, &v))
            return false;
        if (same_string(key, &k))
            return true;
    }
    return false;
}

static bool read_map(const uint8_t *p, size_t len, amqp_val *map)
{
    const uint8_t *at = p;
    return !amqp_read(&at, p + len, map) && (map->code == 0xc1 || map->code == 0xd1);
}

int amqp_apply_properties(const uint8_t *stored, size_t len, const uint8_t *mods, size_t modslen, amqp_buf *out)
{
    amqp_msg m;
    amqp_val modmap;
    if (amqp_msg_parse(stored, len, &m, NULL, 0) || !read_map(mods, modslen, &modmap))
        return -1;
    /* where the section is, or would go (after properties, before the body) */
    const uint8_t *at = m.application_properties.len ? m.application_properties.p
                        : m.body.len                 ? m.body.p
                        : m.footer.len               ? m.footer.p
                                                     : stored + len;
    amqp_buf_raw(out, stored, (size_t)(at - stored));
    amqp_buf_descriptor(out, AMQP_SEC_APPLICATION_PROPERTIES);
    size_t mark = amqp_buf_map_begin(out);
    uint32_t n = 0;
    amqp_val old, k, v;
    const uint8_t *p, *end;
    if (m.application_properties.len) {
        /* the section is a described map: read past the descriptor */
        const uint8_t *s = m.application_properties.p;
        if (amqp_read(&s, m.application_properties.p + m.application_properties.len, &old) ||
            (old.code != 0xc1 && old.code != 0xd1))
            return -1;
        p = old.data;
        end = old.data + old.size;
        for (uint32_t i = 0; i + 1 < old.count; i += 2) {
            if (amqp_read(&p, end, &k) || amqp_read(&p, end, &v))
                return -1;
            if (key_in_map(&k, &modmap))
                continue; /* replaced below */
            amqp_buf_raw(out, k.start, (size_t)(k.end - k.start));
            amqp_buf_raw(out, v.start, (size_t)(v.end - v.start));
            n += 2;
        }
    }
    p = modmap.data;
    end = modmap.data + modmap.size;
    for (uint32_t i = 0; i + 1 < modmap.count; i += 2) {
        if (amqp_read(&p, end, &k) || amqp_read(&p, end, &v))
            return -1;
        if (!amqp_val_is_string_type(&k))
            return -1; /* application-properties keys are strings */
        amqp_buf_raw(out, k.start, (size_t)(k.end - k.start));
        amqp_buf_raw(out, v.start, (size_t)(v.end - v.start));
        n += 2;
    }
    amqp_buf_compound_end(out, mark, n);
    const uint8_t *rest = at + m.application_properties.len;
    amqp_buf_raw(out, rest, (size_t)(stored + len - rest));
    return out->failed ? -1 : 0;
}

char *amqp_data_encode(pn_data_t *data, ssize_t *len)
{
    /* Proton encodes into a buffer it is given, and says when that is too small */
    size_t cap = AMQP_DATA_ENCODE_FIRST;
    char *buf = NULL;
    for (;;) {
        char *nb = ent_realloc(buf, cap);
        if (!nb) {
            ent_free(buf);
            return NULL;
        }
        buf = nb;
        *len = pn_data_encode(data, buf, cap);
        if (*len != PN_OVERFLOW)
            return buf;
        cap *= 2;
    }
}

int amqp_properties_from_map(pn_data_t *map, const char *const *skip, size_t nskip, uint8_t **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (!map)
        return 1;
    pn_data_rewind(map);
    if (!pn_data_next(map) || pn_data_type(map) != PN_MAP || pn_data_get_map(map) == 0)
        return 1;
    ssize_t got;
    char *buf = amqp_data_encode(map, &got);
    if (!buf)
        return -1;
    amqp_val top, k, v;
    amqp_buf b = {0};
    int rc = got > 0 && read_map((const uint8_t *)buf, (size_t)got, &top) ? 0 : -1;
    size_t mark = amqp_buf_map_begin(&b);
    uint32_t n = 0;
    const uint8_t *p = rc ? NULL : top.data, *end = rc ? NULL : top.data + top.size;
    for (uint32_t i = 0; rc == 0 && i + 1 < top.count; i += 2) {
        const uint8_t *key;
        size_t klen;
        if (amqp_read(&p, end, &k) || amqp_read(&p, end, &v) || k.code == 0xa0 || k.code == 0xb0 ||
            !amqp_val_bytes(&k, &key, &klen)) {
            rc = -1; /* application-properties keys are strings (a symbol key is taken as one) */
            break;
        }
        bool skipped = false;
        for (size_t j = 0; j < nskip && !skipped; j++)
            skipped = strlen(skip[j]) == klen && !memcmp(skip[j], key, klen);
        if (skipped)
            continue;
        amqp_buf_string(&b, (const char *)key, klen);
        amqp_buf_raw(&b, v.start, (size_t)(v.end - v.start));
        n += 2;
    }
    amqp_buf_compound_end(&b, mark, n);
    ent_free(buf);
    if (rc || b.failed) {
        amqp_buf_free(&b);
        return -1;
    }
    if (n == 0) {
        amqp_buf_free(&b);
        return 1;
    }
    *out = b.data; /* the buffer's allocation becomes the caller's */
    *outlen = b.len;
    return 0;
}
