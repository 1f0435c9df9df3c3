#include "ent_alloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Written only by a test; while !watching nothing else is touched, so the
 * common path is one branch and no shared write. fail_at 0 = never. */
static bool watching;
static long count, fail_at, failed, live;

static bool should_fail(void)
{
    if (!watching)
        return false;
    count++;
    if (fail_at && count >= fail_at) {
        failed++;
        return true;
    }
    return false;
}

/* Counts a new block (only while watching). */
static void *born(void *p)
{
    if (watching && p)
        live++;
    return p;
}

void *ent_malloc(size_t n) { return should_fail() ? NULL : born(malloc(n)); }

void *ent_calloc(size_t nmemb, size_t size) { return should_fail() ? NULL : born(calloc(nmemb, size)); }

void *ent_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return p ? realloc(p, n) : born(realloc(NULL, n));
}

char *ent_strdup(const char *s) { return should_fail() ? NULL : born(strdup(s)); }

char *ent_strndup(const char *s, size_t n) { return should_fail() ? NULL : born(strndup(s, n)); }

void ent_free(void *p)
{
    if (watching && p)
        live--;
    free(p);
}

void ent_alloc_fail_after(long n)
{
    watching = true;
    count = failed = live = 0;
    fail_at = n > 0 ? n : 0;
}

void ent_alloc_fail_reset(void)
{
    watching = false;
    fail_at = 0;
}

long ent_alloc_count(void) { return count; }

long ent_alloc_failed(void) { return failed; }

long ent_alloc_live(void) { return live; }
