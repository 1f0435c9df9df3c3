/* The emulator's clocks, one per namespace. Every time-based rule (TTL,
 * schedules, locks, idleness) reads the clock of the entity's namespace, and
 * SQL receives its value as a parameter, so moving a namespace's clock
 * (ent_clock_advance_in) makes time pass for that namespace at once, and for
 * no other.
 *
 * A namespace's clock is the system clock plus its offset. Offsets are kept
 * only for namespaces whose clock was moved (a small array sorted by
 * namespace id), so a read is one comparison while no clock has moved and a
 * binary search over the moved ones otherwise: never a hash per message.
 * Namespace 0 reads as the default namespace (ENT_NAMESPACE_DEFAULT_ID). */
#ifndef ENT_CLOCK_H
#define ENT_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds since the Unix epoch on namespace ns's clock. */
int64_t ent_clock_now_ms_in(int32_t ns);
int64_t ent_clock_offset_ms_in(int32_t ns);
/* Moves namespace ns's clock forward by ms (negative values are refused:
 * -1; -1 also when out of memory). */
int ent_clock_advance_in(int32_t ns, int64_t ms);
/* Sets namespace ns's offset to ms (>= 0; else -1): the one way back, taken
 * only when the namespace is reset or a snapshot restored (its clock with
 * it), and when an emulator starts from what the database holds. */
int ent_clock_set_offset_in(int32_t ns, int64_t ms);
/* Forgets every offset (a deleted namespace's too): all clocks real time. */
void ent_clock_reset_all(void);
/* The namespaces whose offset is not 0, in id order: n of them; ids[i] and
 * offsets[i] are valid until the next change (the sweep groups entities by
 * clock with them). */
size_t ent_clock_moved(const int32_t **ids, const int64_t **offsets);

/* The default namespace's clock: ent_clock_*_in(ENT_NAMESPACE_DEFAULT_ID). */
int64_t ent_clock_now_ms(void);
int ent_clock_advance(int64_t ms);
int64_t ent_clock_offset_ms(void);
int ent_clock_set_offset(int64_t ms);

/* The system clock alone: for what must not move with the emulator's clock,
 * such as SAS token expiry (a client signs with its own wall clock). */
int64_t ent_clock_wall_ms(void);

#endif
