/* See amqp_frame_guard.h. Frame layout: AMQP 1.0 part 2 §2.3; performative
 * codes 0x10-0x18 (open .. close), SASL codes 0x40-0x44. */
#include "amqp_frame_guard.h"

#include <stdio.h>
#include <string.h>

#include "amqp_codec.h"

enum { G_PROTOCOL_HEADER, G_FRAME_HEADER, G_FRAME_BODY };

#define FRAME_HEADER_SIZE 8

void amqp_frame_guard_init(amqp_frame_guard *g, uint32_t max_frame)
{
    memset(g, 0, sizeof *g);
    g->max_frame = max_frame;
    g->state = G_PROTOCOL_HEADER;
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int fail(char *why, size_t whylen, const char *msg)
{
    snprintf(why, whylen, "%s", msg);
    return -1;
}

static void check_protocol_header(amqp_frame_guard *g)
{
    if (memcmp(g->head, "AMQP", 4)) {
        g->passthrough = true; /* Proton answers a wrong header with its own and closes */
        return;
    }
    switch (g->head[4]) {
    case 0: g->sasl = false; break;
    case 3: g->sasl = true; break;
    default: g->passthrough = true; return; /* TLS upgrade and the like: Proton answers */
    }
    g->state = G_FRAME_HEADER;
}

static int check_frame_header(amqp_frame_guard *g, char *why, size_t whylen)
{
    uint32_t size = be32(g->head);
    uint8_t doff = g->head[4], type = g->head[5];
    if (size < FRAME_HEADER_SIZE || doff < 2 || (uint32_t)doff * 4 > size)
        return fail(why, whylen, "a frame is shorter than its own header");
    if (size > g->max_frame)
        return fail(why, whylen, "a frame is larger than the negotiated max-frame-size");
    if (type != (g->sasl ? 1 : 0))
        return fail(why, whylen, g->sasl ? "a non-SASL frame arrived during SASL" : "a frame has an unknown type");
    g->frame_type = type;
    g->channel = (uint16_t)(g->head[6] << 8 | g->head[7]);
    g->skip = size - FRAME_HEADER_SIZE;
    g->peek_have = 0;
    uint32_t body = size - (uint32_t)doff * 4;
    g->peek_want = body < AMQP_GUARD_PEEK ? body : AMQP_GUARD_PEEK;
    g->state = g->skip ? G_FRAME_BODY : G_FRAME_HEADER; /* an empty frame is a heartbeat */
    return 0;
}

/* ---- transfers: what Proton 0.37 would assert on ---- */

enum { PERF_TRANSFER = 0x14, PERF_DETACH = 0x16, PERF_END = 0x17 };

typedef struct reader {
    const uint8_t *p;
    size_t n, at;
} reader;

/* One field of a performative's list, read with the codec (amqp_codec.h).
 * -1 when it is malformed or does not fit in what was peeked. */
static int next_field(reader *r, amqp_val *v)
{
    const uint8_t *p = r->p + r->at;
    if (amqp_read(&p, r->p + r->n, v))
        return -1;
    r->at = (size_t)(p - r->p);
    return 0;
}

/* A uint field: 1 present, 0 null, -1 another type or cut short. */
static int read_uint(reader *r, uint32_t *out)
{
    amqp_val v;
    uint64_t u;
    if (next_field(r, &v))
        return -1;
    if (amqp_val_is_null(&v))
        return 0;
    if ((v.code != 0x43 && v.code != 0x52 && v.code != 0x70) || !amqp_val_u64(&v, &u))
        return -1;
    *out = (uint32_t)u;
    return 1;
}

/* A boolean field (null reads false); -1 for another type or cut short. */
static int read_bool(reader *r, bool *out)
{
    amqp_val v;
    if (next_field(r, &v))
        return -1;
    if (amqp_val_is_null(&v)) {
        *out = false;
        return 0;
    }
    return amqp_val_bool(&v, out) ? 0 : -1;
}

/* Opens the performative's list; *count is how many fields it has. */
static int open_list(reader *r, uint32_t *count)
{
    if (r->at >= r->n)
        return -1;
    uint8_t c = r->p[r->at];
    if (c == 0x45) {
        *count = 0;
        r->at++;
        return 0;
    }
    if (c == 0xc0 && r->n - r->at >= 3) {
        *count = r->p[r->at + 2];
        r->at += 3;
        return 0;
    }
    if (c == 0xd0 && r->n - r->at >= 9) {
        *count = be32(r->p + r->at + 5);
        r->at += 9;
        return 0;
    }
    return -1;
}

static amqp_guard_link *multi_find(amqp_frame_guard *g, uint32_t handle)
{
    for (size_t i = 0; i < g->nmulti; i++)
        if (g->multi[i].channel == g->channel && g->multi[i].handle == handle)
            return &g->multi[i];
    return NULL;
}

static void multi_drop(amqp_frame_guard *g, amqp_guard_link *l) { *l = g->multi[--g->nmulti]; }

/* Proton starts a new delivery on a transfer unless the link has a
 * multi-frame one under way; a new one with more set must carry its
 * delivery-id. The link's state follows Proton's more_pending: set by more,
 * cleared by a last frame or an abort (and by detach and end). */
static int check_transfer(amqp_frame_guard *g, reader *r, char *why, size_t whylen)
{
    uint32_t count, handle = 0, id;
    bool more = false, aborted = false;
    int has_handle = 0, has_id = 0;
    if (open_list(r, &count))
        return fail(why, whylen, "a transfer's fields cannot be read");
    for (uint32_t i = 0; i < count && i < 10; i++) {
        int rc = i == 0 ? (has_handle = read_uint(r, &handle))
                 : i == 1 ? (has_id = read_uint(r, &id))
                 : i == 5 ? read_bool(r, &more)
                 : i == 9 ? read_bool(r, &aborted)
                          : next_field(r, &(amqp_val){0});
        if (rc < 0)
            return fail(why, whylen, "a transfer's fields cannot be read (or exceed what the guard reads)");
    }
    if (has_handle != 1)
        return fail(why, whylen, "a transfer names no link handle");
    amqp_guard_link *l = multi_find(g, handle);
    if (more && !has_id && !l)
        return fail(why, whylen, "a transfer with more set starts a delivery without a delivery-id");
    if (!more || aborted) {
        if (l)
            multi_drop(g, l);
    } else if (!l) {
        if (g->nmulti == AMQP_GUARD_MULTI_FRAME_MAX)
            return fail(why, whylen, "too many multi-frame deliveries under way at once");
        g->multi[g->nmulti++] = (amqp_guard_link){g->channel, handle};
    }
    return 0;
}

/* A link or a session that ends takes its multi-frame delivery with it. */
static void forget_links(amqp_frame_guard *g, uint64_t code, reader *r)
{
    uint32_t count, handle;
    if (code == PERF_END) {
        for (size_t i = g->nmulti; i-- > 0;)
            if (g->multi[i].channel == g->channel)
                multi_drop(g, &g->multi[i]);
    } else if (!open_list(r, &count) && count && read_uint(r, &handle) == 1) {
        amqp_guard_link *l = multi_find(g, handle);
        if (l)
            multi_drop(g, l);
    }
}

/* The body must open with a described list whose descriptor is a known performative. */
static int check_body_start(amqp_frame_guard *g, char *why, size_t whylen)
{
    const uint8_t *b = g->peek;
    size_t n = g->peek_have;
    uint64_t code;
    size_t at;
    if (n < 3 || b[0] != 0x00)
        return fail(why, whylen, "a frame body is not a described performative");
    if (b[1] == 0x53) {
        code = b[2];
        at = 3;
    } else if (b[1] == 0x80 && n >= 10) {
        code = 0;
        for (int i = 0; i < 8; i++)
            code = code << 8 | b[2 + i];
        at = 10;
    } else if (b[1] == 0xa3) {
        return 0; /* symbolic descriptors are legal; Proton checks the name */
    } else {
        return fail(why, whylen, "a frame body has a malformed descriptor");
    }
    bool known = g->sasl ? (code >= 0x40 && code <= 0x44) : (code >= 0x10 && code <= 0x18);
    if (!known)
        return fail(why, whylen, "a frame carries something that is not an AMQP performative");
    if (at < n && b[at] != 0x45 && b[at] != 0xc0 && b[at] != 0xd0)
        return fail(why, whylen, "a performative is not encoded as a list");
    reader r = {b, n, at};
    if (!g->sasl && code == PERF_TRANSFER)
        return check_transfer(g, &r, why, whylen);
    if (!g->sasl && (code == PERF_DETACH || code == PERF_END))
        forget_links(g, code, &r);
    return 0;
}

int amqp_frame_guard_feed(amqp_frame_guard *g, const uint8_t *p, size_t n, char *why, size_t whylen)
{
    const uint8_t *start = p;
    g->refused_at = 0; /* a frame begun in an earlier buffer: none of this one */
    while (n && !g->passthrough) {
        switch (g->state) {
        case G_PROTOCOL_HEADER:
        case G_FRAME_HEADER: {
            if (!g->head_have)
                g->refused_at = (size_t)(p - start); /* where the next header (and frame) begins */
            size_t take = FRAME_HEADER_SIZE - g->head_have;
            if (take > n)
                take = n;
            memcpy(g->head + g->head_have, p, take);
            g->head_have += take;
            p += take;
            n -= take;
            if (g->head_have < FRAME_HEADER_SIZE)
                return 0;
            g->head_have = 0;
            /* after SASL the client sends a new protocol header where a frame would start */
            if (g->state == G_PROTOCOL_HEADER || (g->sasl && !memcmp(g->head, "AMQP", 4))) {
                check_protocol_header(g);
            } else if (check_frame_header(g, why, whylen)) {
                return -1;
            }
            break;
        }
        case G_FRAME_BODY: {
            /* the extended header (doff > 2) is skipped before the peeked body */
            uint32_t ext = (uint32_t)g->head[4] * 4 - FRAME_HEADER_SIZE;
            uint32_t body_total = be32(g->head) - (uint32_t)g->head[4] * 4;
            uint32_t consumed = be32(g->head) - FRAME_HEADER_SIZE - g->skip;
            size_t take = n < g->skip ? n : g->skip;
            /* of these bytes, those past the extended header while the peek wants more
             * (copied at once: a per-byte walk cost 8 % of the emulator's CPU on sends) */
            size_t from = consumed >= ext ? 0 : ext - consumed;
            if (from < take && g->peek_have < g->peek_want) {
                size_t m = take - from;
                if (m > g->peek_want - g->peek_have)
                    m = g->peek_want - g->peek_have;
                memcpy(g->peek + g->peek_have, p + from, m);
                g->peek_have += m;
            }
            p += take;
            n -= take;
            g->skip -= (uint32_t)take;
            if (g->peek_want && g->peek_have == g->peek_want) {
                g->peek_want = 0; /* checked once per frame */
                if (body_total && check_body_start(g, why, whylen))
                    return -1;
            }
            if (!g->skip)
                g->state = G_FRAME_HEADER;
            break;
        }
        }
    }
    return 0;
}
