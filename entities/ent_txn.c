/* Transaction rules (ent_txn.h). */
#include "ent_txn.h"

#include <stdio.h>
#include <string.h>

static bool expired(const ent_txn_state *t, int64_t now_ms) { return now_ms - t->declared_ms > ENT_TXN_TIMEOUT_MS; }

sb_status ent_txn_admit(ent_txn_state *t, int n, int64_t now_ms, char *err, size_t errlen)
{
    if (t->doomed != SB_OK) {
        snprintf(err, errlen, "The transaction was rolled back: an earlier operation in it failed.");
        return t->doomed;
    }
    if (expired(t, now_ms)) {
        snprintf(err, errlen, "The transaction timed out: it may last %lld seconds from declare to discharge.",
                 (long long)(ENT_TXN_TIMEOUT_MS / 1000));
        return t->doomed = SB_ERR_TIMEOUT;
    }
    if (n > ENT_TXN_MAX_OPS - t->ops) {
        snprintf(err, errlen, "Cannot have more than %d operations in a single transaction.", ENT_TXN_MAX_OPS);
        return t->doomed = SB_ERR_QUOTA_EXCEEDED;
    }
    t->ops += n;
    return SB_OK;
}

bool ent_txn_operation_joins(const char *operation)
{
    return !strcmp(operation, "com.microsoft:update-disposition") ||
           !strcmp(operation, "com.microsoft:schedule-message");
}

sb_status ent_txn_discharge(const ent_txn_state *t, bool fail, int64_t now_ms, char *err, size_t errlen)
{
    if (fail)
        return SB_NO_CONTENT;
    if (t->doomed != SB_OK) {
        snprintf(err, errlen, "The transaction cannot commit: an operation in it was refused; it was rolled back.");
        return t->doomed;
    }
    if (expired(t, now_ms)) {
        snprintf(err, errlen, "The transaction timed out before its discharge (%lld seconds); it was rolled back.",
                 (long long)(ENT_TXN_TIMEOUT_MS / 1000));
        return SB_ERR_TIMEOUT;
    }
    return SB_OK;
}
