/* The table behind ent_status.h: one row per sb_status. Codes follow the
 * condition-to-status map that the .NET and JS SDKs share (wire-protocol §8). */
#include "ent_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

typedef struct status_row {
    const char *name;
    const char *condition; /* NULL for successes */
    int mgmt_code;
    int http_code;
    int cbs_code; /* $cbs put-token answers: 202 Accepted for a token taken, else the mgmt code */
} status_row;

static const status_row status_table[SB_STATUS_COUNT] = {
    [SB_OK] = {"ok", 0, 200, 200, 202},
    [SB_NO_CONTENT] = {"no-content", 0, 204, 204, 204},
    [SB_CREATED] = {"created", 0, 200, 201, 200},
    [SB_ERR_ARGUMENT] = {"argument-error", "com.microsoft:argument-error", 400, 400, 400},
    [SB_ERR_ARGUMENT_RANGE] = {"argument-out-of-range", "com.microsoft:argument-out-of-range", 400, 400, 400},
    [SB_ERR_NOT_FOUND] = {"not-found", "amqp:not-found", 404, 404, 404},
    [SB_ERR_MESSAGE_NOT_FOUND] = {"message-not-found", "com.microsoft:message-not-found", 404, 404, 404},
    [SB_ERR_ALREADY_EXISTS] = {"already-exists", "com.microsoft:entity-already-exists", 409, 409, 409},
    [SB_ERR_LOCK_LOST] = {"lock-lost", "com.microsoft:message-lock-lost", 410, 410, 410},
    [SB_ERR_SESSION_LOCK_LOST] = {"session-lock-lost", "com.microsoft:session-lock-lost", 410, 410, 410},
    [SB_ERR_SESSION_CANNOT_BE_LOCKED] = {"session-cannot-be-locked", "com.microsoft:session-cannot-be-locked", 410, 410, 410},
    [SB_ERR_UNAUTHORIZED] = {"unauthorized", "amqp:unauthorized-access", 401, 401, 401},
    [SB_ERR_FORBIDDEN] = {"forbidden", "amqp:unauthorized-access", 403, 403, 403},
    [SB_ERR_ENTITY_DISABLED] = {"entity-disabled", "com.microsoft:entity-disabled", 400, 400, 400},
    [SB_ERR_QUOTA_EXCEEDED] = {"quota-exceeded", "amqp:resource-limit-exceeded", 403, 403, 403},
    [SB_ERR_MESSAGE_SIZE_EXCEEDED] = {"message-size-exceeded", "amqp:link:message-size-exceeded", 403, 413, 403},
    [SB_ERR_NOT_ALLOWED] = {"not-allowed", "amqp:not-allowed", 400, 400, 400},
    [SB_ERR_NOT_IMPLEMENTED] = {"not-implemented", "amqp:not-implemented", 501, 501, 501},
    [SB_ERR_TIMEOUT] = {"timeout", "com.microsoft:timeout", 408, 408, 408},
    [SB_ERR_SERVER_BUSY] = {"server-busy", "com.microsoft:server-busy", 503, 503, 503},
    [SB_ERR_METHOD_NOT_ALLOWED] = {"method-not-allowed", "amqp:not-allowed", 405, 405, 405},
    [SB_ERR_INTERNAL] = {"internal-error", "amqp:internal-error", 500, 500, 500},
    [SB_ERR_CONNECTION_FORCED] = {"connection-forced", "amqp:connection:forced", 503, 503, 503},
};

static const status_row *row(sb_status st)
{
    if ((unsigned)st >= SB_STATUS_COUNT)
        st = SB_ERR_INTERNAL;
    return &status_table[st];
}

const char *sb_status_condition(sb_status st) { return row(st)->condition; }
int sb_status_mgmt_code(sb_status st) { return row(st)->mgmt_code; }
int sb_status_http_code(sb_status st) { return row(st)->http_code; }
int sb_status_cbs_code(sb_status st) { return row(st)->cbs_code; }
const char *sb_status_name(sb_status st) { return row(st)->name; }

sb_status sb_status_from_name(const char *name)
{
    for (int st = 0; name && st < SB_STATUS_COUNT; st++) {
        const status_row *r = &status_table[st];
        if (r->condition && (!strcasecmp(r->condition, name) || !strcasecmp(r->name, name)))
            return (sb_status)st;
    }
    return SB_OK;
}

static void write_err(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
}

int ent_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_err(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

sb_status ent_fail_status(sb_status st, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_err(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}
