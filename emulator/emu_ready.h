/* "Emulator Service is Successfully Up!", said only when it is true.
 *
 * Testcontainers (Java) and scripts written for Microsoft's image wait for
 * that log line alone and connect the moment it appears, so it must not come
 * before every listener answers. A probe thread dials each port as a client
 * would: the AMQP port must answer an AMQP header with one; the TLS port must
 * finish a TLS handshake and then answer the header too; the HTTP port must
 * answer GET /health with 200. It retries until all do (or gives up after
 * EMU_READY_TIMEOUT_MS and says which did not). The loop thread polls for the
 * outcome on a timer and prints, so that only the loop thread writes the log.
 *
 * Ownership: emu_ready is owned by its caller (main.c, static) and must
 * outlive the loop; the thread only reads its config and writes its result. */
#ifndef EMU_READY_H
#define EMU_READY_H

#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* How long the probe keeps trying before it reports the listener that did not answer. */
#define EMU_READY_TIMEOUT_MS 30000

typedef struct emu_ready {
    /* in: where to dial */
    char host[64]; /* an address literal; "" when --bind names an interface we cannot dial */
    int amqp_port, amqps_port, http_port;
    /* out, written by the probe thread */
    atomic_int state; /* 0 probing, 1 all answered, -1 gave up */
    atomic_int quit;  /* set by emu_ready_stop: the probe ends at its next try */
    char failure[256];
    /* the loop side */
    pthread_t thread;
    bool started;
    lws_sorted_usec_list_t poll;
    struct lws_context *ctx;
    void (*on_ready)(void *arg); /* called on the loop thread once all answered */
    void *arg;
} emu_ready;

/* bind: the --bind value (NULL: all interfaces). Starts the probe and the
 * loop timer that calls on_ready. Returns 0, or -1 when no thread could start
 * (then on_ready is called at once: better an early line than none). */
int emu_ready_start(emu_ready *r, struct lws_context *ctx, const char *bind, int amqp_port, int amqps_port,
                    int http_port, void (*on_ready)(void *), void *arg);
/* Joins the thread; call before the context is destroyed. */
void emu_ready_stop(emu_ready *r);

#endif
