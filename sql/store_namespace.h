/* Namespaces in PostgreSQL (migration 013): the namespaces table, read with
 * the entities (store_load_entities) and made on first use here. Same
 * contract as the other ops of sql/: callbacks run once the transaction is
 * known. */
#ifndef STORE_NAMESPACE_H
#define STORE_NAMESPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_namespace.h"
#include "ent_status.h"
#include "store.h"
#include "store_queue.h"

/* Prepared statement names (SQL in store_namespace.c). */
#define STMT_NAMESPACE_ENSURE "sb_namespace_ensure"
#define STMT_NAMESPACE_PUT "sb_namespace_put"
#define STMT_NAMESPACE_LIST "sb_namespace_list"
#define STMT_NAMESPACE_DELETE "sb_namespace_delete"
#define STMT_NAMESPACE_TOUCH "sb_namespace_touch"
#define STMT_NAMESPACE_SWEEP "sb_namespace_sweep"

/* The namespace of that name (checked with ent_namespace_name_check by the
 * caller), made when there is none: cb with its id. */
typedef void (*store_namespace_cb)(void *ctx, sb_status st, int32_t id);
void store_namespace_ensure(store *s, const char *name, store_namespace_cb cb, void *ctx);

/* Namespaces listed many at once at most (a test suite makes a namespace per run). */
#define STORE_NAMESPACE_LIST_MAX 10000

/* One namespace as the HTTP API shows it. keys_json: its keys as
 * [{"name", "key"}] (the store's until the callback returns). */
typedef struct store_namespace_row {
    int32_t id;
    char name[ENT_NAMESPACE_NAME_SIZE];
    int64_t created_ms;
    int64_t auto_delete_on_idle_ms; /* 0: never */
    int64_t entities;               /* queues, topics and subscriptions */
    const char *keys_json;
} store_namespace_row;
/* Every namespace by id, or the one named name (n = 0: none). */
typedef void (*store_namespace_rows_cb)(void *ctx, sb_status st, const store_namespace_row *rows, size_t n);
void store_namespace_list(store *s, const char *name, store_namespace_rows_cb cb, void *ctx);

/* Makes namespace name (checked by the caller), or replaces its idle time
 * (0: never) and its keys (keys_json: [{"name", "key"}], checked), then
 * answers its row; created says whether this call made it. */
typedef void (*store_namespace_put_cb)(void *ctx, sb_status st, const store_namespace_row *row, bool created);
void store_namespace_put(store *s, const char *name, int64_t idle_ms, const char *keys_json, store_namespace_put_cb cb,
                         void *ctx);

/* Deletes namespace name with everything in it; SB_ERR_NOT_FOUND when there
 * is none (the default namespace is never deleted). */
void store_namespace_delete(store *s, const char *name, store_status_cb cb, void *ctx);

/* Stamps namespace ns active at now_ms (on its clock): a client chose it. */
void store_namespace_touch(store *s, int32_t ns, int64_t now_ms);

/* Deletes the namespaces idle past their AutoDeleteOnIdle at wall_ms (each
 * on its own clock); cb with their names (NULL cb: not told). */
typedef void (*store_namespace_swept_cb)(void *ctx, sb_status st, const char *const *names, size_t n);
void store_namespace_sweep(store *s, int64_t wall_ms, store_namespace_swept_cb cb, void *ctx);

/* Prepares the statements above on a new connection (store_connect.c). */
struct pg_conn;
int store_namespace_statements_prepare(struct pg_conn *conn, char *err, size_t errlen);

#endif
