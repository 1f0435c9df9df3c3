/* A namespace's reset and its snapshots, in PostgreSQL (migration 011 keeps
 * them and says what a restore keeps and drops): save the namespace's state
 * under a name, restore it in one transaction, list and delete snapshots;
 * a reset is the restore of the snapshot STORE_SNAPSHOT_DECLARED, which
 * store_config_apply writes at start from what Config.json declared.
 *
 * Same contract as the other ops of sql/: callbacks run once the transaction
 * is known; rows handed to a callback are the store's until it returns. A
 * restore NOTIFYs STORE_RESET_CHANNEL (store_setup.h) with its generation and
 * clock offset, which store_hooks.on_reset hands to every emulator on the
 * database (this one too). */
#ifndef STORE_RESET_H
#define STORE_RESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_config.h"
#include "ent_snapshot.h"
#include "ent_status.h"
#include "store.h"
#include "store_queue.h"

/* The snapshot a reset restores: what Config.json declared at the last start.
 * No name a user may give (ent_snapshot_name_check) starts with '$'. */
#define STORE_SNAPSHOT_DECLARED "$declared"
/* The default namespace's key in the snapshot tables (the only namespace so far). */
#define STORE_NAMESPACE_DEFAULT ""
/* Snapshots one list answers at most (a namespace keeps a handful). */
#define STORE_SNAPSHOT_LIST_MAX 1000

/* Prepared statement names (SQL in store_reset.c). */
#define STMT_SNAPSHOT_RESTORE "sb_snapshot_restore"
#define STMT_SNAPSHOT_SAVE "sb_snapshot_save"
#define STMT_SNAPSHOT_LIST "sb_snapshot_list"
#define STMT_SNAPSHOT_GET "sb_snapshot_get"
#define STMT_SNAPSHOT_DELETE "sb_snapshot_delete"

/* One snapshot as a list shows it. */
typedef struct store_snapshot_info {
    char name[ENT_SNAPSHOT_NAME_SIZE];
    int64_t created_ms;      /* wall clock */
    int64_t clock_offset_ms; /* the namespace clock's offset it keeps */
    int64_t entities;        /* queues, topics and subscriptions */
    int64_t messages;
    int64_t bytes;           /* message bodies, session states and entity rows */
} store_snapshot_info;

/* What a restore did. generation names it in the NOTIFY every emulator gets
 * (the transaction's id), so the one that asked can tell its own. */
typedef struct store_restored {
    int64_t generation;
    int64_t clock_offset_ms; /* the namespace clock's offset from now on */
    int64_t entities, messages;
} store_restored;

/* Replaces namespace ns's state with snapshot name's (STORE_SNAPSHOT_DECLARED:
 * a reset) at wall_ms (the wall clock, not the emulator's: the clock moves
 * with the restore). SB_ERR_NOT_FOUND, with nothing changed, when there is no
 * such snapshot. */
typedef void (*store_restore_cb)(void *ctx, sb_status st, const store_restored *r);
void store_snapshot_restore(store *s, const char *ns, const char *name, int64_t wall_ms, store_restore_cb cb,
                            void *ctx);

/* Saves (or replaces: *replaced) namespace ns's state as snapshot name, taken
 * at wall_ms. */
typedef void (*store_snapshot_cb)(void *ctx, sb_status st, const store_snapshot_info *info, bool replaced);
void store_snapshot_save(store *s, const char *ns, const char *name, int64_t wall_ms, store_snapshot_cb cb,
                         void *ctx);

/* The snapshots of ns by name (the emulator's own not among them), or one of
 * them (name given; SB_ERR_NOT_FOUND when there is none). */
typedef void (*store_snapshots_cb)(void *ctx, sb_status st, const store_snapshot_info *rows, size_t n);
void store_snapshot_list(store *s, const char *ns, const char *name, store_snapshots_cb cb, void *ctx);

/* Deletes snapshot name of ns; SB_ERR_NOT_FOUND when there is none. */
void store_snapshot_delete(store *s, const char *ns, const char *name, store_status_cb cb, void *ctx);

/* Records what cfg declares as ns's STORE_SNAPSHOT_DECLARED, on a start-up
 * connection inside the transaction that upserted it (store_config.c). 0, or
 * -1 with err set. */
struct pg_conn;
int store_snapshot_declare(struct pg_conn *conn, const char *ns, const ent_config *cfg, int64_t wall_ms, char *err,
                           size_t errlen);

/* Prepares the statements above on a new connection (store_connect.c). */
int store_reset_statements_prepare(struct pg_conn *conn, char *err, size_t errlen);

#endif
