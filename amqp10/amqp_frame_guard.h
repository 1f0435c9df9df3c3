/* A check of the client's byte stream in front of Proton. Proton 0.37 closes a
 * connection whose protocol header is wrong, but silently drops a frame it
 * cannot decode, leaving a client that sends garbage after a valid header
 * connected and unanswered. The guard walks the same bytes (protocol headers,
 * then frames: size, data offset, type, channel, and the descriptor that opens
 * each body) and reports the first thing that is not AMQP, so the connection
 * can be closed with amqp:connection:framing-error. It keeps no frame bodies. */
#ifndef AMQP_FRAME_GUARD_H
#define AMQP_FRAME_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a frame body the guard looks at (descriptor and list constructor). */
#define AMQP_GUARD_PEEK 12

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
