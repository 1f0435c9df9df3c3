/* A real PostgreSQL for the store's unit tests: an embedded cluster
 * (emu_pgembed) in a fresh temp dir, stopped and removed at the end.
 *
 * Tests that use it never skip: a machine that cannot start PostgreSQL fails
 * the test with the reason, because a store test that silently skips in CI
 * tests nothing. Header-only (static inline) so that each test_*.c, which is
 * its own executable, takes it without a library of test helpers. */
#ifndef STORE_FIXTURE_H
#define STORE_FIXTURE_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libpq-fe.h>

#include "emu_pgembed.h"
#include "store_migrate.h"

/* "/tmp/sbemu-<tag>-XXXXXX": short, so the socket path fits in sun_path. */
#define STORE_FIXTURE_DIR_MAX 64
#define STORE_FIXTURE_CONNINFO_MAX 8192
/* Open file descriptors nftw may use while removing the temp dir. */
#define STORE_FIXTURE_NFTW_FDS 16

/* Owned by the test's group setup; zeroed means nothing to stop. */
typedef struct store_fixture {
    emu_pgembed pg;
    char dir[STORE_FIXTURE_DIR_MAX]; /* "" until mkdtemp succeeded */
    char conninfo[STORE_FIXTURE_CONNINFO_MAX];
} store_fixture;

static inline int store_fixture_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Stops the cluster and removes its dir. Safe on a zeroed or half-started
 * fixture and safe twice, so group teardown can call it whatever happened. */
static inline void store_fixture_stop(store_fixture *f)
{
    emu_pgembed_stop(&f->pg);
    if (f->dir[0])
        nftw(f->dir, store_fixture_rm_entry, STORE_FIXTURE_NFTW_FDS, FTW_DEPTH | FTW_PHYS);
    f->dir[0] = '\0';
}

/* Starts a cluster for this test; 0 with f->conninfo set, or -1 with the
 * reason in err (and nothing left behind). */
static inline int store_fixture_start(store_fixture *f, const char *tag, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sbemu-%s-XXXXXX", tag);
    if (!mkdtemp(f->dir)) {
        snprintf(err, errlen, "mkdtemp %s: %s", f->dir, strerror(errno));
        f->dir[0] = '\0';
        return -1;
    }
    /* mkdtemp makes it 0700; run as root, the cluster runs as postgres, which
     * must be able to pass through. */
    if (chmod(f->dir, 0755)) {
        snprintf(err, errlen, "chmod %s: %s", f->dir, strerror(errno));
        store_fixture_stop(f);
        return -1;
    }
    if (emu_pgembed_start(&f->pg, f->dir, f->conninfo, sizeof f->conninfo, err, errlen)) {
        store_fixture_stop(f);
        return -1;
    }
    return 0;
}

/* Starts a cluster, connects to it and creates the schema: the connection,
 * or NULL with the reason in err (the cluster stopped again). */
static inline PGconn *store_fixture_open(store_fixture *f, const char *tag, char *err, size_t errlen)
{
    if (store_fixture_start(f, tag, err, errlen))
        return NULL;
    PGconn *c = PQconnectdb(f->conninfo);
    if (PQstatus(c) != CONNECTION_OK) {
        snprintf(err, errlen, "%s", PQerrorMessage(c));
    } else if (!store_migrate(c, err, errlen)) {
        return c;
    }
    PQfinish(c);
    store_fixture_stop(f);
    return NULL;
}

/* Closes what store_fixture_open opened (*c may be NULL). */
static inline void store_fixture_close(store_fixture *f, PGconn **c)
{
    PQfinish(*c);
    *c = NULL;
    store_fixture_stop(f);
}

#endif
