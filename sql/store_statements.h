/* The prepared statements of the store, by name. Their SQL lives in
 * store_statements.c so that the whole database surface reads in one place. */
#ifndef STORE_STATEMENTS_H
#define STORE_STATEMENTS_H

#include <libpq-fe.h>
#include <stddef.h>

/* The most parameters any statement takes. */
#define STORE_MAX_PARAMS 16

#define STMT_LOOKUP_QUEUE "sb_lookup_queue"
#define STMT_SEND "sb_send"
#define STMT_DLQ_LAPSED "sb_dlq_lapsed"
#define STMT_CLAIM_LOCK "sb_claim_lock"
#define STMT_CLAIM_DELETE "sb_claim_delete"
#define STMT_COMPLETE "sb_complete"
#define STMT_ABANDON "sb_abandon"
#define STMT_DEADLETTER "sb_deadletter"
#define STMT_DEFER "sb_defer"
#define STMT_RELEASE "sb_release"
#define STMT_TOUCH "sb_touch"
#define STMT_SWEEP_EXPIRED "sb_sweep_expired"
#define STMT_SWEEP_LAPSED "sb_sweep_lapsed"
#define STMT_SWEEP_IDLE "sb_sweep_idle"
#define STMT_SWEEP_DUPLICATES "sb_sweep_duplicates"
#define STMT_SWEEP_SCHEDULED "sb_sweep_scheduled"
#define STMT_CLOCK_PUBLISH "sb_clock_publish"

int store_statements_prepare(PGconn *conn, char *err, size_t errlen);
/* The $management operations' statements (store_mgmt_statements.c). */
int store_mgmt_statements_prepare(PGconn *conn, char *err, size_t errlen);

#endif
