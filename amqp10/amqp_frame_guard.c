/* See amqp_frame_guard.h. Frame layout: AMQP 1.0 part 2 §2.3; performative
 * codes 0x10-0x18 (open .. close), SASL codes 0x40-0x44. */
#include "amqp_frame_guard.h"

#include <stdio.h>
#include <string.h>

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
    g->skip = size - FRAME_HEADER_SIZE;
    g->peek_have = 0;
    uint32_t body = size - (uint32_t)doff * 4;
    g->peek_want = body < AMQP_GUARD_PEEK ? body : AMQP_GUARD_PEEK;
    g->state = g->skip ? G_FRAME_BODY : G_FRAME_HEADER; /* an empty frame is a heartbeat */
    return 0;
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
            for (size_t i = 0; i < take; i++, consumed++)
                if (consumed >= ext && g->peek_have < g->peek_want)
                    g->peek[g->peek_have++] = p[i];
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
