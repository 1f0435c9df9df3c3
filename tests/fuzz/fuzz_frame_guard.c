/* libFuzzer target for the frame guard (amqp_frame_guard.h), the first code
 * that sees a client's bytes. The input is fed whole, and again in pieces cut
 * where its first byte says: the guard keeps state across reads, and a
 * verdict must not depend on how the network split the stream. After a
 * refusal, what comes before the refused frame (all Proton is given) passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_frame_guard.h"
#include "fuzz_check.h"

#define FUZZ_MAX_INPUT 65536
/* The frame size sbemu announces (AMQP_MAX_FRAME). */
#define GUARD_MAX_FRAME 262144

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT)
        return 0;
    size_t step = (size_t)data[0] % 17 + 1;
    data++;
    size--;
    char why[256];
    amqp_frame_guard whole;
    amqp_frame_guard_init(&whole, GUARD_MAX_FRAME);
    int verdict_whole = amqp_frame_guard_feed(&whole, data, size, why, sizeof why);

    amqp_frame_guard pieces;
    amqp_frame_guard_init(&pieces, GUARD_MAX_FRAME);
    int verdict_pieces = 0;
    for (size_t at = 0; at < size && !verdict_pieces; at += step) {
        size_t n = size - at < step ? size - at : step;
        verdict_pieces = amqp_frame_guard_feed(&pieces, data + at, n, why, sizeof why);
    }
    CHECK(verdict_whole == verdict_pieces);
    if (verdict_whole) {
        CHECK(whole.refused_at <= size);
        amqp_frame_guard before;
        amqp_frame_guard_init(&before, GUARD_MAX_FRAME);
        CHECK(amqp_frame_guard_feed(&before, data, whole.refused_at, why, sizeof why) == 0);
    }
    return 0;
}
