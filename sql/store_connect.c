/* Opening the store: a connection made ready (the session settings, LISTEN
 * on the channels, the clock read, every statement of sql/ prepared, pipeline
 * mode), its WAL flusher's (store_flusher.h), then the store over them. Above store.c and the statement files, so
 * that the engine calls no statement file by name. */
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ent_log.h"
#include "store.h"
#include "store_dash.h"
#include "store_faults.h"
#include "store_flusher.h"
#include "store_log.h"
#include "store_setup.h"
#include "store_reset.h"
#include "store_namespace.h"
#include "store_statements.h"
#include "store_story.h"

/* How long a (re)connect may wait for an unreachable server, unless the
 * conninfo says otherwise: libpq's keyword takes seconds, as text. */
#define STORE_CONNECT_TIMEOUT_S "5"

/* PostgreSQL's notices and asynchronous errors (a server shutting down says
 * so before it hangs up) go to our log, not raw to stderr. */
static void notice_to_log(void *arg, const char *message)
{
    (void)arg;
    int n = (int)strcspn(message, "\n");
    LOG_WARN("PostgreSQL: %.*s", n, message);
}

/* A plain connection; what names it in err (NULL for the store's own) and in
 * pg_stat_activity. */
static PGconn *open_conn(const char *conninfo, const char *who, char *err, size_t errlen)
{
    /* Our connect_timeout comes first, so one in the user's conninfo wins: a
     * reconnect to an unreachable host must not wait forever. */
    const char *keys[] = {"connect_timeout", "dbname", who ? "application_name" : NULL, NULL};
    const char *values[] = {STORE_CONNECT_TIMEOUT_S, conninfo, who, NULL};
    PGconn *conn = PQconnectdbParams(keys, values, 1);
    if (PQstatus(conn) != CONNECTION_OK) {
        snprintf(err, errlen, "cannot connect to PostgreSQL%s%s%s: %s", who ? " (" : "", who ? who : "",
                 who ? ")" : "", PQerrorMessage(conn));
        err[strcspn(err, "\n")] = 0;
        PQfinish(conn);
        return NULL;
    }
    PQsetNoticeProcessor(conn, notice_to_log, NULL);
    return conn;
}

PGconn *store_flusher_connect(const char *conninfo, char *err, size_t errlen)
{
    PGconn *conn = open_conn(conninfo, "sbemu flusher", err, errlen);
    if (!conn)
        return NULL;
    /* whatever the server's or the user's default: this connection's commits are the ones that wait */
    PGresult *r = PQexec(conn, "SET synchronous_commit = on");
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        snprintf(err, errlen, "the WAL flusher's settings: %s", PQerrorMessage(conn));
        err[strcspn(err, "\n")] = 0;
        PQfinish(conn);
        return NULL;
    }
    return conn;
}

/* SO_SNDBUFFORCE passes net.core.wmem_max where we may (root, or
 * CAP_NET_ADMIN); otherwise SO_SNDBUF is capped by it. A smaller buffer only
 * costs speed, so neither failing is an error. */
static void widen_send_buffer(PGconn *conn)
{
    int fd = PQsocket(conn), bytes = STORE_SOCKET_SEND_BUFFER_BYTES;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}

PGconn *store_connect(const char *conninfo, int64_t *clock_offset_ms, char *err, size_t errlen)
{
    PGconn *conn = open_conn(conninfo, NULL, err, errlen);
    if (!conn)
        return NULL;
    widen_send_buffer(conn);
    /* The plans test_store_plans checks, and no planning per execution: a
     * custom plan would be re-planned from statistics that may be missing or
     * stale (right after a bulk send), which is what made drains slow. */
    PQclear(PQexec(conn, "SET plan_cache_mode = force_generic_plan"));
    /* No JIT compiling: a generic plan's estimated cost grows with the table
     * (a per-row subplan, a large backlog), and past jit_above_cost
     * PostgreSQL compiled the statement on every execution; the expiry sweep
     * spent 200 ms of this one connection compiling, once a second. */
    PQclear(PQexec(conn, "SET jit = off"));
    /* No sequential scan where an index can answer. A generic plan is made
     * once and kept until the table's statistics change: made while
     * `messages` was empty (a fresh install, or after vacuum truncated a
     * drained table), a scan of nothing cost nothing, and the claims kept
     * scanning the whole table, ready and dead rows alike, until autovacuum
     * next looked (1 KiB peek-lock at 12k msg/s instead of 60k). Every
     * statement here is meant to walk an index (test_store_plans); a
     * statement no index can answer still scans.
     *
     * And no sort where an index gives the order. When the statistics say a
     * table holds nothing (autovacuum or autoanalyze right after a drain:
     * no live row on many pages), every path costs next to nothing, and a
     * sort of the one row the planner expects costs nothing either: a
     * session's claim walked the primary key through every other session's
     * messages and sorted them, instead of walking messages_session, which
     * gives the session's order (ONE_SESSION, store_claim_sql.h). A
     * statement that needs a sort still sorts. */
    PQclear(PQexec(conn, STORE_PLANNER_SETTINGS));
    PQclear(PQexec(conn, "LISTEN " STORE_NOTIFY_CHANNEL));
    PQclear(PQexec(conn, "LISTEN " STORE_CLOCK_CHANNEL));
    PQclear(PQexec(conn, "LISTEN " STORE_ENTITIES_CHANNEL));
    PQclear(PQexec(conn, "LISTEN " STORE_RESET_CHANNEL));
    if (clock_offset_ms)
        store_clock_read(conn, clock_offset_ms);
    err[0] = 0;
    if (store_statements_prepare(conn, err, errlen) || store_mgmt_statements_prepare(conn, err, errlen) ||
        store_admin_statements_prepare(conn, err, errlen) || store_reset_statements_prepare(conn, err, errlen) ||
        store_fault_statements_prepare(conn, err, errlen) || store_dash_statements_prepare(conn, err, errlen) ||
        store_namespace_statements_prepare(conn, err, errlen) || store_log_statements_prepare(conn, err, errlen) ||
        store_story_statements_prepare(conn, err, errlen) ||
        PQsetnonblocking(conn, 1) ||
        !PQenterPipelineMode(conn)) {
        if (!err[0])
            snprintf(err, errlen, "cannot enter pipeline mode: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return NULL;
    }
    return conn;
}

store *store_open(const char *conninfo, const store_hooks *hooks, char *err, size_t errlen)
{
    PGconn *conn = store_connect(conninfo, NULL, err, errlen);
    if (!conn)
        return NULL;
    PGconn *flusher = store_flusher_connect(conninfo, err, errlen);
    if (!flusher) {
        PQfinish(conn);
        return NULL;
    }
    store *s = store_new(conn, flusher, hooks);
    if (!s) {
        PQfinish(conn);
        PQfinish(flusher);
        snprintf(err, errlen, "out of memory");
    }
    return s;
}
