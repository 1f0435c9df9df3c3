/* The rules of Service Bus transactions (service-bus-transactions.md,
 * common-limits.md): at most 100 operations per transaction, 2 minutes from
 * declare to discharge, and one refused operation dooms the transaction: its
 * discharge cannot commit. Pure functions (test_ent_txn). */
#ifndef ENT_TXN_H
#define ENT_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"

#define ENT_TXN_MAX_OPS 100
#define ENT_TXN_TIMEOUT_MS INT64_C(120000)
/* Transactions one connection may have open at once (a bound on what a client
 * can make the emulator hold; Service Bus names none). */
#define ENT_TXN_MAX_OPEN 100
/* The stored state of a message scheduled in a transaction that has not
 * committed: invisible to everyone (store_txn.h). */
#define ENT_TXN_PENDING_STATE 3

typedef struct ent_txn_state {
    int ops;              /* operations taken so far */
    int64_t declared_ms;  /* wall clock */
    sb_status doomed;     /* SB_OK, or why the transaction can only roll back */
} ent_txn_state;

/* Whether n more operations may join (a batch send is one per message): SB_OK
 * (and they are counted), or the refusal with its description (and the
 * transaction is doomed). */
sb_status ent_txn_admit(ent_txn_state *t, int n, int64_t now_ms, char *err, size_t errlen);

/* Whether a $management operation (its name) can be part of a transaction
 * here: update-disposition and schedule-message, what the SDKs send in one. */
bool ent_txn_operation_joins(const char *operation);

/* What a discharge does: SB_OK to commit (fail false, not doomed, in time),
 * SB_NO_CONTENT to roll back as asked (fail true), or the error of a commit
 * that cannot be (the transaction rolls back), with its description. */
sb_status ent_txn_discharge(const ent_txn_state *t, bool fail, int64_t now_ms, char *err, size_t errlen);

#endif
