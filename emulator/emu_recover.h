/* The way back to PostgreSQL after the store lost its connection.
 *
 * PostgreSQL can go away under a running emulator: the embedded postmaster is
 * killed or runs out of disk, an external server restarts. Meanwhile the
 * store answers every operation with server-busy (which the SDKs retry) and
 * /health says 503; this module brings the connection back so that both
 * recover by themselves.
 *
 * A thread does the blocking part: if the embedded cluster's postmaster is
 * gone it starts it again (emu_pgembed_revive: crash recovery from WAL), then
 * connects and prepares (store_connect). It retries with backoff, doubling
 * from EMU_RECOVER_BACKOFF_MIN_MS to EMU_RECOVER_BACKOFF_MAX_MS and asleep in
 * between, so an emulator waiting for its database uses no CPU. The loop
 * thread starts it when the store reports the loss and polls it on a timer
 * (emu_loop.c); only the loop thread touches the store and writes the log.
 *
 * Ownership: an emu_recover is owned by main.c (static) and outlives the loop.
 * The thread reads the config fields and writes the result fields under mu;
 * at most one thread runs, and emu_recover_stop joins it. */
#ifndef EMU_RECOVER_H
#define EMU_RECOVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu_pgembed.h"

#define EMU_RECOVER_BACKOFF_MIN_MS 100
#define EMU_RECOVER_BACKOFF_MAX_MS 5000
/* How often the loop looks for the thread's connection while it is away. */
#define EMU_RECOVER_POLL_MS 200
#define EMU_RECOVER_CONNINFO_MAX 1024
#define EMU_RECOVER_WHY_MAX 512

struct pg_conn;

typedef struct emu_recover {
    /* config, from emu_recover_init */
    char conninfo[EMU_RECOVER_CONNINFO_MAX];
    emu_pgembed *pg; /* the embedded cluster, NULL with --postgres */
    /* the loop thread's */
    bool running; /* a thread was started and not yet joined */
    pthread_t thread;
    /* shared, under mu */
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the thread's sleep between attempts; signalled to stop */
    bool stop;
    struct pg_conn *conn;    /* the thread's result, until taken */
    struct pg_conn *flusher; /* made with it (store_flusher.h) */
    int64_t clock_offset_ms;
    int attempts;                 /* failed so far, this outage */
    char why[EMU_RECOVER_WHY_MAX]; /* the last failure */
} emu_recover;

void emu_recover_init(emu_recover *r, const char *conninfo, emu_pgembed *pg);
/* Loop thread: starts looking (no-op while a thread runs). 0, or -1 if no
 * thread could be started (then call again later). */
int emu_recover_begin(emu_recover *r);
/* Loop thread: the new connection and its flusher (*flusher) once there are
 * both (the thread has then ended and is joined), else NULL; attempts and the
 * last failure either way. */
struct pg_conn *emu_recover_take(emu_recover *r, struct pg_conn **flusher, int64_t *clock_offset_ms, int *attempts,
                                 char *why, size_t whylen);
/* Stops and joins the thread; a connection it made and nobody took is closed. */
void emu_recover_stop(emu_recover *r);

#endif
