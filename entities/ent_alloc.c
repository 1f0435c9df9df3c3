#include "ent_alloc.h"

#include <stdlib.h>
#include <string.h>

/* fail_at is the value of count at which failing starts; 0 = never. */
static long count, fail_at, failed;

/* One branch on the common path: fail_at is 0 unless a test armed it. */
static int should_fail(void)
{
    count++;
    if (fail_at && count >= fail_at) {
        failed++;
        return 1;
    }
    return 0;
}

void *ent_malloc(size_t n) { return should_fail() ? NULL : malloc(n); }

void *ent_calloc(size_t count_, size_t size) { return should_fail() ? NULL : calloc(count_, size); }

void *ent_realloc(void *p, size_t n) { return should_fail() ? NULL : realloc(p, n); }

char *ent_strdup(const char *s) { return should_fail() ? NULL : strdup(s); }

char *ent_strndup(const char *s, size_t n) { return should_fail() ? NULL : strndup(s, n); }

void ent_free(void *p) { free(p); }

void ent_alloc_fail_after(long n) { fail_at = n > 0 ? count + n : 0; }

void ent_alloc_fail_reset(void) { fail_at = 0; }

long ent_alloc_count(void) { return count; }

long ent_alloc_failed(void) { return failed; }
