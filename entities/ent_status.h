/* The one status enum of sbemu.
 *
 * Every failure that can reach a client is one of these. ent_status.c holds the
 * single table that maps each to its AMQP error condition, its $management
 * statusCode, its HTTP status and its $cbs status-code, so the surfaces never
 * disagree. */
#ifndef ENT_STATUS_H
#define ENT_STATUS_H

#include <stddef.h>

typedef enum sb_status {
    SB_OK = 0,
    SB_NO_CONTENT,          /* success with nothing to return (peek at the end) */
    SB_CREATED,             /* success that made something (a PUT of the management API: 201) */
    SB_ERR_ARGUMENT,        /* a request or a property value is malformed */
    SB_ERR_ARGUMENT_RANGE,  /* a value is outside its allowed range */
    SB_ERR_NOT_FOUND,       /* the messaging entity does not exist */
    SB_ERR_MESSAGE_NOT_FOUND,
    SB_ERR_ALREADY_EXISTS,
    SB_ERR_LOCK_LOST,       /* lock token unknown, expired or already settled */
    SB_ERR_SESSION_LOCK_LOST,
    SB_ERR_SESSION_CANNOT_BE_LOCKED,
    SB_ERR_UNAUTHORIZED,    /* no valid token for this path, bad signature, expired */
    SB_ERR_FORBIDDEN,       /* the emulator was started to refuse this (the dashboard's read-only mode) */
    SB_ERR_ENTITY_DISABLED,
    SB_ERR_QUOTA_EXCEEDED,
    SB_ERR_MESSAGE_SIZE_EXCEEDED,
    SB_ERR_NOT_ALLOWED,
    SB_ERR_NOT_IMPLEMENTED,
    SB_ERR_TIMEOUT,
    SB_ERR_SERVER_BUSY,
    SB_ERR_METHOD_NOT_ALLOWED, /* an HTTP request with a method the resource does not take */
    SB_ERR_INTERNAL,        /* the store failed; the operation may be retried */
    SB_ERR_CONNECTION_FORCED, /* the connection is closed by the service (shutdown, a fault rule): clients reconnect */
    SB_STATUS_COUNT
} sb_status;

/* AMQP error condition symbol, e.g. "com.microsoft:message-lock-lost". */
const char *sb_status_condition(sb_status st);
/* statusCode for $management and $cbs responses (200, 204, 404, 410, ...). */
int sb_status_mgmt_code(sb_status st);
/* HTTP status for the ATOM management API and /health. */
int sb_status_http_code(sb_status st);
/* status-code of a $cbs put-token answer (202 when the token is taken). */
int sb_status_cbs_code(sb_status st);
/* A short name for logs ("lock-lost"). */
const char *sb_status_name(sb_status st);
/* The error status a name stands for, read through the same table: its AMQP
 * condition ("com.microsoft:server-busy") or its short name ("server-busy"),
 * in any letter case. SB_OK when no error status has that name (successes
 * have no condition and are never found). Where two statuses share a
 * condition (amqp:not-allowed), the first row wins. */
sb_status sb_status_from_name(const char *name);

/* The description Service Bus gives a settlement or renewal whose message
 * lock is gone, whichever way it came (a link's disposition, $management). */
#define SB_TEXT_LOCK_LOST                                                                                              \
    "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue."

/* Writes a refusal's text into err (when err and errlen are given) and
 * answers -1: the shape of every "int f(..., char *err, size_t errlen)" that
 * says why it refused. */
int ent_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same for the functions that answer an sb_status: writes err, answers st. */
sb_status ent_fail_status(sb_status st, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
