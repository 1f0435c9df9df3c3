/* See store_setup.h. */
#include "store_setup.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ent_log.h"
#include "ent_status.h"
#include "store_migrate.h"

/* The SQLSTATE of CREATE DATABASE for a database that exists (duplicate_database). */
#define STORE_SQLSTATE_DUPLICATE_DATABASE "42P04"

bool store_server_answers(const char *conninfo) { return PQping(conninfo) == PQPING_OK; }

/* err cut at its first line: the server's messages end in one, or hold a DETAIL. */
static int fail_line(int rc, char *err, size_t errlen, const char *prefix, const char *why)
{
    ent_fail(err, errlen, "%s%s", prefix, why);
    if (err && errlen)
        err[strcspn(err, "\n")] = '\0';
    return rc;
}

int store_ensure_database(const char *conninfo, const char *name, char *err, size_t errlen)
{
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) {
        int rc = fail_line(STORE_SETUP_NO_CONNECTION, err, errlen, "", PQerrorMessage(c));
        PQfinish(c);
        return rc;
    }
    const char *params[] = {name};
    PGresult *r = PQexecParams(c, "SELECT 1 FROM pg_database WHERE datname = $1", 1, NULL, params, NULL, NULL, 0);
    int rc = 0;
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = fail_line(-1, err, errlen, "", PQerrorMessage(c));
    } else if (PQntuples(r) == 0) {
        PQclear(r);
        r = NULL;
        char *ident = PQescapeIdentifier(c, name, strlen(name));
        char sql[256];
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", ident ? ident : "");
        PQfreemem(ident);
        LOG_INFO("postgres: creating database %s", name);
        r = PQexec(c, sql);
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        if (PQresultStatus(r) != PGRES_COMMAND_OK && !(state && !strcmp(state, STORE_SQLSTATE_DUPLICATE_DATABASE))) {
            char prefix[128];
            snprintf(prefix, sizeof prefix, "CREATE DATABASE %s: ", name);
            rc = fail_line(-1, err, errlen, prefix, PQerrorMessage(c));
        }
    }
    PQclear(r);
    PQfinish(c);
    return rc;
}

struct pg_conn *store_setup_connect(const char *conninfo, int wait_s, const volatile int *stop, char *err,
                                    size_t errlen)
{
    time_t until = time(NULL) + wait_s;
    for (int tries = 0;; tries++) {
        PGconn *conn = PQconnectdb(conninfo);
        if (PQstatus(conn) == CONNECTION_OK)
            return conn;
        if (time(NULL) >= until || (stop && *stop)) {
            ent_fail(err, errlen, "cannot connect to PostgreSQL: %s", PQerrorMessage(conn));
            PQfinish(conn);
            return NULL;
        }
        if (tries % STORE_SETUP_WAIT_LOG_EVERY == 0) {
            char why[256];
            snprintf(why, sizeof why, "%s", PQerrorMessage(conn));
            why[strcspn(why, "\n")] = 0;
            LOG_INFO("PostgreSQL is not answering yet (%s); retrying for up to %d s (--postgres-wait)", why, wait_s);
        }
        PQfinish(conn);
        sleep(1);
    }
}

int store_clock_read(struct pg_conn *conn, int64_t *offset_ms)
{
    PGresult *r = PQexec(conn, "SELECT offset_ms FROM sbemu_clock WHERE namespace_id = 1");
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    if (ok)
        *offset_ms = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return ok ? 0 : -1;
}

int store_setup_migrate(struct pg_conn *conn, int64_t *clock_offset_ms, char *err, size_t errlen)
{
    PQclear(PQexec(conn, "SET client_min_messages = warning"));
    if (store_migrate(conn, err, errlen))
        return -1;
    store_clock_read(conn, clock_offset_ms);
    return 0;
}

void store_setup_close(struct pg_conn *conn) { PQfinish(conn); }
