/* See ent_clock.h. The offset only grows, so the clock never goes backwards,
 * except when a reset or a restore sets it (ent_clock_set_offset). */
#include "ent_clock.h"

#include <time.h>

static int64_t clock_offset_ms;

int64_t ent_clock_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ent_clock_now_ms(void) { return ent_clock_wall_ms() + clock_offset_ms; }

int ent_clock_advance(int64_t ms)
{
    if (ms < 0)
        return -1;
    clock_offset_ms += ms;
    return 0;
}

int64_t ent_clock_offset_ms(void) { return clock_offset_ms; }

int ent_clock_set_offset(int64_t ms)
{
    if (ms < 0)
        return -1;
    clock_offset_ms = ms;
    return 0;
}
