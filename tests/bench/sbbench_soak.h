/* sbbench_soak: the soak mode's pacing and figures, with no Proton in it.
 *
 * sbbench.c drives the two links (one connection sends at a fixed rate, the
 * other receives in peek-lock and completes); it tells this file when a send
 * went out, when its `accepted` came back and how long each complete took to
 * be settled. This file says how many sends are due by now, keeps every
 * latency of the current interval, and prints one line per interval and a
 * total at the end. Times are nanoseconds on CLOCK_MONOTONIC. */
#ifndef SBBENCH_SOAK_H
#define SBBENCH_SOAK_H

#include <stdbool.h>
#include <stdint.h>

#define SOAK_TICK_MS 5  /* how often the sender is woken to send what is due */

/* rate 0: unthrottled (the sender's window is the only bound). The label
 * starts every printed line. */
void soak_init(const char *label, uint64_t rate, int duration_s, int report_every_s);
/* The monotonic clock, in ns (the session waits of sbbench.c read it too). */
uint64_t soak_now_ns(void);
/* The clock starts: every link is attached. */
void soak_start(uint64_t now_ns);
/* How many sends should have gone out by now, in all (UINT64_MAX: no limit). */
uint64_t soak_due(uint64_t now_ns);
/* A send was accepted; sent_ns is when it was handed to Proton. */
void soak_accepted(uint64_t sent_ns, uint64_t now_ns);
/* A complete is done: confirmed by the broker's settled disposition
 * (complete_ns: when the complete was sent), or, when the broker does not
 * confirm completes (rcv-settle-mode first), counted when sent (complete_ns 0,
 * no latency). */
void soak_completed(uint64_t complete_ns, uint64_t now_ns);
/* Prints the intervals that have ended; true once the duration is over (the
 * last, possibly shorter, interval printed). */
bool soak_tick(uint64_t now_ns);
/* The last line: totals over the whole run, `rate=` the lower of the send and
 * complete rates (what was sustained). */
void soak_print_total(uint64_t now_ns, int window, const char *note);
/* Frees the interval's samples. */
void soak_free(void);

#endif
