/* Shared inside the filter language only (filter_*.c); nothing outside
 * entities/ includes this. The public contract is ent_filter.h. */
#ifndef FILTER_INTERNAL_H
#define FILTER_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_filter.h"

/* ---- errors (filter_lexer.c) -------------------------------------------- */

#define FPOS_NONE ((size_t)-1)

/* Fill err with "<reason> at column N" (or "at line L, column N"), the
 * column computed from the byte offset pos in text. err may be NULL. */
void ferr_set(ent_filter_error *err, ent_filter_err_kind kind, const char *text, size_t len, size_t pos,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void ferr_vset(ent_filter_error *err, ent_filter_err_kind kind, const char *text, size_t len, size_t pos,
               const char *fmt, va_list ap);
/* Code points in s[0..len). */
size_t futf8_count(const char *s, size_t len);
/* Decode one code point at s[*i], advancing *i. A malformed byte decodes to
 * itself and advances by one, so every input makes progress. */
uint32_t futf8_next(const char *s, size_t len, size_t *i);

/* ---- tokens (filter_lexer.c) ---------------------------------------------- */

typedef enum ftok_type {
    TK_EOF = 0,
    TK_ERROR,
    TK_IDENT,   /* regular identifier, not a keyword */
    TK_QIDENT,  /* "quoted" identifier */
    TK_DIDENT,  /* [delimited] identifier */
    TK_STRING,  /* 'string' */
    TK_INT,     /* v.u holds the magnitude; big when it is exactly 2^63 */
    TK_DOUBLE,
    TK_PARAM,   /* @name; the span includes the '@' */
    TK_LPAREN, TK_RPAREN, TK_COMMA, TK_SEMI, TK_DOT,
    TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE,
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
    /* reserved keywords */
    TK_AND, TK_OR, TK_NOT, TK_IS, TK_NULL, TK_IN, TK_LIKE, TK_ESCAPE, TK_EXISTS, TK_TRUE, TK_FALSE
} ftok_type;

typedef struct ftoken {
    ftok_type type;
    size_t pos; /* byte offset of the first character */
    size_t len; /* bytes of source text, quotes included */
    union {
        uint64_t u;
        double d;
    } v;
    int big; /* TK_INT equal to 2^63: only valid right after a unary minus */
} ftoken;

typedef struct flexer {
    const char *text;
    size_t len;
    size_t pos;
    ent_filter_error *err; /* NULL while peeking */
} flexer;

void flex_init(flexer *lx, const char *text, size_t len, ent_filter_error *err);
/* Next token; TK_ERROR with err filled on a lexical error. */
ftoken flex_next(flexer *lx);
/* Unescape a TK_STRING/TK_QIDENT/TK_DIDENT (or copy a TK_IDENT/TK_PARAM
 * name) into dst, which has room for tok->len bytes. Returns the length. */
size_t flex_unescape(const flexer *lx, const ftoken *tok, char *dst);
/* "')'", "'foo'", "end of expression": for "unexpected X" messages. */
void flex_describe(const flexer *lx, const ftoken *tok, char *buf, size_t cap);
const char *flex_type_text(ftok_type t);
int fascii_ieq(const char *a, size_t alen, const char *b);

/* ---- programs (filter_parser.c) ------------------------------------------------- */

typedef enum fop {
    N_CONST = 0, N_SYS, N_USER, N_PROP, N_NEWID,
    N_NEG, N_POS, N_NOT, N_AND, N_OR,
    N_EQ, N_NE, N_LT, N_LE, N_GT, N_GE,
    N_ADD, N_SUB, N_MUL, N_DIV, N_MOD,
    N_ISNULL, N_ISNOTNULL, N_IN, N_NOTIN, N_LIKE, N_NOTLIKE, N_EXISTS
} fop;

/* One node. Children are indices into fprog.nodes (-1 = none):
 *   unary ops, IS NULL, EXISTS, N_PROP: a
 *   binary ops: a, b
 *   IN: a = left, b = first item, items chained by next
 *   LIKE: a = left, b = pattern, c = escape or -1
 * N_CONST: val; N_SYS: sys; N_USER: val.u.s is the name (in the pool). */
typedef struct fnode {
    uint8_t op;
    uint8_t sys;
    uint16_t depth; /* height of the subtree, bounded by ENT_FILTER_MAX_DEPTH */
    uint32_t pos;   /* byte offset of the operator or name, for evaluation errors */
    uint32_t start; /* byte offset where the node's text begins */
    int32_t a, b, c, next;
    ent_filter_value val;
} fnode;

/* A parsed expression set. Owns text (NUL-terminated copy), nodes and pool;
 * the pool is sized once so that node strings can point into it. */
typedef struct fprog {
    char *text;
    size_t text_len;
    fnode *nodes;
    int32_t nnodes;
    int32_t cap;
    char *pool;
    size_t pool_len;
    size_t pool_cap;
} fprog;

void fprog_free(fprog *prog);

typedef struct fparser {
    flexer lx;
    ftoken tok; /* current token */
    fprog *prog;
    const ent_filter_prop *params;
    size_t nparams;
    ent_filter_value *param_vals; /* copies, strings in the pool */
    int depth;
    int failed;
    ent_filter_error *err;
} fparser;

/* Check limits, copy the text and the parameters, read the first token.
 * Returns 0, or -1 with err filled. fparse_end must be called either way. */
int fparse_begin(fparser *p, fprog *prog, const char *text, size_t len, const ent_filter_prop *params,
                 size_t nparams, ent_filter_error *err);
void fparse_end(fparser *p);
void fparse_next(fparser *p);
/* The token after the current one (no error reporting). */
ftoken fparse_peek(const fparser *p);
void fparse_error(fparser *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fparse_unexpected(fparser *p, const char *expected);
/* A full expression; node index or -1 (p->failed set). */
int32_t fparse_expr(fparser *p);
/* [sys.|user.]name only; node index (N_SYS or N_USER) or -1. */
int32_t fparse_property(fparser *p);
/* Current token is a regular identifier spelled kw (any case). */
int fparse_is_word(const fparser *p, const char *kw);
/* Non-zero unless node n can never produce a boolean (arithmetic, a number or
 * string constant, newid()). */
int fnode_may_be_bool(const fprog *prog, int32_t n);

/* ---- evaluation (filter_eval.c) ---------------------------------------------------- */

typedef struct feval {
    const fprog *prog;
    const ent_filter_msg_ops *ops;
    const void *self;
    char *scratch;
    size_t used;
    size_t cap;
    ent_filter_error *err;
} feval;

/* Evaluate node n into *out; 0, or -1 with e->err filled. Strings in *out
 * point into the message, the program or e->scratch. */
int feval_node(feval *e, int32_t n, ent_filter_value *out);
/* Reserve n bytes of scratch; NULL (with an error at pos) when full. */
char *feval_alloc(feval *e, size_t n, size_t pos);
/* Render v as text the way C# ToString() would, into scratch. */
int feval_to_text(feval *e, const ent_filter_value *v, size_t pos, ent_filter_value *out);
void feval_error(feval *e, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- values (filter_value.c) --------------------------------------------------------- */

typedef enum fcmp { FCMP_LT = -1, FCMP_EQ = 0, FCMP_GT = 1, FCMP_UNORDERED = 2, FCMP_INCOMPATIBLE = 3 } fcmp;

/* Compare two non-null values with C# promotion (int64 -> double), ordinal
 * strings, guid against guid text. */
fcmp fv_compare(const ent_filter_value *a, const ent_filter_value *b);
/* Equality as '=' sees it; both null counts as equal (correlation filters). */
int fv_equal(const ent_filter_value *a, const ent_filter_value *b);

/* ---- LIKE (filter_like.c) ------------------------------------------------------------ */

/* SQL LIKE with '%' and '_' over code points, case-sensitive. esc is the
 * escape code point or -1. */
int flike_match(const char *s, size_t slen, const char *pat, size_t plen, int32_t esc);

/* ---- filters (filter_correlation.c owns the struct's lifetime) ------------------------ */

struct ent_filter {
    ent_filter_kind kind;
    fprog prog;  /* ENT_FILTER_KIND_SQL */
    int32_t root;
    ent_filter_correlation corr; /* ENT_FILTER_KIND_CORRELATION; strings owned */
    ent_filter_prop *corr_props; /* owned copy behind corr.properties */
};

ent_filter_result fcorr_eval(const ent_filter *f, const ent_filter_msg *msg);
/* Random version-4 guid (newid()). */
void fuuid_new(unsigned char out[16]);

#endif
