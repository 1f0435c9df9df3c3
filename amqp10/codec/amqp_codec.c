/* See amqp_codec.h. Format codes and widths follow AMQP 1.0 part 1, §1.6/§1.7:
 * the high nibble of a constructor says how its payload is sized. */
#include "amqp_codec.h"

#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

static int read_value(const uint8_t **p, const uint8_t *end, amqp_val *v, int depth);

/* Reads the payload that follows constructor `code` at *p. */
static int read_payload(const uint8_t **p, const uint8_t *end, uint8_t code, amqp_val *v)
{
    const uint8_t *q = *p;
    size_t avail = (size_t)(end - q);
    size_t width;
    v->code = code;
    v->count = 0;
    switch (code >> 4) {
    case 0x4: width = 0; break;
    case 0x5: width = 1; break;
    case 0x6: width = 2; break;
    case 0x7: width = 4; break;
    case 0x8: width = 8; break;
    case 0x9: width = 16; break;
    case 0xa: case 0xc: case 0xe: /* one-byte size */
        if (avail < 1)
            return -1;
        width = q[0];
        q++;
        avail--;
        if (width > avail)
            return -1;
        v->data = q;
        v->size = width;
        if (code >> 4 != 0xa) {
            if (width < 1)
                return -1;
            v->count = q[0];
            v->data = q + 1;
            v->size = width - 1;
        }
        *p = q + width;
        return 0;
    case 0xb: case 0xd: case 0xf: /* four-byte size */
        if (avail < 4)
            return -1;
        width = be32(q);
        q += 4;
        avail -= 4;
        if (width > avail)
            return -1;
        v->data = q;
        v->size = width;
        if (code >> 4 != 0xb) {
            if (width < 4)
                return -1;
            v->count = be32(q);
            v->data = q + 4;
            v->size = width - 4;
        }
        *p = q + width;
        return 0;
    default:
        return -1;
    }
    if (width > avail)
        return -1;
    v->data = q;
    v->size = width;
    *p = q + width;
    return 0;
}

static int read_value(const uint8_t **p, const uint8_t *end, amqp_val *v, int depth)
{
    if (depth > AMQP_CODEC_MAX_DEPTH || *p >= end)
        return -1;
    memset(v, 0, sizeof *v);
    v->start = *p;
    uint8_t code = *(*p)++;
    if (code == 0x00) {
        amqp_val d;
        if (read_value(p, end, &d, depth + 1) || d.described)
            return -1;
        v->described = true;
        v->descriptor_is_code = amqp_val_u64(&d, &v->descriptor);
        if (*p >= end)
            return -1;
        code = *(*p)++;
        if (code == 0x00)
            return -1; /* a descriptor may not describe another described value here */
    }
    if (read_payload(p, end, code, v))
        return -1;
    v->end = *p;
    return 0;
}

int amqp_read(const uint8_t **p, const uint8_t *end, amqp_val *v) { return read_value(p, end, v, 0); }

bool amqp_val_u64(const amqp_val *v, uint64_t *out)
{
    int64_t s;
    switch (v->code) {
    case 0x43: case 0x44: *out = 0; return true;              /* uint0, ulong0 */
    case 0x50: case 0x52: case 0x53: *out = v->data[0]; return true; /* ubyte, smalluint, smallulong */
    case 0x60: *out = (uint64_t)v->data[0] << 8 | v->data[1]; return true;
    case 0x70: *out = be32(v->data); return true;
    case 0x80: *out = be64(v->data); return true;
    default:
        if (amqp_val_i64(v, &s) && s >= 0) {
            *out = (uint64_t)s;
            return true;
        }
        return false;
    }
}

bool amqp_val_i64(const amqp_val *v, int64_t *out)
{
    switch (v->code) {
    case 0x51: case 0x54: *out = (int8_t)v->data[0]; return true;   /* byte, smallint */
    case 0x55: *out = (int8_t)v->data[0]; return true;              /* smalllong */
    case 0x61: *out = (int16_t)((uint16_t)v->data[0] << 8 | v->data[1]); return true;
    case 0x71: *out = (int32_t)be32(v->data); return true;
    case 0x81: *out = (int64_t)be64(v->data); return true;
    case 0x43: case 0x44: case 0x50: case 0x52: case 0x53: case 0x60: case 0x70:
        { uint64_t u; amqp_val_u64(v, &u); *out = (int64_t)u; return true; }
    case 0x80:
        if (be64(v->data) > INT64_MAX)
            return false;
        *out = (int64_t)be64(v->data);
        return true;
    default: return false;
    }
}

bool amqp_val_timestamp(const amqp_val *v, int64_t *ms)
{
    if (v->code != 0x83)
        return false;
    *ms = (int64_t)be64(v->data);
    return true;
}

bool amqp_val_bool(const amqp_val *v, bool *out)
{
    switch (v->code) {
    case 0x41: *out = true; return true;
    case 0x42: *out = false; return true;
    case 0x56: *out = v->data[0] != 0; return true;
    default: return false;
    }
}

bool amqp_val_is_null(const amqp_val *v) { return v->code == 0x40; }

bool amqp_val_bytes(const amqp_val *v, const uint8_t **data, size_t *len)
{
    switch (v->code) {
    case 0xa0: case 0xb0: case 0xa1: case 0xb1: case 0xa3: case 0xb3:
        *data = v->data;
        *len = v->size;
        return true;
    default: return false;
    }
}

bool amqp_val_is_string_type(const amqp_val *v) { return v->code == 0xa1 || v->code == 0xb1; }

bool amqp_val_is_symbol(const amqp_val *v, const char *name)
{
    size_t n = strlen(name);
    return (v->code == 0xa3 || v->code == 0xb3) && v->size == n && memcmp(v->data, name, n) == 0;
}

/* ---- writer ---- */

void amqp_buf_free(amqp_buf *b)
{
    ent_free(b->data);
    memset(b, 0, sizeof *b);
}

static uint8_t *grow(amqp_buf *b, size_t n)
{
    if (b->failed)
        return NULL;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *d = ent_realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return NULL;
        }
        b->data = d;
        b->cap = cap;
    }
    uint8_t *at = b->data + b->len;
    b->len += n;
    return at;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_code_be(amqp_buf *b, uint8_t code, uint64_t v, int width)
{
    uint8_t *p = grow(b, 1 + (size_t)width);
    if (!p)
        return;
    p[0] = code;
    for (int i = 0; i < width; i++)
        p[1 + i] = (uint8_t)(v >> (8 * (width - 1 - i)));
}

void amqp_buf_raw(amqp_buf *b, const void *data, size_t len)
{
    if (!len)
        return; /* nothing to add (and NULL + 0 on a buffer not yet grown is undefined) */
    uint8_t *p = grow(b, len);
    if (p)
        memcpy(p, data, len);
}

void amqp_buf_null(amqp_buf *b) { put_code_be(b, 0x40, 0, 0); }
void amqp_buf_bool(amqp_buf *b, bool v) { put_code_be(b, v ? 0x41 : 0x42, 0, 0); }
void amqp_buf_ubyte(amqp_buf *b, uint8_t v) { put_code_be(b, 0x50, v, 1); }
void amqp_buf_uint(amqp_buf *b, uint32_t v) { put_code_be(b, 0x70, v, 4); }
void amqp_buf_ulong(amqp_buf *b, uint64_t v) { put_code_be(b, 0x80, v, 8); }
void amqp_buf_int(amqp_buf *b, int32_t v) { put_code_be(b, 0x71, (uint32_t)v, 4); }
void amqp_buf_long(amqp_buf *b, int64_t v) { put_code_be(b, 0x81, (uint64_t)v, 8); }
void amqp_buf_timestamp(amqp_buf *b, int64_t ms) { put_code_be(b, 0x83, (uint64_t)ms, 8); }

void amqp_buf_uuid(amqp_buf *b, const uint8_t uuid[16])
{
    put_code_be(b, 0x98, 0, 0);
    amqp_buf_raw(b, uuid, 16);
}

static void put_variable(amqp_buf *b, uint8_t code8, uint8_t code32, const void *data, size_t len)
{
    if (len <= 255)
        put_code_be(b, code8, len, 1);
    else
        put_code_be(b, code32, len, 4);
    amqp_buf_raw(b, data, len);
}

void amqp_buf_binary(amqp_buf *b, const void *data, size_t len) { put_variable(b, 0xa0, 0xb0, data, len); }
void amqp_buf_string(amqp_buf *b, const char *s, size_t len) { put_variable(b, 0xa1, 0xb1, s, len); }
void amqp_buf_symbol(amqp_buf *b, const char *s) { put_variable(b, 0xa3, 0xb3, s, strlen(s)); }

/* A code under 256 (every section and performative) is written as a smallulong, 0x00 0x53 CODE,
 * as Service Bus writes it: the Python SDK's pure-Python stack (azure-servicebus >= 7.12, _pyamqp
 * decode_payload) reads a message's sections by those fixed offsets and fails on 0x00 0x80 + 8 bytes. */
void amqp_buf_descriptor(amqp_buf *b, uint64_t code)
{
    put_code_be(b, 0x00, 0, 0);
    if (code < 256)
        put_code_be(b, 0x53, code, 1);
    else
        amqp_buf_ulong(b, code);
}

/* Compounds are always written in their 32-bit form so the size can be patched. */
static size_t compound_begin(amqp_buf *b, uint8_t code)
{
    put_code_be(b, code, 0, 8);
    return b->len;
}

size_t amqp_buf_list_begin(amqp_buf *b) { return compound_begin(b, 0xd0); }
size_t amqp_buf_map_begin(amqp_buf *b) { return compound_begin(b, 0xd1); }

void amqp_buf_compound_end(amqp_buf *b, size_t mark, uint32_t count)
{
    if (b->failed)
        return;
    put_be32(b->data + mark - 8, (uint32_t)(b->len - mark + 4));
    put_be32(b->data + mark - 4, count);
}
