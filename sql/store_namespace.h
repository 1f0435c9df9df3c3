/* Namespaces in PostgreSQL (migration 013): the namespaces table, read with
 * the entities (store_load_entities) and made on first use here. Same
 * contract as the other ops of sql/: callbacks run once the transaction is
 * known. */
#ifndef STORE_NAMESPACE_H
#define STORE_NAMESPACE_H

#include <stdint.h>

#include "ent_namespace.h"
#include "ent_status.h"
#include "store.h"

/* Prepared statement names (SQL in store_namespace.c). */
#define STMT_NAMESPACE_ENSURE "sb_namespace_ensure"

/* The namespace of that name (checked with ent_namespace_name_check by the
 * caller), made when there is none: cb with its id. */
typedef void (*store_namespace_cb)(void *ctx, sb_status st, int32_t id);
void store_namespace_ensure(store *s, const char *name, store_namespace_cb cb, void *ctx);

/* Prepares the statements above on a new connection (store_connect.c). */
struct pg_conn;
int store_namespace_statements_prepare(struct pg_conn *conn, char *err, size_t errlen);

#endif
