/* See ent_clock.h. An offset only grows, so a clock never goes backwards,
 * except when a reset or a restore sets it (ent_clock_set_offset_in). */
#include "ent_clock.h"

#include <string.h>
#include <time.h>

#include "ent_alloc.h"
#include "ent_namespace.h"

/* The namespaces whose clock moved, sorted by id (owned here). */
static int32_t *moved_ids;
static int64_t *moved_offsets;
static size_t nmoved, moved_cap;

int64_t ent_clock_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Where ns is, or would be inserted, in moved_ids. */
static size_t slot_of(int32_t ns, int *found)
{
    size_t lo = 0, hi = nmoved;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (moved_ids[mid] == ns) {
            *found = 1;
            return mid;
        }
        if (moved_ids[mid] < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static int32_t canonical(int32_t ns) { return ns > 0 ? ns : ENT_NAMESPACE_DEFAULT_ID; }

int64_t ent_clock_offset_ms_in(int32_t ns)
{
    if (!nmoved)
        return 0;
    int found;
    size_t i = slot_of(canonical(ns), &found);
    return found ? moved_offsets[i] : 0;
}

int64_t ent_clock_now_ms_in(int32_t ns) { return ent_clock_wall_ms() + ent_clock_offset_ms_in(ns); }

int ent_clock_set_offset_in(int32_t ns, int64_t ms)
{
    if (ms < 0)
        return -1;
    ns = canonical(ns);
    int found;
    size_t i = slot_of(ns, &found);
    if (found && ms) {
        moved_offsets[i] = ms;
    } else if (found) { /* back to real time: no longer moved */
        memmove(moved_ids + i, moved_ids + i + 1, (nmoved - i - 1) * sizeof *moved_ids);
        memmove(moved_offsets + i, moved_offsets + i + 1, (nmoved - i - 1) * sizeof *moved_offsets);
        nmoved--;
    } else if (ms) {
        if (nmoved == moved_cap) {
            size_t cap = moved_cap ? moved_cap * 2 : 4;
            int32_t *ids = ent_realloc(moved_ids, cap * sizeof *ids);
            if (!ids)
                return -1;
            moved_ids = ids;
            int64_t *offs = ent_realloc(moved_offsets, cap * sizeof *offs);
            if (!offs)
                return -1;
            moved_offsets = offs;
            moved_cap = cap;
        }
        memmove(moved_ids + i + 1, moved_ids + i, (nmoved - i) * sizeof *moved_ids);
        memmove(moved_offsets + i + 1, moved_offsets + i, (nmoved - i) * sizeof *moved_offsets);
        moved_ids[i] = ns;
        moved_offsets[i] = ms;
        nmoved++;
    }
    return 0;
}

int ent_clock_advance_in(int32_t ns, int64_t ms)
{
    if (ms < 0)
        return -1;
    return ent_clock_set_offset_in(ns, ent_clock_offset_ms_in(ns) + ms);
}

void ent_clock_reset_all(void) { nmoved = 0; }

size_t ent_clock_moved(const int32_t **ids, const int64_t **offsets)
{
    *ids = moved_ids;
    *offsets = moved_offsets;
    return nmoved;
}

int64_t ent_clock_now_ms(void) { return ent_clock_now_ms_in(ENT_NAMESPACE_DEFAULT_ID); }
int ent_clock_advance(int64_t ms) { return ent_clock_advance_in(ENT_NAMESPACE_DEFAULT_ID, ms); }
int64_t ent_clock_offset_ms(void) { return ent_clock_offset_ms_in(ENT_NAMESPACE_DEFAULT_ID); }
int ent_clock_set_offset(int64_t ms) { return ent_clock_set_offset_in(ENT_NAMESPACE_DEFAULT_ID, ms); }
