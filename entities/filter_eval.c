/* Evaluating a parsed filter against one message.
 *
 * Values live on the C stack; strings point into the message (through the
 * lookup callbacks), the program, or a scratch buffer on the stack of
 * ent_filter_eval, so the common case allocates nothing. Scratch used by a
 * subtree whose result is not a string is given back as soon as that subtree
 * is done, so only live strings count against ENT_FILTER_SCRATCH_BYTES.
 *
 * Where the documentation (service-bus-messaging-sql-filter.md) is silent we
 * chose, and the tests pin:
 *  - strings compare ordinally (byte order of UTF-8 = code point order),
 *    case-sensitively, for = <> and for < <= > >= alike; a guid equals its
 *    text in any letter case;
 *  - comparing values of unrelated types ('a' = 1, TRUE < FALSE) is UNKNOWN,
 *    not an error: the filter just does not match;
 *  - '+' with a string operand concatenates (C#), rendering the other operand
 *    as C# ToString() would; other arithmetic on non-numbers is an error;
 *  - int64 arithmetic wraps (C# unchecked) except x / 0, x % 0 and
 *    INT64_MIN / -1, which are errors (C# throws);
 *  - timestamps and timespans add and subtract as DateTime/TimeSpan do;
 *  - NULL anywhere in arithmetic or a comparison gives UNKNOWN, like a
 *    missing user property; x IN (...) is UNKNOWN only when x is;
 *  - LIKE on a non-string left operand is UNKNOWN; a non-string pattern or
 *    an escape that is not one character is an error;
 *  - AND and OR stop at a deciding left operand (FALSE AND x, TRUE OR x),
 *    so x is not evaluated and cannot raise an error. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ent_duration.h"
#include "filter_internal.h"

/* Room for the text of any non-string scalar (a double, a timestamp...). */
#define SCALAR_TEXT_MAX 64

static const char *const op_text[] = {
    [N_NEG] = "-", [N_POS] = "+", [N_ADD] = "+", [N_SUB] = "-", [N_MUL] = "*", [N_DIV] = "/", [N_MOD] = "%",
};

void feval_error(feval *e, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ferr_vset(e->err, ENT_FILTER_ERR_EVAL, e->prog->text, e->prog->text_len, pos, fmt, ap);
    va_end(ap);
}

char *feval_alloc(feval *e, size_t n, size_t pos)
{
    if (n > e->cap - e->used) {
        feval_error(e, pos, "string result longer than the %zu bytes an evaluation may hold", e->cap);
        return NULL;
    }
    char *p = e->scratch + e->used;
    e->used += n;
    return p;
}

int feval_to_text(feval *e, const ent_filter_value *v, size_t pos, ent_filter_value *out)
{
    char tmp[SCALAR_TEXT_MAX];
    size_t n;

    switch (v->type) {
    case ENT_FV_STRING: *out = *v; return 0;
    case ENT_FV_NULL: *out = ent_fv_string("", 0); return 0;
    case ENT_FV_BOOL: *out = ent_fv_cstr(v->u.b ? "True" : "False"); return 0;
    case ENT_FV_INT: n = (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)v->u.i); break;
    case ENT_FV_DOUBLE: n = ent_fv_format_double(v->u.d, tmp, sizeof tmp); break;
    case ENT_FV_TIME: n = ent_fv_format_time(v->u.i, tmp, sizeof tmp); break;
    case ENT_FV_DURATION: n = ent_fv_format_duration(v->u.i, tmp, sizeof tmp); break;
    case ENT_FV_UUID: n = ent_fv_format_uuid(v->u.uuid, tmp, sizeof tmp); break;
    default: n = 0; break;
    }
    if (n >= sizeof tmp)
        n = sizeof tmp - 1;
    char *dst = feval_alloc(e, n, pos);
    if (!dst)
        return -1;
    memcpy(dst, tmp, n);
    *out = ent_fv_string(dst, n);
    return 0;
}

/* ---- newid() ------------------------------------------------------------------------ */

/* xorshift64*, seeded once from the kernel: newid() needs uniqueness, not
 * secrecy, and must not cost a system call per message. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
    if (!rng_state) {
        if (getrandom(&rng_state, sizeof rng_state, GRND_NONBLOCK) != (ssize_t)sizeof rng_state || !rng_state)
            rng_state = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&rng_state ^ UINT64_C(0x9E3779B97F4A7C15);
    }
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(0x2545F4914F6CDD1D);
}

void fuuid_new(unsigned char out[16])
{
    uint64_t a = rng_next(), b = rng_next();
    memcpy(out, &a, 8);
    memcpy(out + 8, &b, 8);
    out[6] = (unsigned char)((out[6] & 0x0F) | 0x40); /* version 4 */
    out[8] = (unsigned char)((out[8] & 0x3F) | 0x80); /* RFC 4122 variant */
}

/* ---- properties ---------------------------------------------------------------------------- */

static const fnode *nd(const feval *e, int32_t n) { return &e->prog->nodes[n]; }

/* What sys.<Name> is when the message does not carry it. Service Bus
 * resolves sys.<Name> through the message class's own getters: BrokeredMessage
 * keeps a name -> getter table (SystemPropertyAccessorDictionary) for the
 * filter engine. The broker's code is not public; its client port is
 * (Azure/azure-service-bus-dotnet, src/Microsoft.Azure.ServiceBus/
 * BrokeredMessage.cs), and there an unset property reads as follows:
 *  - every string one (MessageId, CorrelationId, Label, To, ReplyTo, SessionId,
 *    ReplyToSessionId, ContentType, PartitionKey, ViaPartitionKey,
 *    DeadLetterSource) returns its field, null when unset: NULL here, so
 *    "sys.Label = 'x'" is unknown (no match, hence no dead letter on every
 *    unlabelled message) and "sys.Label IS NULL" is true. The newer SDKs'
 *    getters (ServiceBusMessage.Subject, ...) return null the same way. The
 *    documentation's "accessing a non-existent system property is an error"
 *    (service-bus-messaging-sql-filter.md) reads as names the class does not
 *    have (sys.Foo), which the parser refuses;
 *  - ScheduledEnqueueTimeUtc is a DateTime field that starts at
 *    DateTime.MinValue, and TimeToLive returns TimeSpan.MaxValue when unset:
 *    never null there, so never NULL here (IS NULL is false);
 *  - SequenceNumber, EnqueuedSequenceNumber, EnqueuedTimeUtc, ExpiresAtUtc and
 *    DeliveryCount throw InvalidOperationException (ThrowIfNotReceived) until
 *    the broker has set them, and LockToken / LockedUntilUtc have no value
 *    before a lock: an error here (Service Bus' FilterException) unless
 *    tolerated (IS [NOT] NULL, EXISTS).
 * EXISTS(sys.X) stays "the message carries it" for all of them.
 * Returns 1 with *out filled when a default applies, 0 when the lookup fails. */
#define DATETIME_MIN_MS (-ENT_TICKS_AT_UNIX_EPOCH / ENT_TICKS_PER_MS) /* 0001-01-01T00:00:00Z */

static int absent_sys_value(ent_filter_sys id, ent_filter_value *out)
{
    if (ent_filter_sys_type(id) == ENT_FV_STRING) {
        *out = ent_fv_null();
        return 1;
    }
    if (id == ENT_SYS_SCHEDULED_ENQUEUE_TIME_UTC) {
        *out = ent_fv_time(DATETIME_MIN_MS);
        return 1;
    }
    if (id == ENT_SYS_TIME_TO_LIVE) {
        *out = ent_fv_duration(ENT_DURATION_MAXVALUE_MS);
        return 1;
    }
    return 0;
}

static int lookup_sys(feval *e, ent_filter_sys id, int tolerant, size_t pos, int *present, ent_filter_value *out)
{
    *present = e->ops->get_sys(e->self, id, out);
    if (*present)
        return 0;
    if (absent_sys_value(id, out))
        return 0; /* still not present: EXISTS is about the message */
    *out = ent_fv_null();
    if (!tolerant) {
        feval_error(e, pos, "system property 'sys.%s' is not set", ent_filter_sys_name(id));
        return -1;
    }
    return 0;
}

static int lookup_user(feval *e, const char *name, size_t len, int *present, ent_filter_value *out)
{
    *present = e->ops->get_user(e->self, name, len, out);
    if (!*present)
        *out = ent_fv_null();
    return 0;
}

/* A property node. tolerant: a missing system property is "absent" rather
 * than an error (IS NULL, EXISTS). */
static int eval_property(feval *e, const fnode *x, int tolerant, int *present, ent_filter_value *out)
{
    if (x->op == N_SYS)
        return lookup_sys(e, (ent_filter_sys)x->sys, tolerant, x->pos, present, out);
    if (x->op == N_USER)
        return lookup_user(e, x->val.u.s.ptr, x->val.u.s.len, present, out);

    ent_filter_value name;
    if (feval_node(e, x->a, &name) < 0)
        return -1;
    if (name.type == ENT_FV_NULL) {
        *present = 0;
        *out = ent_fv_null();
        return 0;
    }
    if (name.type != ENT_FV_STRING) {
        feval_error(e, nd(e, x->a)->start, "property() needs a string name, not %s", ent_fv_type_name(name.type));
        return -1;
    }
    const char *s = name.u.s.ptr;
    size_t n = name.u.s.len;
    if (n > 4 && fascii_ieq(s, 4, "sys.")) {
        int id = ent_filter_sys_lookup(s + 4, n - 4);
        if (id < 0) {
            feval_error(e, x->pos, "unknown system property '%.*s'", (int)(n > SCALAR_TEXT_MAX ? SCALAR_TEXT_MAX : n), s);
            return -1;
        }
        return lookup_sys(e, (ent_filter_sys)id, tolerant, x->pos, present, out);
    }
    if (n > 5 && fascii_ieq(s, 5, "user.")) {
        s += 5;
        n -= 5;
    }
    return lookup_user(e, s, n, present, out);
}

static int is_property(const fnode *x) { return x->op == N_SYS || x->op == N_USER || x->op == N_PROP; }

/* ---- logic ------------------------------------------------------------------------------------ */

typedef enum tri { TRI_FALSE = 0, TRI_TRUE = 1, TRI_UNKNOWN = 2 } tri;

static int eval_tri(feval *e, int32_t n, tri *t)
{
    ent_filter_value v;
    if (feval_node(e, n, &v) < 0)
        return -1;
    if (v.type == ENT_FV_NULL) {
        *t = TRI_UNKNOWN;
        return 0;
    }
    if (v.type != ENT_FV_BOOL) {
        feval_error(e, nd(e, n)->start, "expected a boolean, found %s", ent_fv_type_name(v.type));
        return -1;
    }
    *t = v.u.b ? TRI_TRUE : TRI_FALSE;
    return 0;
}

static ent_filter_value tri_value(tri t) { return t == TRI_UNKNOWN ? ent_fv_null() : ent_fv_bool(t == TRI_TRUE); }

static int eval_logic(feval *e, const fnode *x, ent_filter_value *out)
{
    tri l, r;
    if (eval_tri(e, x->a, &l) < 0)
        return -1;
    if (x->op == N_NOT) {
        *out = tri_value(l == TRI_UNKNOWN ? TRI_UNKNOWN : l == TRI_TRUE ? TRI_FALSE : TRI_TRUE);
        return 0;
    }
    tri decide = x->op == N_AND ? TRI_FALSE : TRI_TRUE;
    if (l == decide) {
        *out = tri_value(l);
        return 0;
    }
    if (eval_tri(e, x->b, &r) < 0)
        return -1;
    if (r == decide)
        *out = tri_value(r);
    else if (l == TRI_UNKNOWN || r == TRI_UNKNOWN)
        *out = ent_fv_null();
    else
        *out = tri_value(l); /* both equal the non-deciding value */
    return 0;
}

/* ---- comparison ------------------------------------------------------------------------------- */

static int eval_compare(feval *e, const fnode *x, ent_filter_value *out)
{
    ent_filter_value a, b;
    if (feval_node(e, x->a, &a) < 0 || feval_node(e, x->b, &b) < 0)
        return -1;
    *out = ent_fv_null();
    if (a.type == ENT_FV_NULL || b.type == ENT_FV_NULL)
        return 0;
    int ordering = x->op != N_EQ && x->op != N_NE;
    if (ordering && (a.type == ENT_FV_BOOL || b.type == ENT_FV_BOOL))
        return 0;
    fcmp c = fv_compare(&a, &b);
    int r;
    switch (c) {
    case FCMP_INCOMPATIBLE: return 0;
    case FCMP_UNORDERED: r = x->op == N_NE; break;
    default:
        switch (x->op) {
        case N_EQ: r = c == FCMP_EQ; break;
        case N_NE: r = c != FCMP_EQ; break;
        case N_LT: r = c == FCMP_LT; break;
        case N_LE: r = c != FCMP_GT; break;
        case N_GT: r = c == FCMP_GT; break;
        default: r = c != FCMP_LT; break;
        }
    }
    *out = ent_fv_bool(r);
    return 0;
}

static int eval_isnull(feval *e, const fnode *x, ent_filter_value *out)
{
    const fnode *a = nd(e, x->a);
    ent_filter_value v;
    int present = 1;
    if (is_property(a)) {
        if (eval_property(e, a, 1, &present, &v) < 0)
            return -1;
    } else if (feval_node(e, x->a, &v) < 0) {
        return -1;
    }
    /* An absent property reads as NULL, or as the broker's default (which
     * IS NULL must not call null). */
    int isnull = v.type == ENT_FV_NULL;
    *out = ent_fv_bool(x->op == N_ISNULL ? isnull : !isnull);
    return 0;
}

static int eval_in(feval *e, const fnode *x, ent_filter_value *out)
{
    ent_filter_value left, item;
    if (feval_node(e, x->a, &left) < 0)
        return -1;
    if (left.type == ENT_FV_NULL) {
        *out = ent_fv_null();
        return 0;
    }
    size_t mark = e->used;
    int found = 0;
    for (int32_t i = x->b; i >= 0 && !found; i = nd(e, i)->next) {
        if (feval_node(e, i, &item) < 0)
            return -1;
        found = item.type != ENT_FV_NULL && fv_compare(&left, &item) == FCMP_EQ;
        e->used = mark;
    }
    *out = ent_fv_bool(x->op == N_IN ? found : !found);
    return 0;
}

static int eval_like(feval *e, const fnode *x, ent_filter_value *out)
{
    ent_filter_value s, pat, esc = ent_fv_null();
    if (feval_node(e, x->a, &s) < 0 || feval_node(e, x->b, &pat) < 0 || (x->c >= 0 && feval_node(e, x->c, &esc) < 0))
        return -1;
    *out = ent_fv_null();
    if (s.type == ENT_FV_NULL || pat.type == ENT_FV_NULL || (x->c >= 0 && esc.type == ENT_FV_NULL))
        return 0;
    if (pat.type != ENT_FV_STRING) {
        feval_error(e, nd(e, x->b)->start, "LIKE pattern must be a string, not %s", ent_fv_type_name(pat.type));
        return -1;
    }
    int32_t esc_cp = -1;
    if (x->c >= 0) {
        if (esc.type != ENT_FV_STRING || futf8_count(esc.u.s.ptr, esc.u.s.len) != 1) {
            feval_error(e, nd(e, x->c)->start, "ESCAPE must be a single character");
            return -1;
        }
        size_t i = 0;
        esc_cp = (int32_t)futf8_next(esc.u.s.ptr, esc.u.s.len, &i);
    }
    if (s.type != ENT_FV_STRING)
        return 0;
    int m = flike_match(s.u.s.ptr, s.u.s.len, pat.u.s.ptr, pat.u.s.len, esc_cp);
    *out = ent_fv_bool(x->op == N_LIKE ? m : !m);
    return 0;
}

/* ---- arithmetic ---------------------------------------------------------------------------------- */

static int type_error(feval *e, const fnode *x, const ent_filter_value *a, const ent_filter_value *b)
{
    if (b)
        feval_error(e, x->pos, "operator '%s' cannot be applied to %s and %s", op_text[x->op],
                    ent_fv_type_name(a->type), ent_fv_type_name(b->type));
    else
        feval_error(e, x->pos, "operator '%s' cannot be applied to %s", op_text[x->op], ent_fv_type_name(a->type));
    return -1;
}

static int eval_unary(feval *e, const fnode *x, ent_filter_value *out)
{
    ent_filter_value a;
    if (feval_node(e, x->a, &a) < 0)
        return -1;
    *out = a;
    switch (a.type) {
    case ENT_FV_NULL: return 0;
    case ENT_FV_INT:
        if (x->op == N_NEG)
            out->u.i = (int64_t)(0 - (uint64_t)a.u.i); /* C# unchecked: -MinValue == MinValue */
        return 0;
    case ENT_FV_DOUBLE:
        if (x->op == N_NEG)
            out->u.d = -a.u.d;
        return 0;
    case ENT_FV_DURATION:
        if (x->op == N_NEG) {
            if (a.u.i == INT64_MIN) {
                feval_error(e, x->pos, "timespan out of range");
                return -1;
            }
            out->u.i = -a.u.i;
        }
        return 0;
    default: return type_error(e, x, &a, NULL);
    }
}

static int concat(feval *e, const fnode *x, const ent_filter_value *a, const ent_filter_value *b,
                  ent_filter_value *out)
{
    ent_filter_value ta, tb;
    if (feval_to_text(e, a, x->pos, &ta) < 0 || feval_to_text(e, b, x->pos, &tb) < 0)
        return -1;
    size_t n = ta.u.s.len + tb.u.s.len;
    char *dst = feval_alloc(e, n, x->pos);
    if (!dst)
        return -1;
    if (ta.u.s.len)
        memmove(dst, ta.u.s.ptr, ta.u.s.len);
    if (tb.u.s.len)
        memmove(dst + ta.u.s.len, tb.u.s.ptr, tb.u.s.len);
    *out = ent_fv_string(dst, n);
    return 0;
}

static int int_arith(feval *e, const fnode *x, int64_t a, int64_t b, ent_filter_value *out)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (x->op) {
    case N_ADD: *out = ent_fv_int((int64_t)(ua + ub)); return 0;
    case N_SUB: *out = ent_fv_int((int64_t)(ua - ub)); return 0;
    case N_MUL: *out = ent_fv_int((int64_t)(ua * ub)); return 0;
    default: break;
    }
    if (b == 0) {
        feval_error(e, x->pos, "division by zero");
        return -1;
    }
    if (a == INT64_MIN && b == -1) {
        feval_error(e, x->pos, "arithmetic overflow");
        return -1;
    }
    *out = ent_fv_int(x->op == N_DIV ? a / b : a % b);
    return 0;
}

static int double_arith(const fnode *x, double a, double b, ent_filter_value *out)
{
    double r;
    switch (x->op) {
    case N_ADD: r = a + b; break;
    case N_SUB: r = a - b; break;
    case N_MUL: r = a * b; break;
    case N_DIV: r = a / b; break;
    default: r = fmod(a, b); break;
    }
    *out = ent_fv_double(r);
    return 0;
}

/* DateTime/TimeSpan: t+d, d+t, t-d, t-t, d+d, d-d. */
static int time_arith(feval *e, const fnode *x, const ent_filter_value *a, const ent_filter_value *b,
                      ent_filter_value *out)
{
    ent_fv_type ta = a->type, tb = b->type, rt;
    int64_t r;
    int overflow;
    if (x->op == N_ADD && ((ta == ENT_FV_TIME && tb == ENT_FV_DURATION) || (ta == ENT_FV_DURATION && tb == ENT_FV_TIME)))
        rt = ENT_FV_TIME;
    else if (x->op == N_SUB && ta == ENT_FV_TIME && tb == ENT_FV_DURATION)
        rt = ENT_FV_TIME;
    else if (x->op == N_SUB && ta == ENT_FV_TIME && tb == ENT_FV_TIME)
        rt = ENT_FV_DURATION;
    else if ((x->op == N_ADD || x->op == N_SUB) && ta == ENT_FV_DURATION && tb == ENT_FV_DURATION)
        rt = ENT_FV_DURATION;
    else
        return type_error(e, x, a, b);
    if (x->op == N_ADD)
        overflow = __builtin_add_overflow(a->u.i, b->u.i, &r);
    else
        overflow = __builtin_sub_overflow(a->u.i, b->u.i, &r);
    if (overflow) {
        feval_error(e, x->pos, "%s out of range", ent_fv_type_name(rt));
        return -1;
    }
    out->type = rt;
    out->u.i = r;
    return 0;
}

static int eval_arith(feval *e, const fnode *x, ent_filter_value *out)
{
    ent_filter_value a, b;
    if (feval_node(e, x->a, &a) < 0 || feval_node(e, x->b, &b) < 0)
        return -1;
    if (a.type == ENT_FV_NULL || b.type == ENT_FV_NULL) {
        *out = ent_fv_null();
        return 0;
    }
    if (x->op == N_ADD && (a.type == ENT_FV_STRING || b.type == ENT_FV_STRING))
        return concat(e, x, &a, &b, out);
    if (a.type == ENT_FV_INT && b.type == ENT_FV_INT)
        return int_arith(e, x, a.u.i, b.u.i, out);
    if ((a.type == ENT_FV_INT || a.type == ENT_FV_DOUBLE) && (b.type == ENT_FV_INT || b.type == ENT_FV_DOUBLE))
        return double_arith(x, a.type == ENT_FV_INT ? (double)a.u.i : a.u.d, b.type == ENT_FV_INT ? (double)b.u.i : b.u.d,
                            out);
    return time_arith(e, x, &a, &b, out);
}

/* ---- dispatch ------------------------------------------------------------------------------------------ */

int feval_node(feval *e, int32_t n, ent_filter_value *out)
{
    const fnode *x = nd(e, n);
    size_t mark = e->used;
    int present, rc;

    switch ((fop)x->op) {
    case N_CONST: *out = x->val; return 0;
    case N_SYS:
    case N_USER:
    case N_PROP: rc = eval_property(e, x, 0, &present, out); break;
    case N_NEWID: {
        unsigned char u[16];
        fuuid_new(u);
        *out = ent_fv_uuid(u);
        return 0;
    }
    case N_NEG:
    case N_POS: rc = eval_unary(e, x, out); break;
    case N_NOT:
    case N_AND:
    case N_OR: rc = eval_logic(e, x, out); break;
    case N_EQ: case N_NE: case N_LT: case N_LE: case N_GT: case N_GE: rc = eval_compare(e, x, out); break;
    case N_ADD: case N_SUB: case N_MUL: case N_DIV: case N_MOD: rc = eval_arith(e, x, out); break;
    case N_ISNULL:
    case N_ISNOTNULL: rc = eval_isnull(e, x, out); break;
    case N_IN:
    case N_NOTIN: rc = eval_in(e, x, out); break;
    case N_LIKE:
    case N_NOTLIKE: rc = eval_like(e, x, out); break;
    case N_EXISTS:
        rc = eval_property(e, nd(e, x->a), 1, &present, out);
        if (rc == 0)
            *out = ent_fv_bool(present);
        break;
    default:
        feval_error(e, x->pos, "internal error: unknown node %d", x->op);
        return -1;
    }
    if (rc == 0 && out->type != ENT_FV_STRING)
        e->used = mark;
    return rc;
}

ent_filter_result ent_filter_eval(const ent_filter *f, const ent_filter_msg *msg, ent_filter_error *err)
{
    switch (f->kind) {
    case ENT_FILTER_KIND_TRUE: return ENT_FILTER_TRUE;
    case ENT_FILTER_KIND_FALSE: return ENT_FILTER_FALSE;
    case ENT_FILTER_KIND_CORRELATION: return fcorr_eval(f, msg);
    case ENT_FILTER_KIND_SQL: break;
    }

    char scratch[ENT_FILTER_SCRATCH_BYTES];
    feval e = {.prog = &f->prog, .ops = msg->ops, .self = msg->self, .scratch = scratch, .cap = sizeof scratch,
               .err = err};
    ent_filter_value v;
    if (feval_node(&e, f->root, &v) < 0)
        return ENT_FILTER_ERROR;
    if (v.type == ENT_FV_NULL)
        return ENT_FILTER_UNKNOWN;
    if (v.type != ENT_FV_BOOL) {
        feval_error(&e, f->prog.nodes[f->root].start, "filter must produce a boolean, not %s", ent_fv_type_name(v.type));
        return ENT_FILTER_ERROR;
    }
    return v.u.b ? ENT_FILTER_TRUE : ENT_FILTER_FALSE;
}
