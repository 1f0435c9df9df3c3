/* A minimal AMQP 1.0 type-system reader and writer over plain byte buffers.
 *
 * Proton's pn_message keeps only one body section and re-encodes everything it
 * touches; sbemu instead stores the bare message exactly as the sender encoded
 * it and, on delivery, rewrites only the header and message-annotations. That
 * needs to find value boundaries in raw bytes (amqp_read) and to emit a few
 * values (amqp_buf_*). Nothing here allocates except amqp_buf growth. */
#ifndef AMQP_CODEC_H
#define AMQP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values nest at most this deep before the reader calls the input malformed. */
#define AMQP_CODEC_MAX_DEPTH 32

/* One decoded value. Spans point into the caller's buffer. */
typedef struct amqp_val {
    const uint8_t *start;   /* first byte, including any descriptor */
    const uint8_t *end;     /* one past the last byte */
    uint8_t code;           /* format code of the value itself (after a descriptor) */
    bool described;
    bool descriptor_is_code; /* descriptor was a ulong (else a symbol or other) */
    uint64_t descriptor;    /* the ulong descriptor, when descriptor_is_code */
    const uint8_t *data;    /* payload: fixed bytes, string bytes, or the first element */
    size_t size;            /* payload size in bytes */
    uint32_t count;         /* element count for lists, maps (keys+values) and arrays */
} amqp_val;

/* Reads one value at *p (not beyond end) and advances *p past it.
 * Returns 0, or -1 if the bytes are not one well-formed AMQP value. */
int amqp_read(const uint8_t **p, const uint8_t *end, amqp_val *v);

/* Typed views of a value; each returns false if the value is not of a fitting type. */
bool amqp_val_u64(const amqp_val *v, uint64_t *out);   /* ubyte..ulong, and non-negative signed */
bool amqp_val_i64(const amqp_val *v, int64_t *out);    /* any integer type */
bool amqp_val_timestamp(const amqp_val *v, int64_t *ms);
bool amqp_val_bool(const amqp_val *v, bool *out);
bool amqp_val_is_null(const amqp_val *v);
/* string, symbol or binary: a span into the buffer (not NUL-terminated). */
bool amqp_val_bytes(const amqp_val *v, const uint8_t **data, size_t *len);
bool amqp_val_is_symbol(const amqp_val *v, const char *name);
bool amqp_val_is_string_type(const amqp_val *v); /* str8/str32 */

/* Growable output buffer. The owner frees it with amqp_buf_free. */
typedef struct amqp_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    bool failed; /* allocation failed; further writes are ignored */
} amqp_buf;

void amqp_buf_free(amqp_buf *b);
void amqp_buf_raw(amqp_buf *b, const void *data, size_t len);
void amqp_buf_null(amqp_buf *b);
void amqp_buf_bool(amqp_buf *b, bool v);
void amqp_buf_ubyte(amqp_buf *b, uint8_t v);
void amqp_buf_uint(amqp_buf *b, uint32_t v);
void amqp_buf_ulong(amqp_buf *b, uint64_t v);
void amqp_buf_int(amqp_buf *b, int32_t v);
void amqp_buf_long(amqp_buf *b, int64_t v);
void amqp_buf_timestamp(amqp_buf *b, int64_t ms);
void amqp_buf_uuid(amqp_buf *b, const uint8_t uuid[16]);
void amqp_buf_binary(amqp_buf *b, const void *data, size_t len);
void amqp_buf_string(amqp_buf *b, const char *s, size_t len);
void amqp_buf_symbol(amqp_buf *b, const char *s);
/* Starts a value described by a ulong code (0x00 0x80 code). */
void amqp_buf_descriptor(amqp_buf *b, uint64_t code);
/* Compound values: begin returns a mark; end patches size and count. */
size_t amqp_buf_list_begin(amqp_buf *b);
size_t amqp_buf_map_begin(amqp_buf *b);
void amqp_buf_compound_end(amqp_buf *b, size_t mark, uint32_t count);

#endif
