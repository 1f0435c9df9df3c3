/* The Service Bus rule language: SQL filters, correlation filters, true/false
 * filters and SQL rule actions (service-bus-features.md §4.7).
 *
 * A filter or an action is parsed once, when the rule is created, into a
 * program that is then evaluated against many messages. Evaluation does not
 * allocate: intermediate values live on the stack, strings point into the
 * message, the program or a bounded scratch buffer.
 *
 * Messages are seen through ent_filter_msg, a pair of lookup callbacks, so
 * that the AMQP layer can answer from its own decoded message without copying
 * it. ent_filter_kvmsg (at the end of this header) is a ready-made owning
 * implementation for tests, the CLI and the management paths.
 *
 * Semantics follow the Service Bus documentation: three-valued logic (a
 * missing user property is unknown; a filter matches only when TRUE), C#
 * numeric promotion (int64 op double -> double, int64 / int64 truncates),
 * case-insensitive keywords and property names, case-sensitive string
 * equality. A system property the message does not carry reads as the
 * broker's message getter returns it: NULL for the string ones (an unlabelled
 * message just does not match sys.Label = 'x'), DateTime.MinValue for
 * ScheduledEnqueueTimeUtc, TimeSpan.MaxValue for TimeToLive; reading a
 * broker-owned one the message lacks (SequenceNumber, LockToken, ...) is an
 * evaluation error (Service Bus' FilterException) except under IS [NOT] NULL
 * and EXISTS. Choices where the documentation is silent are recorded next to
 * the code that makes them (filter_eval.c). */
#ifndef ENT_FILTER_H
#define ENT_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "ent_lengths.h"
#include "ent_status.h"

/* ---- limits (Service Bus values, common-limits.md) ---------------------- */

/* Characters in one filter or action expression: ENT_SQL_EXPRESSION_MAX
 * (ent_lengths.h) by default. */
/* SET/REMOVE statements in one rule action. */
#define ENT_FILTER_MAX_ACTION_STATEMENTS 32
/* Nesting of parentheses and operators; keeps parser and evaluator recursion
 * bounded (not a Service Bus limit: 1024 characters cannot nest deeper in
 * any useful way). */
#define ENT_FILTER_MAX_DEPTH 256
/* Bytes of string results (concatenation, number to text, newid()) one
 * evaluation may hold at once. A longer result is an evaluation error. */
#define ENT_FILTER_SCRATCH_BYTES 16384
/* Longest error text, position included. */
#define ENT_FILTER_ERROR_MAX 200
/* Rule names are at most ENT_RULE_NAME_MAX characters (ent_lengths.h). */
#define ENT_FILTER_DEFAULT_RULE_NAME "$Default"

/* The first two limits can be changed at start-up (options room); a zero
 * field keeps the current value. Not thread-safe: call before serving. */
typedef struct ent_filter_limits {
    size_t max_expr_chars;
    size_t max_action_statements;
} ent_filter_limits;

void ent_filter_set_limits(const ent_filter_limits *limits);
ent_filter_limits ent_filter_get_limits(void);

/* ---- values -------------------------------------------------------------- */

typedef enum ent_fv_type {
    ENT_FV_NULL = 0, /* null value, or unknown (missing user property) */
    ENT_FV_BOOL,
    ENT_FV_INT,      /* every AMQP integer type that fits int64 */
    ENT_FV_DOUBLE,   /* float, double, and uint64 above INT64_MAX */
    ENT_FV_STRING,   /* UTF-8, not NUL-terminated, borrowed */
    ENT_FV_TIME,     /* DateTime: milliseconds since 1970-01-01T00:00:00Z */
    ENT_FV_DURATION, /* TimeSpan: milliseconds */
    ENT_FV_UUID      /* Guid, 16 bytes in RFC 4122 (AMQP) byte order */
} ent_fv_type;

/* A value never owns its string: whoever fills one keeps the bytes alive for
 * as long as the value is used (a lookup callback: until evaluation ends). */
typedef struct ent_filter_value {
    ent_fv_type type;
    union {
        int b;
        int64_t i; /* ENT_FV_INT, ENT_FV_TIME, ENT_FV_DURATION */
        double d;
        struct {
            const char *ptr;
            size_t len;
        } s;
        unsigned char uuid[16];
    } u;
} ent_filter_value;

static inline ent_filter_value ent_fv_null(void) { ent_filter_value v = {.type = ENT_FV_NULL}; return v; }
static inline ent_filter_value ent_fv_bool(int b) { ent_filter_value v = {.type = ENT_FV_BOOL, .u.b = !!b}; return v; }
static inline ent_filter_value ent_fv_int(int64_t i) { ent_filter_value v = {.type = ENT_FV_INT, .u.i = i}; return v; }
static inline ent_filter_value ent_fv_double(double d) { ent_filter_value v = {.type = ENT_FV_DOUBLE, .u.d = d}; return v; }
static inline ent_filter_value ent_fv_time(int64_t ms) { ent_filter_value v = {.type = ENT_FV_TIME, .u.i = ms}; return v; }
static inline ent_filter_value ent_fv_duration(int64_t ms) { ent_filter_value v = {.type = ENT_FV_DURATION, .u.i = ms}; return v; }
static inline ent_filter_value ent_fv_string(const char *p, size_t n)
{
    ent_filter_value v = {.type = ENT_FV_STRING};
    v.u.s.ptr = p;
    v.u.s.len = n;
    return v;
}
ent_filter_value ent_fv_cstr(const char *s);
ent_filter_value ent_fv_uuid(const unsigned char bytes[16]);

/* "null", "bool", "int64", "double", "string", "timestamp", "timespan", "guid". */
const char *ent_fv_type_name(ent_fv_type t);

/* Text forms shared by the evaluator (string concatenation) and the CLI.
 * Each writes at most cap bytes including a NUL and returns the length it
 * needed (snprintf style). */
#define ENT_FV_UUID_TEXT_LEN 36 /* xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx */
size_t ent_fv_format_uuid(const unsigned char uuid[16], char *buf, size_t cap);
/* ISO 8601 UTC with milliseconds: 2024-05-01T12:00:00.000Z */
size_t ent_fv_format_time(int64_t ms, char *buf, size_t cap);
/* C# TimeSpan "c" format: [-][d.]hh:mm:ss[.fff] */
size_t ent_fv_format_duration(int64_t ms, char *buf, size_t cap);
/* C# ToString() of a double ("1.5", "1E+20", "NaN", "Infinity"). */
size_t ent_fv_format_double(double d, char *buf, size_t cap);
/* Accept 32 hex digits, hyphens optional in the 8-4-4-4-12 places, optional
 * braces. Return 0 on success. */
int ent_fv_parse_uuid(const char *s, size_t len, unsigned char out[16]);
/* Accept ISO 8601 "YYYY-MM-DDThh:mm:ss[.fff...][Z|+hh:mm|-hh:mm]". */
int ent_fv_parse_time(const char *s, size_t len, int64_t *ms);

/* ---- system properties ----------------------------------------------------- */

/* Service Bus names (BrokeredMessage/ServiceBusMessage), usable as sys.<Name>
 * in any letter case. Subject is an alias of Label. */
typedef enum ent_filter_sys {
    ENT_SYS_MESSAGE_ID = 0,          /* string */
    ENT_SYS_CORRELATION_ID,          /* string */
    ENT_SYS_LABEL,                   /* string; "Subject" too */
    ENT_SYS_TO,                      /* string */
    ENT_SYS_REPLY_TO,                /* string */
    ENT_SYS_REPLY_TO_SESSION_ID,     /* string */
    ENT_SYS_SESSION_ID,              /* string */
    ENT_SYS_CONTENT_TYPE,            /* string */
    ENT_SYS_PARTITION_KEY,           /* string */
    ENT_SYS_VIA_PARTITION_KEY,       /* string */
    ENT_SYS_SCHEDULED_ENQUEUE_TIME_UTC, /* timestamp */
    ENT_SYS_TIME_TO_LIVE,            /* timespan */
    ENT_SYS_SEQUENCE_NUMBER,         /* int64, broker-owned from here on */
    ENT_SYS_ENQUEUED_SEQUENCE_NUMBER,/* int64 */
    ENT_SYS_ENQUEUED_TIME_UTC,       /* timestamp */
    ENT_SYS_EXPIRES_AT_UTC,          /* timestamp */
    ENT_SYS_LOCKED_UNTIL_UTC,        /* timestamp */
    ENT_SYS_DELIVERY_COUNT,          /* int64 */
    ENT_SYS_LOCK_TOKEN,              /* guid */
    ENT_SYS_DEAD_LETTER_SOURCE,      /* string */
    ENT_SYS_SIZE,                    /* int64, bytes */
    ENT_SYS_COUNT
} ent_filter_sys;

/* Canonical name ("MessageId") or NULL. */
const char *ent_filter_sys_name(ent_filter_sys id);
/* Case-insensitive lookup of a name without the "sys." prefix; -1 if unknown. */
int ent_filter_sys_lookup(const char *name, size_t len);
/* The type a system property holds. */
ent_fv_type ent_filter_sys_type(ent_filter_sys id);
/* Non-zero when a rule action may SET or REMOVE it (not broker-owned). */
int ent_filter_sys_settable(ent_filter_sys id);

/* ---- message views --------------------------------------------------------- */

/* Read access to one message. Each callback returns 1 and fills *out when the
 * property is present (a present user property may hold ENT_FV_NULL), 0 when
 * it is absent. get_user must match names case-insensitively (ASCII letters
 * at least); name is not NUL-terminated. Strings placed in *out must stay
 * valid until the evaluation or action that asked returns. */
typedef struct ent_filter_msg_ops {
    int (*get_sys)(const void *self, ent_filter_sys id, ent_filter_value *out);
    int (*get_user)(const void *self, const char *name, size_t len, ent_filter_value *out);
} ent_filter_msg_ops;

typedef struct ent_filter_msg {
    const ent_filter_msg_ops *ops;
    const void *self;
} ent_filter_msg;

/* Write access for rule actions. v == NULL removes (for a system property:
 * unsets). v may point into the message's own storage (SET a = a): copy it
 * before releasing the old value. Return 0 on success, non-zero to fail the
 * action (out of memory, a size limit). */
typedef struct ent_filter_mut_ops {
    ent_filter_msg_ops read;
    int (*set_sys)(void *self, ent_filter_sys id, const ent_filter_value *v);
    int (*set_user)(void *self, const char *name, size_t len, const ent_filter_value *v);
} ent_filter_mut_ops;

typedef struct ent_filter_mut_msg {
    const ent_filter_mut_ops *ops;
    void *self;
} ent_filter_mut_msg;

/* ---- errors ------------------------------------------------------------------ */

typedef enum ent_filter_err_kind {
    ENT_FILTER_ERR_NONE = 0,
    ENT_FILTER_ERR_SYNTAX,  /* rejected at parse: the rule cannot be created */
    ENT_FILTER_ERR_LIMIT,   /* a named limit was exceeded at parse */
    ENT_FILTER_ERR_EVAL,    /* FilterException while evaluating one message */
    ENT_FILTER_ERR_MESSAGE, /* the message refused a change (set_* failed) */
    ENT_FILTER_ERR_NOMEM
} ent_filter_err_kind;

/* message reads like "expected ')' at column 14"; column is 1-based in code
 * points (0 when the error has no position), line is 1 unless the text has
 * newlines. */
typedef struct ent_filter_error {
    ent_filter_err_kind kind;
    int line;
    int column;
    char message[ENT_FILTER_ERROR_MAX];
} ent_filter_error;

/* The status to answer a client with: SB_ERR_INTERNAL when out of memory,
 * SB_ERR_ARGUMENT for everything else (a refused rule, a failed action). */
sb_status ent_filter_error_status(const ent_filter_error *err);

/* ---- filters ------------------------------------------------------------------- */

typedef enum ent_filter_kind {
    ENT_FILTER_KIND_SQL,
    ENT_FILTER_KIND_TRUE,   /* TrueFilter, "1=1" */
    ENT_FILTER_KIND_FALSE,  /* FalseFilter, "1=0" */
    ENT_FILTER_KIND_CORRELATION
} ent_filter_kind;

/* Outcome of one evaluation. Only ENT_FILTER_TRUE selects the message. */
typedef enum ent_filter_result {
    ENT_FILTER_ERROR = -1,
    ENT_FILTER_FALSE = 0,
    ENT_FILTER_TRUE = 1,
    ENT_FILTER_UNKNOWN = 2
} ent_filter_result;

/* A named value: a filter/action @parameter (name with or without the '@',
 * matched case-insensitively) or a correlation-filter user property. */
typedef struct ent_filter_prop {
    const char *name;
    ent_filter_value value;
} ent_filter_prop;

/* Opaque, immutable after creation, owned by the caller (ent_filter_free);
 * evaluate it as many times as needed. Like the rest of entities/, it is
 * meant for the one event-loop thread (newid() keeps generator state). */
typedef struct ent_filter ent_filter;

/* Parse a SQL filter. text need not be NUL-terminated. Parameter values are
 * copied. Returns 0 and sets *out, or -1 with err filled (*out = NULL). */
int ent_filter_parse(const char *text, size_t len, const ent_filter_prop *params, size_t nparams,
                     ent_filter **out, ent_filter_error *err);

/* TrueFilter / FalseFilter. NULL only when out of memory. */
ent_filter *ent_filter_new_true(void);
ent_filter *ent_filter_new_false(void);

/* A correlation filter: every field that is not NULL, and every property,
 * must be present and equal (strings case-sensitive, numbers with promotion).
 * Fields and properties are copied. At least one must be given. */
typedef struct ent_filter_correlation {
    const char *correlation_id;
    const char *message_id;
    const char *to;
    const char *reply_to;
    const char *label; /* Subject */
    const char *session_id;
    const char *reply_to_session_id;
    const char *content_type;
    const ent_filter_prop *properties;
    size_t nproperties;
} ent_filter_correlation;

int ent_filter_new_correlation(const ent_filter_correlation *spec, ent_filter **out, ent_filter_error *err);

void ent_filter_free(ent_filter *f);

ent_filter_kind ent_filter_get_kind(const ent_filter *f);
/* The SQL text as given ("1=1"/"1=0" for true/false), NUL-terminated; NULL
 * for a correlation filter. */
const char *ent_filter_text(const ent_filter *f);
/* The correlation spec as stored (strings owned by f); NULL unless
 * ENT_FILTER_KIND_CORRELATION. */
const ent_filter_correlation *ent_filter_get_correlation(const ent_filter *f);

/* Evaluate against one message. err may be NULL; it is filled only for
 * ENT_FILTER_ERROR. */
ent_filter_result ent_filter_eval(const ent_filter *f, const ent_filter_msg *msg, ent_filter_error *err);

/* ---- rule actions ---------------------------------------------------------------- */

typedef struct ent_filter_action ent_filter_action;

/* Parse "SET a = expr; REMOVE b, SET sys.Label = 'x'". Same contract as
 * ent_filter_parse. An empty text is a syntax error. */
int ent_filter_action_parse(const char *text, size_t len, const ent_filter_prop *params, size_t nparams,
                            ent_filter_action **out, ent_filter_error *err);
void ent_filter_action_free(ent_filter_action *a);
const char *ent_filter_action_text(const ent_filter_action *a);
size_t ent_filter_action_statement_count(const ent_filter_action *a);

/* Run the statements in order; each sees the effects of the ones before.
 * Returns 0, or -1 with err filled: statements before the failing one have
 * been applied (the caller works on its own copy of the message). */
int ent_filter_action_exec(const ent_filter_action *a, const ent_filter_mut_msg *msg, ent_filter_error *err);

/* ---- rules ------------------------------------------------------------------------ */

/* A rule as topics keep it. The rule owns filter and action (may be NULL);
 * name is a copy. */
typedef struct ent_filter_rule {
    char name[ENT_RULE_NAME_SIZE];
    ent_filter *filter;
    ent_filter_action *action;
} ent_filter_rule;

/* The rule every new subscription gets: "$Default", TrueFilter, no action.
 * Returns 0, or -1 when out of memory. */
int ent_filter_rule_init_default(ent_filter_rule *r);
/* Takes ownership of filter and action (even on failure). Returns -1 and
 * fills err when the name is empty or too long. */
int ent_filter_rule_init(ent_filter_rule *r, const char *name, ent_filter *filter, ent_filter_action *action,
                         ent_filter_error *err);
void ent_filter_rule_free(ent_filter_rule *r);

/* ---- an owning message: name/value arrays ------------------------------------------- */

/* Holds copies of everything set into it; insertion order of user properties
 * is kept. Not for the hot path (each set allocates). */
typedef struct ent_filter_kvmsg {
    ent_filter_value sys[ENT_SYS_COUNT];
    unsigned char sys_set[ENT_SYS_COUNT];
    ent_filter_prop *user; /* names and string values are owned */
    size_t nuser;
    size_t cap;
} ent_filter_kvmsg;

void ent_filter_kvmsg_init(ent_filter_kvmsg *m);
void ent_filter_kvmsg_free(ent_filter_kvmsg *m);
/* v == NULL unsets/removes. Returns 0, or -1 when out of memory. */
int ent_filter_kvmsg_set_sys(ent_filter_kvmsg *m, ent_filter_sys id, const ent_filter_value *v);
int ent_filter_kvmsg_set_user(ent_filter_kvmsg *m, const char *name, size_t len, const ent_filter_value *v);
ent_filter_msg ent_filter_kvmsg_view(const ent_filter_kvmsg *m);
ent_filter_mut_msg ent_filter_kvmsg_mut(ent_filter_kvmsg *m);

#endif
