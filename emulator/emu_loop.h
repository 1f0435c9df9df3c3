/* The one event loop: a libwebsockets context with a vhost per listening port
 * (plain AMQP, AMQP over TLS, HTTP) and an internal vhost that watches the
 * store's PostgreSQL socket. Everything runs on this thread, except the
 * blocking way back to a lost PostgreSQL (emu_recover.h), which it polls. */
#ifndef EMU_LOOP_H
#define EMU_LOOP_H

#include <stdbool.h>
#include <libwebsockets.h>
#include <stddef.h>

#include "amqp_server.h"
#include "broker.h"
#include "emu_listen.h"
#include "emu_options.h"
#include "emu_recover.h"
#include "http_api.h"
#include "store.h"

/* While PostgreSQL is away, say so after the first failed attempt and every this many. */
#define EMU_LOOP_RECOVER_LOG_EVERY 10

typedef struct emu_loop {
    struct lws_context *ctx;
    store *store;
    struct lws *pg_wsi;          /* the adopted dup() of the store's socket; NULL while it is lost */
    struct lws *flush_wsi;       /* the same of its flusher's (store_flusher.h) */
    emu_recover *recover;        /* finds PostgreSQL again after a loss; set before start */
    int64_t lost_at_ms;          /* wall clock when the store lost PostgreSQL */
    int recover_logged;          /* failed attempts last logged, this outage */
    bool flush_scheduled;
    bool in_pg_writeable;        /* inside the PostgreSQL socket's WRITEABLE callback */
    broker *broker;              /* borrowed from main, as the server is */
    http_plane http;             /* the HTTP plane's state, its protocol's user */
    /* lws keeps pointers to these protocol lists: they live as long as the loop */
    struct lws_protocols pg_protocols[2];
} emu_loop;

/* Creates the context and listeners and adopts the store socket. The store's
 * hooks must point at emu_loop_store_hooks(loop). Returns 0, or -1 with err. */
int emu_loop_start(emu_loop *L, const emu_options *o, const char *tls_cert, const char *tls_key, broker *b,
                   amqp_server *srv, store *st, char *err, size_t errlen);
store_hooks emu_loop_store_hooks(emu_loop *L);
/* Serves until *stop becomes true (set from a signal handler, then emu_loop_wake). */
void emu_loop_run(emu_loop *L, volatile int *stop);
/* Serves for at most ms, returning early when done() says so. */
void emu_loop_drain(emu_loop *L, int ms, bool (*done)(void *), void *arg);
void emu_loop_wake(emu_loop *L);
void emu_loop_destroy(emu_loop *L);

#endif
