/* Faults on demand in PostgreSQL (migration 012, table sbemu_faults): the
 * rules every emulator on the database holds (reloaded on the NOTIFY their
 * trigger sends on the entities' channel, payload STORE_FAULTS_TABLE), the
 * "next N times" count the replicas share, and the lock a lose-lock rule
 * ends. Rules are rare: every statement here runs per rule change or per
 * firing, never per message. The decision is entities/ent_fault.h's. */
#ifndef STORE_FAULTS_H
#define STORE_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_fault.h"
#include "store.h"
#include "store_queue.h"

/* The table, and the payload of its NOTIFY on STORE_ENTITIES_CHANNEL. */
#define STORE_FAULTS_TABLE "sbemu_faults"

/* Every rule, ordered by name, with its shared counts (remaining, fired) and
 * generation. A row that does not read as a rule (written by hand) is left
 * out with a warning. The list belongs to the store until cb returns. */
typedef void (*store_faults_cb)(void *ctx, sb_status st, const ent_fault_rule *rules, size_t n);
void store_faults_load(store *s, store_faults_cb cb, void *ctx);

/* The rule (name, generation) fires once at now_ms, if it still may: not
 * used up, not past its until, not replaced. One statement per firing, which
 * counts it (fired) and takes one of its "next N times" atomically, so that
 * replicas sharing a count fire it exactly N times between them. fired
 * false: it may not (remaining then 0 when it is used up). */
typedef void (*store_fault_fired_cb)(void *ctx, sb_status st, bool fired, int64_t remaining);
void store_fault_fire(store *s, const char *name, int64_t generation, int64_t now_ms, store_fault_fired_cb cb,
                      void *ctx);

/* Creates or replaces (by name, in any case) the rule r (checked already);
 * its counts start again. created: there was none of that name. */
typedef void (*store_fault_put_cb)(void *ctx, sb_status st, bool created);
void store_fault_put(store *s, const ent_fault_rule *r, store_fault_put_cb cb, void *ctx);

/* Removes the rule name (NULL: every rule); removed counts them.
 * SB_ERR_NOT_FOUND when a named rule was not there. */
typedef void (*store_fault_delete_cb)(void *ctx, sb_status st, int64_t removed);
void store_fault_delete(store *s, const char *name, store_fault_delete_cb cb, void *ctx);

/* A lose-lock rule: the n locks (of messages of entity_id just claimed) end
 * at until_ms, as if their lock duration were that short: a settlement after
 * it is lock-lost, and the message may be claimed again. */
void store_fault_lock_end(store *s, int64_t entity_id, const uint8_t (*tokens)[16], size_t n, int64_t until_ms,
                          store_status_cb cb, void *ctx);

/* Config.json's rules, upserted at start on the set-up connection
 * (store_setup.h), each as a PUT would. 0, or -1 with err set. */
struct pg_conn;
int store_faults_config_apply(struct pg_conn *conn, const ent_fault_rule *rules, size_t n, char *err, size_t errlen);

/* Prepares the statements above on a store connection (store_connect.c). */
int store_fault_statements_prepare(struct pg_conn *conn, char *err, size_t errlen);

#endif
