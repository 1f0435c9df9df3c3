/* A check of the client's byte stream in front of Proton. Proton 0.37 closes a
 * connection whose protocol header is wrong, but silently drops a frame it
 * cannot decode, leaving a client that sends garbage after a valid header
 * connected and unanswered. The guard walks the same bytes (protocol headers,
 * then frames: size, data offset, type, channel, and the descriptor that opens
 * each body) and reports the first thing that is not AMQP, so the connection
 * can be closed with amqp:connection:framing-error. It keeps no frame bodies.
 *
 * It also keeps Proton 0.37 from aborting the process: a transfer with more
 * set and no delivery-id that does not continue a multi-frame delivery hits
 * an assert in pn_do_transfer. The guard reads each transfer's fields (up to
 * aborted) and knows which links have a multi-frame delivery under way, as
 * Proton does, and refuses such a transfer. */
#ifndef AMQP_FRAME_GUARD_H
#define AMQP_FRAME_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a frame body the guard looks at: the descriptor and the fields of
 * a transfer up to aborted (a delivery tag is at most 32 bytes; a transfer
 * whose fields do not fit is refused). */
#define AMQP_GUARD_PEEK 256
/* Links of one connection with a multi-frame delivery under way at once
 * (clients send one large message per link at a time, on a few links). */
#define AMQP_GUARD_MULTI_FRAME_MAX 64

typedef struct amqp_guard_link {
    uint16_t channel;
    uint32_t handle;
} amqp_guard_link;

typedef struct amqp_frame_guard {
    uint32_t max_frame;     /* larger frames are refused */
    int state;              /* see amqp_frame_guard.c */
    bool sasl;              /* frames are SASL frames (type 1) */
    bool passthrough;       /* TLS or an unknown layout: Proton decides alone */
    uint8_t head[8];        /* protocol header or frame header being read */
    size_t head_have;
    uint32_t skip;          /* bytes of the current frame still to pass */
    uint8_t peek[AMQP_GUARD_PEEK];
    size_t peek_have, peek_want;
    uint8_t frame_type;
    uint16_t channel;
    /* links whose last transfer had more set (and was not aborted) */
    amqp_guard_link multi[AMQP_GUARD_MULTI_FRAME_MAX];
    size_t nmulti;
    /* After a refusal: how many bytes of that feed's buffer came before the
     * refused frame (or header). Only those may reach Proton: 0.37 acts on
     * some frames the guard refuses (a SASL init after the SASL layer leaks
     * its mechanism name each time). */
    size_t refused_at;
} amqp_frame_guard;

void amqp_frame_guard_init(amqp_frame_guard *g, uint32_t max_frame);
/* Returns 0, or -1 with the reason in why once the stream stops being AMQP. */
int amqp_frame_guard_feed(amqp_frame_guard *g, const uint8_t *p, size_t n, char *why, size_t whylen);

#endif
