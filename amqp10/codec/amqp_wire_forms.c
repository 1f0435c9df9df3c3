/* See amqp_wire_forms.h. */
#include "amqp_wire_forms.h"

#include "ent_duration.h" /* ENT_TICKS_PER_MS, ENT_TICKS_AT_UNIX_EPOCH */

void amqp_lock_token_swap(const uint8_t in[16], uint8_t out[16])
{
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    uint8_t tmp[16];
    for (int i = 0; i < 16; i++)
        tmp[i] = in[order[i]];
    for (int i = 0; i < 16; i++)
        out[i] = tmp[i];
}

uint32_t amqp_header_delivery_count(int32_t delivery_count)
{
    return delivery_count > 0 ? (uint32_t)(delivery_count - 1) : 0;
}

int64_t amqp_ticks_from_unix_ms(int64_t ms) { return ms * ENT_TICKS_PER_MS + ENT_TICKS_AT_UNIX_EPOCH; }
