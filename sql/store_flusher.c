/* The WAL flusher (store_flusher.h). */
#include "store_flusher.h"

#include <libpq-fe.h>

#include "ent_alloc.h"

/* A commit flushes the WAL only if its transaction took an id AND wrote WAL
 * before its commit record (xact.c, RecordTransactionCommit): a transaction
 * that only takes an id (pg_current_xact_id) commits asynchronously, and
 * tests/faults/run.sh lost acknowledged sends to postmaster kills with it. A
 * transactional logical message does both: it takes an id and writes one
 * small WAL record (no table, no row; any role may call it). One per flush,
 * not per message: a flush covers every commit answered before it went. */
#define FLUSH_QUERY "SELECT pg_logical_emit_message(true, 'sbemu', '')"

/* Owned by its store; owns conn. */
struct store_flusher {
    PGconn *conn;
    int64_t sent; /* tickets of the flushes sent so far */
    int64_t done; /* the highest one that came back */
    bool inflight;
    bool again; /* asked while one was in flight: send the next when it ends */
};

store_flusher *store_flusher_new(PGconn *conn)
{
    store_flusher *f = ent_calloc(1, sizeof *f);
    if (f)
        f->conn = conn;
    return f;
}

void store_flusher_free(store_flusher *f)
{
    if (!f)
        return;
    PQfinish(f->conn);
    ent_free(f);
}

int store_flusher_socket(const store_flusher *f) { return PQsocket(f->conn); }
const char *store_flusher_error(const store_flusher *f) { return PQerrorMessage(f->conn); }

/* The connection blocks on sends (one short query, with the socket empty
 * behind it: it never waits) and reads only what has come
 * (PQconsumeInput never blocks). */
static int send_flush(store_flusher *f)
{
    if (PQsendQuery(f->conn, FLUSH_QUERY) != 1)
        return -1;
    f->sent++;
    f->inflight = true;
    return 0;
}

int64_t store_flusher_ask(store_flusher *f)
{
    if (f->inflight) {
        f->again = true;
        return f->sent + 1;
    }
    return send_flush(f) ? -1 : f->sent;
}

int store_flusher_on_readable(store_flusher *f, int64_t *done)
{
    if (!PQconsumeInput(f->conn))
        return -1;
    int rc = 0;
    while (f->inflight && !PQisBusy(f->conn)) {
        PGresult *r = PQgetResult(f->conn);
        if (r) {
            if (PQresultStatus(r) != PGRES_TUPLES_OK)
                rc = -1; /* not on disk, as far as we know: the store breaks */
            PQclear(r);
            continue;
        }
        f->inflight = false; /* the query's results ended: its commit is on disk */
        if (rc)
            break;
        f->done = f->sent;
        if (f->again) {
            f->again = false;
            if (send_flush(f))
                rc = -1;
        }
    }
    *done = f->done;
    return rc;
}
