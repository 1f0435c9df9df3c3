/* Every heap allocation of sbemu's own code goes through these, so that a
 * test can make the n-th one fail and see that each path fails cleanly (as
 * Mosquitto's memory_mosq.c does). Unused, the hook costs one branch.
 *
 * Ownership is unchanged: what ent_malloc and friends return is freed with
 * ent_free, and nothing else is. Memory a library allocates (PQfreemem,
 * pn_*_free, json_decref, ...) stays with that library's own free.
 *
 * Single-threaded, as the emulator is: the counter and the hook are plain
 * globals. */
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

/* From now on the n-th allocation (1 = the next one) and every later one
 * fails (returns NULL) until ent_alloc_fail_reset. n <= 0 is the same as a
 * reset. A realloc that fails leaves its block untouched, as realloc does. */
void ent_alloc_fail_after(long n);
void ent_alloc_fail_reset(void);
/* Allocations attempted since the start (successful or failed), and the ones
 * made to fail: a test counts a path's allocation points with the first and
 * knows the hook fired with the second. */
long ent_alloc_count(void);
long ent_alloc_failed(void);

#endif
