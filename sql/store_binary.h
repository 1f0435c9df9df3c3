/* Binary-format parameters and results for the typed ops of sql/ (store_send.c, store_claim.c,
 * store_mgmt.c, ...): int8 parameters are 8 big-endian bytes, results come back in
 * binary, and every op carries its caller's callback in a user_cb. */
#ifndef STORE_BINARY_H
#define STORE_BINARY_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store.h"
#include "store_statements.h"

typedef struct int8_param {
    unsigned char b[8];
} int8_param;

static inline int8_param be_int8(int64_t v)
{
    int8_param p;
    for (int i = 0; i < 8; i++)
        p.b[i] = (unsigned char)((uint64_t)v >> (56 - 8 * i));
    return p;
}

#define P_INT8(x) ((store_param){(x).b, 8, 1})
#define P_TEXT(s) ((store_param){(s), (s) ? (int)strlen(s) : 0, 0})
#define P_UUID(u) ((store_param){(u), 16, 1})

/* int2, int4 or int8 column, by its length. */
static inline int64_t col_i64(const PGresult *r, int row, int col)
{
    const unsigned char *p = (const unsigned char *)PQgetvalue(r, row, col);
    uint64_t v = 0;
    int len = PQgetlength(r, row, col);
    for (int i = 0; i < len; i++)
        v = v << 8 | p[i];
    if (len == 4)
        return (int32_t)v;
    if (len == 2)
        return (int16_t)v;
    return (int64_t)v;
}

/* A timestamptz column as milliseconds since 1970 (binary: microseconds since
 * 2000), rounded down as sbemu_ms rounds; NULL reads as 0, and PostgreSQL's
 * infinities as the int64 extremes. */
static inline int64_t col_ts_ms(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0;
    int64_t us = col_i64(r, row, col);
    if (us == INT64_MAX || us == INT64_MIN)
        return us;
    int64_t unix_us = us + INT64_C(946684800000000);
    return unix_us / 1000 - (unix_us % 1000 < 0); /* floor, below 1970 too */
}

/* A text column into a fixed buffer, cut to fit; NULL reads as "". */
static inline void col_text(const PGresult *r, int row, int col, char *out, size_t outlen)
{
    size_t n = (size_t)PQgetlength(r, row, col);
    if (n >= outlen)
        n = outlen - 1;
    memcpy(out, PQgetvalue(r, row, col), n);
    out[n] = 0;
}

static inline bool col_bool(const PGresult *r, int row, int col) { return PQgetvalue(r, row, col)[0] != 0; }

static inline const char *col_str_or_null(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

/* The caller's callback and context, owned by the op and freed by its done(). */
typedef struct user_cb {
    void (*fn)(void);
    void *ctx;
} user_cb;

static inline user_cb *user_new(void (*fn)(void), void *ctx)
{
    user_cb *u = ent_malloc(sizeof *u);
    if (u) {
        u->fn = fn;
        u->ctx = ctx;
    }
    return u;
}

/* The done() of an op whose caller wants only its status: calls
 * fn(ctx, st) (fn may be NULL) and frees the user_cb. */
static inline void store_status_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    if (u->fn)
        ((void (*)(void *, sb_status))u->fn)(u->ctx, st);
    ent_free(u);
}

/* A new op owning u, or NULL (u freed): the caller then fails its callback itself. */
static inline store_op *store_op_or_fail(int nstmt, store_parse_fn parse, store_done_fn done, user_cb *u)
{
    store_op *op = u ? store_op_new(nstmt, parse, done, u) : NULL;
    if (!op)
        ent_free(u);
    return op;
}

/* Appends the accessed_at stamp (activity for AutoDeleteOnIdle) as statement i of op. */
static inline int store_touch_stmt(store_op *op, int i, int64_t entity_id, int64_t now_ms)
{
    int8_param q = be_int8(entity_id), now = be_int8(now_ms);
    return store_op_stmt(op, i, STMT_TOUCH, (store_param[]){P_INT8(q), P_INT8(now)}, 2);
}

#endif
