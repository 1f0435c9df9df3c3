/* The emulator's one clock. Every time-based rule (TTL, schedules, locks,
 * idleness) reads it, and SQL receives its value as a parameter, so moving it
 * (ent_clock_advance) makes time pass for the whole emulator at once. */
#ifndef ENT_CLOCK_H
#define ENT_CLOCK_H

#include <stdint.h>

/* Milliseconds since the Unix epoch: the system clock plus the advanced offset. */
int64_t ent_clock_now_ms(void);
/* Moves the clock forward by ms (negative values are refused; returns -1). */
int ent_clock_advance(int64_t ms);
int64_t ent_clock_offset_ms(void);
/* Sets the offset to ms (>= 0; else -1): the one way back, taken only when
 * the namespace is reset or a snapshot restored (its clock with it). */
int ent_clock_set_offset(int64_t ms);
/* The system clock alone: for what must not move with the emulator's clock,
 * such as SAS token expiry (a client signs with its own wall clock). */
int64_t ent_clock_wall_ms(void);

#endif
