/* Recursive-descent parser for SQL filter expressions, into a node array.
 *
 * Precedence, lowest first: OR, AND, NOT, the predicates (comparison, IS
 * [NOT] NULL, [NOT] IN, [NOT] LIKE), + -, * / %, unary + -. Comparisons do
 * not chain ("a = b = c" is an error), as in SQL-92. Parameters and
 * property('constant') are resolved here, so evaluation never looks a name
 * up twice. filter_action.c reuses fparse_expr/fparse_property.
 *
 * Wider than the documented grammar, on purpose: IS [NOT] NULL takes any
 * expression, not only a property (a missing system property is still only
 * tolerated when it is the operand itself), and any boolean-valued operand
 * may stand as a predicate ("flag AND TRUE"). Constants that can never be a
 * boolean (5, 'x', a + 1) are refused where a predicate is required, and
 * non-string LIKE patterns or escapes are refused when they are constants. */
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "filter_internal.h"

/* First node array size; it doubles as needed. */
#define NODES_INITIAL 16
/* Longest identifier quoted back in an error message. */
#define NAME_IN_ERROR_MAX 64

static ent_filter_limits limits = {ENT_SQL_EXPRESSION_MAX, ENT_FILTER_MAX_ACTION_STATEMENTS};

void ent_filter_set_limits(const ent_filter_limits *l)
{
    if (l->max_expr_chars)
        limits.max_expr_chars = l->max_expr_chars;
    if (l->max_action_statements)
        limits.max_action_statements = l->max_action_statements;
}

ent_filter_limits ent_filter_get_limits(void) { return limits; }

/* ---- errors and tokens ------------------------------------------------------ */

static void parse_verror(fparser *p, ent_filter_err_kind kind, size_t pos, const char *fmt, va_list ap)
{
    if (p->failed)
        return; /* keep the first error: later ones are consequences */
    p->failed = 1;
    ferr_vset(p->err, kind, p->prog->text, p->prog->text_len, pos, fmt, ap);
}

void fparse_error(fparser *p, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    parse_verror(p, ENT_FILTER_ERR_SYNTAX, pos, fmt, ap);
    va_end(ap);
}

static void parse_oom(fparser *p)
{
    if (p->failed)
        return;
    p->failed = 1;
    ferr_set(p->err, ENT_FILTER_ERR_NOMEM, NULL, 0, FPOS_NONE, "out of memory");
}

void fparse_unexpected(fparser *p, const char *expected)
{
    char found[NAME_IN_ERROR_MAX];
    if (p->tok.type == TK_ERROR) {
        p->failed = 1; /* the lexer has reported */
        return;
    }
    flex_describe(&p->lx, &p->tok, found, sizeof found);
    if (!expected)
        fparse_error(p, p->tok.pos, "unexpected %s", found);
    else if (p->tok.type == TK_EOF)
        fparse_error(p, p->tok.pos, "expected %s", expected);
    else
        fparse_error(p, p->tok.pos, "expected %s, found %s", expected, found);
}

void fparse_next(fparser *p)
{
    if (p->tok.type == TK_ERROR)
        return;
    p->tok = flex_next(&p->lx);
    if (p->tok.type == TK_ERROR)
        p->failed = 1;
}

ftoken fparse_peek(const fparser *p)
{
    flexer copy = p->lx;
    copy.err = NULL;
    return flex_next(&copy);
}

static int expect(fparser *p, ftok_type t)
{
    if (p->tok.type != t) {
        fparse_unexpected(p, flex_type_text(t));
        return -1;
    }
    fparse_next(p);
    return 0;
}

int fparse_is_word(const fparser *p, const char *kw)
{
    return p->tok.type == TK_IDENT && fascii_ieq(p->lx.text + p->tok.pos, p->tok.len, kw);
}

/* ---- setup ------------------------------------------------------------------- */

int fparse_begin(fparser *p, fprog *prog, const char *text, size_t len, const ent_filter_prop *params,
                 size_t nparams, ent_filter_error *err)
{
    memset(p, 0, sizeof *p);
    memset(prog, 0, sizeof *prog);
    p->prog = prog;
    p->err = err;
    p->params = params;
    p->nparams = nparams;
    if (err)
        memset(err, 0, sizeof *err);
    if (!text && len) {
        fparse_error(p, FPOS_NONE, "no expression text");
        return -1;
    }

    size_t chars = text ? futf8_count(text, len) : 0;
    if (chars > limits.max_expr_chars) {
        p->failed = 1;
        ferr_set(err, ENT_FILTER_ERR_LIMIT, NULL, 0, FPOS_NONE,
                 "expression is %zu characters long; the limit is %zu", chars, limits.max_expr_chars);
        return -1;
    }

    size_t pool_cap = len + 1;
    for (size_t i = 0; i < nparams; i++) {
        if (!params[i].name || !params[i].name[0] || (params[i].name[0] == '@' && !params[i].name[1])) {
            fparse_error(p, FPOS_NONE, "parameter %zu has no name", i + 1);
            return -1;
        }
        if (params[i].value.type == ENT_FV_STRING)
            pool_cap += params[i].value.u.s.len;
    }
    prog->text = ent_malloc(len + 1);
    prog->pool = ent_malloc(pool_cap);
    prog->nodes = ent_malloc(NODES_INITIAL * sizeof *prog->nodes);
    p->param_vals = nparams ? ent_calloc(nparams, sizeof *p->param_vals) : NULL;
    if (!prog->text || !prog->pool || !prog->nodes || (nparams && !p->param_vals)) {
        parse_oom(p);
        return -1;
    }
    if (len)
        memcpy(prog->text, text, len);
    prog->text[len] = 0;
    prog->text_len = len;
    prog->pool_cap = pool_cap;
    prog->cap = NODES_INITIAL;

    for (size_t i = 0; i < nparams; i++) {
        ent_filter_value v = params[i].value;
        if (v.type == ENT_FV_STRING) {
            char *dst = prog->pool + prog->pool_len;
            if (v.u.s.len)
                memcpy(dst, v.u.s.ptr, v.u.s.len);
            prog->pool_len += v.u.s.len;
            v.u.s.ptr = dst;
        }
        p->param_vals[i] = v;
    }

    flex_init(&p->lx, prog->text, len, err);
    p->tok = flex_next(&p->lx);
    if (p->tok.type == TK_ERROR)
        p->failed = 1;
    return p->failed ? -1 : 0;
}

void fparse_end(fparser *p)
{
    ent_free(p->param_vals);
    p->param_vals = NULL;
    if (!p->failed && p->prog->nnodes > 0 && p->prog->nnodes < p->prog->cap) {
        fnode *shrunk = ent_realloc(p->prog->nodes, (size_t)p->prog->nnodes * sizeof *shrunk);
        if (shrunk) {
            p->prog->nodes = shrunk;
            p->prog->cap = p->prog->nnodes;
        }
    }
}

/* ---- nodes ------------------------------------------------------------------- */

static fnode *node(fparser *p, int32_t n) { return &p->prog->nodes[n]; }

static int32_t new_node(fparser *p, fop op, size_t pos, size_t start)
{
    fprog *g = p->prog;
    if (p->failed)
        return -1;
    if (g->nnodes == g->cap) {
        fnode *grown = ent_realloc(g->nodes, (size_t)g->cap * 2 * sizeof *grown);
        if (!grown) {
            parse_oom(p);
            return -1;
        }
        g->nodes = grown;
        g->cap *= 2;
    }
    int32_t n = g->nnodes++;
    fnode *x = &g->nodes[n];
    memset(x, 0, sizeof *x);
    x->op = (uint8_t)op;
    x->depth = 1;
    x->pos = (uint32_t)pos;
    x->start = (uint32_t)start;
    x->a = x->b = x->c = x->next = -1;
    return n;
}

/* Link children and keep the tree height bounded, since evaluation recurses. */
static int32_t with_children(fparser *p, int32_t n, int32_t a, int32_t b, int32_t c)
{
    if (n < 0)
        return -1;
    int32_t kids[3] = {a, b, c};
    unsigned depth = 0;
    for (int k = 0; k < 3; k++)
        if (kids[k] >= 0 && node(p, kids[k])->depth > depth)
            depth = node(p, kids[k])->depth;
    if (depth + 1 > ENT_FILTER_MAX_DEPTH) {
        fparse_error(p, node(p, n)->pos, "expression is nested more than %d levels deep", ENT_FILTER_MAX_DEPTH);
        return -1;
    }
    fnode *x = node(p, n);
    x->a = a;
    x->b = b;
    x->c = c;
    x->depth = (uint16_t)(depth + 1);
    return n;
}

static int32_t const_node(fparser *p, ent_filter_value v, size_t pos)
{
    int32_t n = new_node(p, N_CONST, pos, pos);
    if (n >= 0)
        node(p, n)->val = v;
    return n;
}

/* Copy the current token's unescaped text into the pool. */
static ent_filter_value pool_token(fparser *p)
{
    fprog *g = p->prog;
    char *dst = g->pool + g->pool_len;
    size_t n = flex_unescape(&p->lx, &p->tok, dst);
    g->pool_len += n;
    return ent_fv_string(dst, n);
}

int fnode_may_be_bool(const fprog *prog, int32_t n)
{
    const fnode *x = &prog->nodes[n];
    switch (x->op) {
    case N_CONST: return x->val.type == ENT_FV_BOOL || x->val.type == ENT_FV_NULL;
    case N_NEWID: case N_NEG: case N_POS: case N_ADD: case N_SUB: case N_MUL: case N_DIV: case N_MOD: return 0;
    default: return 1;
    }
}

static int need_bool(fparser *p, int32_t n)
{
    if (n < 0)
        return -1;
    if (!fnode_may_be_bool(p->prog, n)) {
        fparse_error(p, node(p, n)->start, "expected a boolean expression");
        return -1;
    }
    return 0;
}

static int enter(fparser *p)
{
    if (++p->depth > ENT_FILTER_MAX_DEPTH) {
        fparse_error(p, p->tok.pos, "expression is nested more than %d levels deep", ENT_FILTER_MAX_DEPTH);
        return -1;
    }
    return 0;
}

/* ---- properties and functions ------------------------------------------------- */

/* A name split from a constant: "sys.X" -> system, "user.X" or "X" -> user. */
static int32_t property_node(fparser *p, int is_sys, const char *name, size_t len, size_t pos)
{
    if (is_sys) {
        int id = ent_filter_sys_lookup(name, len);
        if (id < 0) {
            fparse_error(p, pos, "unknown system property 'sys.%.*s'", (int)(len > NAME_IN_ERROR_MAX ? NAME_IN_ERROR_MAX : len),
                         name);
            return -1;
        }
        int32_t n = new_node(p, N_SYS, pos, pos);
        if (n >= 0)
            node(p, n)->sys = (uint8_t)id;
        return n;
    }
    int32_t n = new_node(p, N_USER, pos, pos);
    if (n >= 0)
        node(p, n)->val = ent_fv_string(name, len);
    return n;
}

static int is_name_token(ftok_type t)
{
    return t == TK_IDENT || t == TK_QIDENT || t == TK_DIDENT || (t >= TK_AND && t <= TK_FALSE);
}

int32_t fparse_property(fparser *p)
{
    size_t pos = p->tok.pos;
    int is_sys = 0;

    if (p->tok.type == TK_IDENT && (fparse_is_word(p, "sys") || fparse_is_word(p, "user")) &&
        fparse_peek(p).type == TK_DOT) {
        is_sys = fparse_is_word(p, "sys");
        fparse_next(p);
        fparse_next(p);
        if (!is_name_token(p->tok.type)) {
            fparse_unexpected(p, "a property name");
            return -1;
        }
    } else if (p->tok.type != TK_IDENT && p->tok.type != TK_QIDENT && p->tok.type != TK_DIDENT) {
        fparse_unexpected(p, "a property name");
        return -1;
    }
    ent_filter_value name = pool_token(p);
    if (name.u.s.len == 0) {
        fparse_error(p, p->tok.pos, "empty property name");
        return -1;
    }
    fparse_next(p);
    return property_node(p, is_sys, name.u.s.ptr, name.u.s.len, pos);
}

/* property(expr) / p(expr). A constant name is resolved now. */
static int32_t parse_property_fn(fparser *p, size_t pos)
{
    if (expect(p, TK_LPAREN) < 0)
        return -1;
    int32_t arg = fparse_expr(p);
    if (arg < 0 || expect(p, TK_RPAREN) < 0)
        return -1;
    fnode *a = node(p, arg);
    if (a->op == N_CONST) {
        if (a->val.type != ENT_FV_STRING) {
            fparse_error(p, a->start, "property() needs a string name, not %s", ent_fv_type_name(a->val.type));
            return -1;
        }
        const char *s = a->val.u.s.ptr;
        size_t n = a->val.u.s.len;
        int is_sys = 0;
        if (n > 4 && fascii_ieq(s, 4, "sys.")) {
            is_sys = 1;
            s += 4;
            n -= 4;
        } else if (n > 5 && fascii_ieq(s, 5, "user.")) {
            s += 5;
            n -= 5;
        }
        if (n == 0) {
            fparse_error(p, a->start, "empty property name");
            return -1;
        }
        /* The argument node stays in the array, unreferenced. */
        return property_node(p, is_sys, s, n, pos);
    }
    return with_children(p, new_node(p, N_PROP, pos, pos), arg, -1, -1);
}

static int32_t parse_function(fparser *p)
{
    size_t pos = p->tok.pos;
    if (fparse_is_word(p, "newid")) {
        fparse_next(p);
        if (expect(p, TK_LPAREN) < 0 || expect(p, TK_RPAREN) < 0)
            return -1;
        return new_node(p, N_NEWID, pos, pos);
    }
    if (fparse_is_word(p, "property") || fparse_is_word(p, "p")) {
        fparse_next(p);
        return parse_property_fn(p, pos);
    }
    fparse_error(p, pos, "unknown function '%.*s'", (int)(p->tok.len > NAME_IN_ERROR_MAX ? NAME_IN_ERROR_MAX : p->tok.len),
                 p->lx.text + pos);
    return -1;
}

static int32_t parse_param(fparser *p)
{
    const char *name = p->lx.text + p->tok.pos + 1;
    size_t len = p->tok.len - 1;
    for (size_t i = 0; i < p->nparams; i++) {
        const char *pn = p->params[i].name;
        if (pn[0] == '@')
            pn++;
        if (fascii_ieq(name, len, pn)) {
            int32_t n = const_node(p, p->param_vals[i], p->tok.pos);
            fparse_next(p);
            return n;
        }
    }
    fparse_error(p, p->tok.pos, "parameter '@%.*s' is not defined", (int)(len > NAME_IN_ERROR_MAX ? NAME_IN_ERROR_MAX : len),
                 name);
    return -1;
}

/* ---- expressions ----------------------------------------------------------------- */

static int32_t parse_or(fparser *p);

static int32_t parse_primary(fparser *p)
{
    size_t pos = p->tok.pos;
    int32_t n;

    switch (p->tok.type) {
    case TK_INT:
        if (p->tok.big) {
            fparse_error(p, pos, "integer constant out of range");
            return -1;
        }
        n = const_node(p, ent_fv_int((int64_t)p->tok.v.u), pos);
        fparse_next(p);
        return n;
    case TK_DOUBLE:
        n = const_node(p, ent_fv_double(p->tok.v.d), pos);
        fparse_next(p);
        return n;
    case TK_STRING:
        n = const_node(p, pool_token(p), pos);
        fparse_next(p);
        return n;
    case TK_TRUE:
    case TK_FALSE:
        n = const_node(p, ent_fv_bool(p->tok.type == TK_TRUE), pos);
        fparse_next(p);
        return n;
    case TK_NULL:
        n = const_node(p, ent_fv_null(), pos);
        fparse_next(p);
        return n;
    case TK_PARAM:
        return parse_param(p);
    case TK_LPAREN:
        fparse_next(p);
        n = parse_or(p);
        if (n < 0 || expect(p, TK_RPAREN) < 0)
            return -1;
        node(p, n)->start = (uint32_t)pos;
        return n;
    case TK_EXISTS: {
        fparse_next(p);
        if (expect(p, TK_LPAREN) < 0)
            return -1;
        int32_t prop = fparse_property(p);
        if (prop < 0 || expect(p, TK_RPAREN) < 0)
            return -1;
        return with_children(p, new_node(p, N_EXISTS, pos, pos), prop, -1, -1);
    }
    case TK_IDENT:
        if (fparse_peek(p).type == TK_LPAREN)
            return parse_function(p);
        return fparse_property(p);
    case TK_QIDENT:
    case TK_DIDENT:
        return fparse_property(p);
    default:
        fparse_unexpected(p, "an expression");
        return -1;
    }
}

static int32_t parse_unary(fparser *p)
{
    if (p->tok.type != TK_PLUS && p->tok.type != TK_MINUS)
        return parse_primary(p);

    size_t pos = p->tok.pos;
    int neg = p->tok.type == TK_MINUS;
    if (enter(p) < 0)
        return -1;
    fparse_next(p);
    int32_t n;
    /* Fold a sign into a numeric literal; this is also the only way to write
     * INT64_MIN, whose magnitude does not fit an int64 on its own. */
    if (neg && p->tok.type == TK_INT) {
        n = const_node(p, ent_fv_int((int64_t)(0 - p->tok.v.u)), pos);
        fparse_next(p);
    } else if (neg && p->tok.type == TK_DOUBLE) {
        n = const_node(p, ent_fv_double(-p->tok.v.d), pos);
        fparse_next(p);
    } else {
        int32_t a = parse_unary(p);
        n = a < 0 ? -1 : with_children(p, new_node(p, neg ? N_NEG : N_POS, pos, pos), a, -1, -1);
    }
    p->depth--;
    return n;
}

static int32_t binary(fparser *p, fop op, size_t pos, int32_t a, int32_t b)
{
    if (a < 0 || b < 0)
        return -1;
    return with_children(p, new_node(p, op, pos, node(p, a)->start), a, b, -1);
}

static int32_t parse_mul(fparser *p)
{
    int32_t l = parse_unary(p);
    while (l >= 0) {
        fop op;
        switch (p->tok.type) {
        case TK_STAR: op = N_MUL; break;
        case TK_SLASH: op = N_DIV; break;
        case TK_PERCENT: op = N_MOD; break;
        default: return l;
        }
        size_t pos = p->tok.pos;
        fparse_next(p);
        l = binary(p, op, pos, l, parse_unary(p));
    }
    return l;
}

static int32_t parse_add(fparser *p)
{
    int32_t l = parse_mul(p);
    while (l >= 0 && (p->tok.type == TK_PLUS || p->tok.type == TK_MINUS)) {
        fop op = p->tok.type == TK_PLUS ? N_ADD : N_SUB;
        size_t pos = p->tok.pos;
        fparse_next(p);
        l = binary(p, op, pos, l, parse_mul(p));
    }
    return l;
}

static int32_t parse_in(fparser *p, int32_t left, int negated, size_t pos)
{
    fparse_next(p); /* IN */
    if (expect(p, TK_LPAREN) < 0)
        return -1;
    int32_t n = new_node(p, negated ? N_NOTIN : N_IN, pos, node(p, left)->start);
    int32_t first = -1, last = -1;
    unsigned depth = 0;
    for (;;) {
        int32_t item = parse_add(p);
        if (item < 0 || n < 0)
            return -1;
        if (last < 0)
            first = item;
        else
            node(p, last)->next = item;
        last = item;
        if (node(p, item)->depth > depth)
            depth = node(p, item)->depth;
        if (p->tok.type != TK_COMMA)
            break;
        fparse_next(p);
    }
    if (expect(p, TK_RPAREN) < 0)
        return -1;
    n = with_children(p, n, left, first, -1);
    if (n >= 0 && depth + 1 > node(p, n)->depth)
        node(p, n)->depth = (uint16_t)(depth + 1);
    return n;
}

static int32_t parse_like(fparser *p, int32_t left, int negated, size_t pos)
{
    fparse_next(p); /* LIKE */
    int32_t pat = parse_add(p);
    int32_t esc = -1;
    if (pat < 0)
        return -1;
    if (p->tok.type == TK_ESCAPE) {
        fparse_next(p);
        esc = parse_add(p);
        if (esc < 0)
            return -1;
    }
    fnode *x = node(p, pat);
    if (x->op == N_CONST && x->val.type != ENT_FV_STRING && x->val.type != ENT_FV_NULL) {
        fparse_error(p, x->start, "LIKE pattern must be a string");
        return -1;
    }
    if (esc >= 0) {
        x = node(p, esc);
        if (x->op == N_CONST && x->val.type != ENT_FV_NULL &&
            (x->val.type != ENT_FV_STRING || futf8_count(x->val.u.s.ptr, x->val.u.s.len) != 1)) {
            fparse_error(p, x->start, "ESCAPE must be a single character");
            return -1;
        }
    }
    return with_children(p, new_node(p, negated ? N_NOTLIKE : N_LIKE, pos, node(p, left)->start), left, pat, esc);
}

static int32_t parse_predicate(fparser *p)
{
    int32_t l = parse_add(p);
    if (l < 0)
        return -1;
    size_t pos = p->tok.pos;
    fop op;

    switch (p->tok.type) {
    case TK_EQ: op = N_EQ; break;
    case TK_NE: op = N_NE; break;
    case TK_LT: op = N_LT; break;
    case TK_LE: op = N_LE; break;
    case TK_GT: op = N_GT; break;
    case TK_GE: op = N_GE; break;
    case TK_IS: {
        fparse_next(p);
        int negated = 0;
        if (p->tok.type == TK_NOT) {
            negated = 1;
            fparse_next(p);
        }
        if (expect(p, TK_NULL) < 0)
            return -1;
        return with_children(p, new_node(p, negated ? N_ISNOTNULL : N_ISNULL, pos, node(p, l)->start), l, -1, -1);
    }
    case TK_NOT: {
        ftoken next = fparse_peek(p);
        if (next.type == TK_IN) {
            fparse_next(p);
            return parse_in(p, l, 1, pos);
        }
        if (next.type == TK_LIKE) {
            fparse_next(p);
            return parse_like(p, l, 1, pos);
        }
        return l;
    }
    case TK_IN: return parse_in(p, l, 0, pos);
    case TK_LIKE: return parse_like(p, l, 0, pos);
    default: return l;
    }
    fparse_next(p);
    return binary(p, op, pos, l, parse_add(p));
}

static int32_t parse_not(fparser *p)
{
    if (p->tok.type != TK_NOT)
        return parse_predicate(p);
    size_t pos = p->tok.pos;
    if (enter(p) < 0)
        return -1;
    fparse_next(p);
    int32_t a = parse_not(p);
    p->depth--;
    if (need_bool(p, a) < 0)
        return -1;
    return with_children(p, new_node(p, N_NOT, pos, pos), a, -1, -1);
}

static int32_t parse_and(fparser *p)
{
    int32_t l = parse_not(p);
    while (l >= 0 && p->tok.type == TK_AND) {
        size_t pos = p->tok.pos;
        fparse_next(p);
        int32_t r = parse_not(p);
        if (need_bool(p, l) < 0 || need_bool(p, r) < 0)
            return -1;
        l = binary(p, N_AND, pos, l, r);
    }
    return l;
}

static int32_t parse_or(fparser *p)
{
    if (enter(p) < 0)
        return -1;
    int32_t l = parse_and(p);
    while (l >= 0 && p->tok.type == TK_OR) {
        size_t pos = p->tok.pos;
        fparse_next(p);
        int32_t r = parse_and(p);
        if (need_bool(p, l) < 0 || need_bool(p, r) < 0)
            return -1;
        l = binary(p, N_OR, pos, l, r);
    }
    p->depth--;
    return l;
}

int32_t fparse_expr(fparser *p)
{
    if (p->failed)
        return -1;
    int32_t n = parse_or(p);
    return p->failed ? -1 : n;
}

/* ---- filters ------------------------------------------------------------------------ */

int ent_filter_parse(const char *text, size_t len, const ent_filter_prop *params, size_t nparams,
                     ent_filter **out, ent_filter_error *err)
{
    *out = NULL;
    ent_filter *f = ent_calloc(1, sizeof *f);
    if (!f) {
        ferr_set(err, ENT_FILTER_ERR_NOMEM, NULL, 0, FPOS_NONE, "out of memory");
        return -1;
    }
    f->kind = ENT_FILTER_KIND_SQL;

    fparser p;
    if (fparse_begin(&p, &f->prog, text, len, params, nparams, err) == 0) {
        f->root = fparse_expr(&p);
        if (!p.failed && p.tok.type != TK_EOF)
            fparse_unexpected(&p, NULL);
        if (!p.failed)
            need_bool(&p, f->root);
    }
    fparse_end(&p);
    if (p.failed) {
        ent_filter_free(f);
        return -1;
    }
    *out = f;
    return 0;
}
