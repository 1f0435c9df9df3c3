/* A socket without a network, for fuzz_connection: the few libwebsockets
 * calls amqp10/amqp_conn.c makes on a connection's wsi (write, ask for
 * WRITEABLE, timeouts, timers, its vhost's user) are defined in fake_lws.c,
 * which the linker then takes instead of the shared library's, so the harness
 * can play the binding: hand amqp_conn_bind a fake wsi and call it back for
 * WRITEABLE as lws would. Nothing else of lws may be used in that target.
 *
 * One fake socket per process (the harness runs one connection at a time). */
#ifndef FAKE_LWS_H
#define FAKE_LWS_H

#include <stdbool.h>
#include <stddef.h>

#include "amqp_server.h"

struct lws;

/* The fake wsi, whose vhost's user is ls (amqp_conn finds its server there).
 * Resets the counters below. */
struct lws *fake_lws_open(amqp_server *srv);
/* Whether the connection asked for a WRITEABLE callback since the last call. */
bool fake_lws_take_writable(void);
/* Writes after this many more succeed fail as a broken socket does (-1 from
 * lws_write); SIZE_MAX: never. */
void fake_lws_fail_writes_after(size_t writes);
/* Bytes written to the fake socket since fake_lws_open. */
size_t fake_lws_written(void);
/* Hands every write to sink too (a client reading the server: seedgen); NULL: none. */
void fake_lws_set_sink(void (*sink)(void *ud, const unsigned char *bytes, size_t len), void *ud);

#endif
