/* PostgreSQL before the loop runs: the blocking work of start-up, on plain
 * connections that are not the store's (store.h has the pipelined one).
 *
 *  - the embedded cluster's launcher (emulator/emu_pgembed.c) asks whether
 *    its server answers and makes the emulator's database;
 *  - main.c connects (waiting for a server that starts beside it), migrates,
 *    reads the namespace clock and applies Config.json (store_config.h) on
 *    one connection, then closes it.
 *
 * Connections are `struct pg_conn *` (libpq's PGconn) so that callers need
 * no libpq header: every SQL string stays in sql/. */
#ifndef STORE_SETUP_H
#define STORE_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The channel on which commits announce entities that got messages. */
#define STORE_NOTIFY_CHANNEL "sbemu_messages"
/* The channel that carries the namespace clock's offset (migration 004). */
#define STORE_CLOCK_CHANNEL "sbemu_clock"
/* The channel the entity tables' triggers notify (migration 001). */
#define STORE_ENTITIES_CHANNEL "sbemu_entities"
/* The channel a reset or restore notifies: "<generation> <clock offset ms>" (migration 011). */
#define STORE_RESET_CHANNEL "sbemu_reset"

struct pg_conn;

/* While waiting for PostgreSQL at start, say so every this many tries (one a second). */
#define STORE_SETUP_WAIT_LOG_EVERY 5

/* Whether a server answers at conninfo (it may still refuse the login). */
bool store_server_answers(const char *conninfo);

/* Creates database `name` on the server conninfo reaches unless it exists
 * (another process creating it at the same time is fine). 0; or -1 with the
 * server's reason in err (one line), or STORE_SETUP_NO_CONNECTION with why
 * no connection could be made. */
#define STORE_SETUP_NO_CONNECTION (-2)
int store_ensure_database(const char *conninfo, const char *name, char *err, size_t errlen);

/* Connects, retrying once a second for up to wait_s seconds while *stop stays
 * 0: in Kubernetes or compose the database often starts beside the emulator,
 * and a restart loop would only be slower. NULL with the reason in err. */
struct pg_conn *store_setup_connect(const char *conninfo, int wait_s, const volatile int *stop, char *err,
                                    size_t errlen);

/* Quiets the server's notices to warnings, applies the migrations
 * (store_migrate.h) and reads the namespace clock's offset into
 * *clock_offset_ms (left as it is when there is none to read). 0, or -1 with
 * err set. */
int store_setup_migrate(struct pg_conn *conn, int64_t *clock_offset_ms, char *err, size_t errlen);

/* The namespace clock's offset (sbemu_clock, migration 004): 0 and
 * *offset_ms set, or -1 (left as it is) when it cannot be read. */
int store_clock_read(struct pg_conn *conn, int64_t *offset_ms);

void store_setup_close(struct pg_conn *conn);

#endif
