/* Every heap allocation of sbemu's own code goes through these, so that a
 * test can make the n-th one fail and see that each path fails cleanly (as
 * Mosquitto's memory_mosq.c does). Unused, the hook costs one branch.
 *
 * Ownership is unchanged: what ent_malloc and friends return is freed with
 * ent_free, and nothing else is. Memory a library allocates (PQfreemem,
 * pn_*_free, json_decref, ...) stays with that library's own free.
 *
 * Unwatched (the emulator's case) an allocation only reads one flag, so the
 * recovery thread may allocate too; the counters are for single-threaded
 * tests. */
#ifndef ENT_ALLOC_H
#define ENT_ALLOC_H

#include <stddef.h>

void *ent_malloc(size_t n);
void *ent_calloc(size_t count, size_t size);
void *ent_realloc(void *p, size_t n);
char *ent_strdup(const char *s);
char *ent_strndup(const char *s, size_t n);
void ent_free(void *p);

/* ---- test hooks ---------------------------------------------------------- */

/* Starts watching: counts allocations from zero, and from now on the n-th
 * (1 = the next one) and every later one fails (returns NULL) until
 * ent_alloc_fail_reset. n <= 0 only counts, to learn how many allocation
 * points a path has. A realloc that fails leaves its block untouched, as
 * realloc does. */
void ent_alloc_fail_after(long n);
/* Stops watching: nothing fails, nothing is counted. */
void ent_alloc_fail_reset(void);
/* Allocations attempted (successful or failed), and the ones made to fail,
 * since the last ent_alloc_fail_after. */
long ent_alloc_count(void);
long ent_alloc_failed(void);
/* Blocks ent_malloc and friends handed out, less those ent_free took back,
 * since the last ent_alloc_fail_after: 0 after a path and its cleanup means
 * the path leaked nothing of ours (run under ASan for libraries' memory). */
long ent_alloc_live(void);

#endif
