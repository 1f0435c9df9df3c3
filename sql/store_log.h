/* A topic stores a plain message once, in its log, with the subscriptions it
 * was routed to (migration 018 says how and why). Each subscription's cursor
 * marks what is no longer its own. Which copies are logged is decided in
 * entities/ent_topic.c (ent_topic_copy_loggable); the publish writes them
 * (STMT_PUBLISH_SET, slot STORE_COPY_LOGGED); these statements take them:
 *   - the claims of a subscription's active subqueue (store_claim.c); a
 *     peek-lock leaves the body in the log (migration 028): the row it
 *     writes has none until its lock goes without a complete;
 *   - STMT_CATCH_UP before any other read of a subscription's messages: the
 *     engine runs it for ops marked with store_op_set_catch_up (store.h);
 *   - STMT_SWEEP_LOG, the sweep's first statement (store_sweep.c). */
#ifndef STORE_LOG_H
#define STORE_LOG_H

#include <libpq-fe.h>
#include <stddef.h>

#define STMT_CLAIM_LOCK_LOG "sb_claim_lock_log"
#define STMT_CLAIM_DELETE_LOG "sb_claim_delete_log"
#define STMT_CATCH_UP "sb_catch_up"
#define STMT_SWEEP_LOG "sb_sweep_log"

int store_log_statements_prepare(PGconn *conn, char *err, size_t errlen);
/* The table itself, for the test that checks the plans. */
struct stmt_def;
const struct stmt_def *store_log_statement_defs(size_t *n);

#endif
