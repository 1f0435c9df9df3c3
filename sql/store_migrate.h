/* Versioned schema migrations, compiled into the binary from the files in sql/migrations
 * (sql/embed.cmake). Applied in order at start, each in its own transaction,
 * under an advisory lock so that several replicas starting together do not race. */
#ifndef STORE_MIGRATE_H
#define STORE_MIGRATE_H

#include <stddef.h>
#include <libpq-fe.h>

typedef struct store_migration {
    int version;        /* the NNN of NNN_name.sql */
    const char *name;   /* file name without .sql */
    const char *sql;    /* the whole file */
} store_migration;

/* Terminated by an entry with version 0. */
extern const store_migration store_migrations[];

/* Applies what is missing. Returns 0, or -1 with a message in err. */
int store_migrate(PGconn *conn, char *err, size_t errlen);

#endif
