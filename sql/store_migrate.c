/* Applies the embedded migrations that the database has not seen yet. */
#include "store_migrate.h"

#include <stdio.h>
#include <stdlib.h>

/* Any constant works; it only has to be the same in every sbemu process. */
#define STORE_MIGRATE_LOCK_KEY 0x5BE3u

static int exec_ok(PGconn *conn, const char *sql, char *err, size_t errlen)
{
    PGresult *r = PQexec(conn, sql);
    ExecStatusType st = PQresultStatus(r);
    int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok)
        snprintf(err, errlen, "%s", PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

static int current_version(PGconn *conn)
{
    PGresult *r = PQexec(conn, "SELECT coalesce(max(version), 0) FROM sbemu_schema_version");
    int v = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return v;
}

int store_migrate(PGconn *conn, char *err, size_t errlen)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT pg_advisory_lock(%u)", STORE_MIGRATE_LOCK_KEY);
    if (exec_ok(conn, sql, err, errlen))
        return -1;
    int rc = exec_ok(conn,
                     "CREATE TABLE IF NOT EXISTS sbemu_schema_version ("
                     " version integer PRIMARY KEY, name text NOT NULL,"
                     " applied_at timestamptz NOT NULL DEFAULT now())",
                     err, errlen);
    int have = rc ? -1 : current_version(conn);
    if (have < 0 && !rc) {
        snprintf(err, errlen, "cannot read sbemu_schema_version");
        rc = -1;
    }
    for (const store_migration *m = store_migrations; !rc && m->version; m++) {
        if (m->version <= have)
            continue;
        if ((rc = exec_ok(conn, "BEGIN", err, errlen)))
            break;
        char emsg[512];
        if (exec_ok(conn, m->sql, emsg, sizeof emsg)) {
            snprintf(err, errlen, "migration %s: %s", m->name, emsg);
            exec_ok(conn, "ROLLBACK", emsg, sizeof emsg);
            rc = -1;
            break;
        }
        const char *params[2];
        char vbuf[16];
        snprintf(vbuf, sizeof vbuf, "%d", m->version);
        params[0] = vbuf;
        params[1] = m->name;
        PGresult *r = PQexecParams(conn, "INSERT INTO sbemu_schema_version (version, name) VALUES ($1, $2)",
                                   2, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            snprintf(err, errlen, "migration %s: %s", m->name, PQresultErrorMessage(r));
            rc = -1;
        }
        PQclear(r);
        rc = rc ? rc : exec_ok(conn, "COMMIT", err, errlen);
    }
    snprintf(sql, sizeof sql, "SELECT pg_advisory_unlock(%u)", STORE_MIGRATE_LOCK_KEY);
    char ignore[64];
    exec_ok(conn, sql, ignore, sizeof ignore);
    return rc;
}
