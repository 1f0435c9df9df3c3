/* See emu_recover.h. */
#include "emu_recover.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store.h"
#include "store_flusher.h"

void emu_recover_init(emu_recover *r, const char *conninfo, emu_pgembed *pg)
{
    memset(r, 0, sizeof *r);
    snprintf(r->conninfo, sizeof r->conninfo, "%s", conninfo);
    r->pg = pg;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* a wall-clock step must not stretch a backoff */
    pthread_cond_init(&r->wake, &ca);
    pthread_condattr_destroy(&ca);
}

/* Sleeps ms unless told to stop; true if told. Called with mu held. */
static bool sleep_unless_stopped(emu_recover *r, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!r->stop && pthread_cond_timedwait(&r->wake, &r->mu, &until) != ETIMEDOUT) {
    }
    return r->stop;
}

static void *recover_main(void *arg)
{
    emu_recover *r = arg;
    int backoff = EMU_RECOVER_BACKOFF_MIN_MS;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        pthread_mutex_unlock(&r->mu);
        char err[EMU_RECOVER_WHY_MAX] = "";
        int64_t offset = 0;
        struct pg_conn *conn = NULL, *flusher = NULL;
        if (!r->pg || emu_pgembed_revive(r->pg, err, sizeof err) == 0)
            conn = store_connect(r->conninfo, &offset, err, sizeof err);
        if (conn && !(flusher = store_flusher_connect(r->conninfo, err, sizeof err))) {
            store_connection_free(conn);
            conn = NULL;
        }
        pthread_mutex_lock(&r->mu);
        if (conn) {
            r->conn = conn;
            r->flusher = flusher;
            r->clock_offset_ms = offset;
            break;
        }
        r->attempts++;
        snprintf(r->why, sizeof r->why, "%s", err);
        if (sleep_unless_stopped(r, backoff))
            break;
        backoff = backoff * 2 > EMU_RECOVER_BACKOFF_MAX_MS ? EMU_RECOVER_BACKOFF_MAX_MS : backoff * 2;
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int emu_recover_begin(emu_recover *r)
{
    if (r->running)
        return 0;
    pthread_mutex_lock(&r->mu);
    r->stop = false;
    r->conn = r->flusher = NULL;
    r->attempts = 0;
    r->why[0] = 0;
    pthread_mutex_unlock(&r->mu);
    if (pthread_create(&r->thread, NULL, recover_main, r))
        return -1;
    r->running = true;
    return 0;
}

struct pg_conn *emu_recover_take(emu_recover *r, struct pg_conn **flusher, int64_t *clock_offset_ms, int *attempts,
                                 char *why, size_t whylen)
{
    pthread_mutex_lock(&r->mu);
    struct pg_conn *conn = r->conn;
    *flusher = r->flusher;
    r->conn = r->flusher = NULL;
    *clock_offset_ms = r->clock_offset_ms;
    *attempts = r->attempts;
    snprintf(why, whylen, "%s", r->why);
    pthread_mutex_unlock(&r->mu);
    if (conn && r->running) {
        pthread_join(r->thread, NULL); /* it ended when it made the connection */
        r->running = false;
    }
    return conn;
}

void emu_recover_stop(emu_recover *r)
{
    if (r->running) {
        pthread_mutex_lock(&r->mu);
        r->stop = true;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
        r->running = false;
    }
    if (r->conn)
        store_connection_free(r->conn);
    if (r->flusher)
        store_connection_free(r->flusher);
    r->conn = r->flusher = NULL;
}
