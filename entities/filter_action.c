/* SQL rule actions (service-bus-messaging-sql-rule-action.md):
 *
 *   SET <property> = <expression> | REMOVE <property>
 *
 * statements separated by ',' or ';' (a ';' after the last one is allowed).
 * The expression language is the filter's (filter_parser.c), evaluated with
 * the same scratch rules (filter_eval.c). Broker-owned system properties
 * (SequenceNumber, EnqueuedTimeUtc, ...) cannot be targets: that is a
 * syntax error, reported when the rule is created.
 *
 * SET converts "if possible" (the documentation's words): an int64 stored
 * into a user property that holds a double becomes a double (C# implicit
 * widening); a string-typed system property takes the text of any scalar;
 * ScheduledEnqueueTimeUtc takes a timestamp or ISO 8601 text; TimeToLive
 * takes a timespan. NULL (or an unknown value) unsets a system property and
 * stores a null user property. */
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "filter_internal.h"

typedef enum stmt_kind { STMT_SET, STMT_REMOVE } stmt_kind;

typedef struct fstmt {
    stmt_kind kind;
    int32_t target; /* N_SYS or N_USER node */
    int32_t expr;   /* STMT_SET only */
    size_t pos;     /* of the SET/REMOVE word */
} fstmt;

struct ent_filter_action {
    fprog prog;
    fstmt *stmts;
    size_t n;
};

void ent_filter_action_free(ent_filter_action *a)
{
    if (!a)
        return;
    fprog_free(&a->prog);
    ent_free(a->stmts);
    ent_free(a);
}

const char *ent_filter_action_text(const ent_filter_action *a) { return a->prog.text; }
size_t ent_filter_action_statement_count(const ent_filter_action *a) { return a->n; }

/* ---- parsing ------------------------------------------------------------------------- */

static int parse_target(fparser *p, int32_t *target)
{
    size_t pos = p->tok.pos;
    *target = fparse_property(p);
    if (*target < 0)
        return -1;
    const fnode *t = &p->prog->nodes[*target];
    if (t->op == N_SYS && !ent_filter_sys_settable((ent_filter_sys)t->sys)) {
        fparse_error(p, pos, "system property 'sys.%s' cannot be changed by an action",
                     ent_filter_sys_name((ent_filter_sys)t->sys));
        return -1;
    }
    return 0;
}

static int parse_statement(fparser *p, fstmt *s)
{
    s->pos = p->tok.pos;
    s->expr = -1;
    if (fparse_is_word(p, "set")) {
        s->kind = STMT_SET;
        fparse_next(p);
        if (parse_target(p, &s->target) < 0)
            return -1;
        if (p->tok.type != TK_EQ) {
            fparse_unexpected(p, "'='");
            return -1;
        }
        fparse_next(p);
        s->expr = fparse_expr(p);
        return s->expr < 0 ? -1 : 0;
    }
    if (fparse_is_word(p, "remove")) {
        s->kind = STMT_REMOVE;
        fparse_next(p);
        return parse_target(p, &s->target);
    }
    fparse_unexpected(p, "SET or REMOVE");
    return -1;
}

static int parse_statements(fparser *p, ent_filter_action *a, size_t max)
{
    for (;;) {
        if (a->n == max) {
            p->failed = 1;
            ferr_set(p->err, ENT_FILTER_ERR_LIMIT, p->prog->text, p->prog->text_len, p->tok.pos,
                     "action has more than %zu statements", max);
            return -1;
        }
        if (parse_statement(p, &a->stmts[a->n]) < 0)
            return -1;
        a->n++;
        int terminated = 0;
        if (p->tok.type == TK_SEMI) {
            terminated = 1;
            fparse_next(p);
        }
        if (p->tok.type == TK_COMMA) {
            fparse_next(p);
            continue;
        }
        if (p->tok.type == TK_EOF)
            return 0;
        if (terminated && (fparse_is_word(p, "set") || fparse_is_word(p, "remove")))
            continue;
        fparse_unexpected(p, terminated ? "SET or REMOVE" : "',' or ';'");
        return -1;
    }
}

int ent_filter_action_parse(const char *text, size_t len, const ent_filter_prop *params, size_t nparams,
                            ent_filter_action **out, ent_filter_error *err)
{
    *out = NULL;
    ent_filter_action *a = ent_calloc(1, sizeof *a);
    size_t max = ent_filter_get_limits().max_action_statements;
    if (a)
        a->stmts = ent_calloc(max, sizeof *a->stmts);
    if (!a || !a->stmts) {
        ferr_set(err, ENT_FILTER_ERR_NOMEM, NULL, 0, FPOS_NONE, "out of memory");
        ent_filter_action_free(a);
        return -1;
    }
    fparser p;
    if (fparse_begin(&p, &a->prog, text, len, params, nparams, err) == 0)
        parse_statements(&p, a, max);
    fparse_end(&p);
    if (p.failed) {
        ent_filter_action_free(a);
        return -1;
    }
    fstmt *shrunk = ent_realloc(a->stmts, a->n * sizeof *shrunk);
    if (shrunk)
        a->stmts = shrunk;
    *out = a;
    return 0;
}

/* ---- execution -------------------------------------------------------------------------- */

static int convert_for_sys(feval *e, ent_filter_sys id, size_t pos, ent_filter_value *v)
{
    ent_fv_type want = ent_filter_sys_type(id);
    if (v->type == ENT_FV_NULL || v->type == want)
        return 0;
    if (want == ENT_FV_STRING)
        return feval_to_text(e, v, pos, v);
    if (want == ENT_FV_TIME && v->type == ENT_FV_STRING) {
        int64_t ms;
        if (ent_fv_parse_time(v->u.s.ptr, v->u.s.len, &ms) == 0) {
            *v = ent_fv_time(ms);
            return 0;
        }
    }
    feval_error(e, pos, "cannot assign %s to sys.%s (%s)", ent_fv_type_name(v->type), ent_filter_sys_name(id),
                ent_fv_type_name(want));
    return -1;
}

static int exec_statement(feval *e, const fstmt *s, const ent_filter_mut_msg *msg)
{
    const fnode *t = &e->prog->nodes[s->target];
    const ent_filter_mut_ops *ops = msg->ops;
    ent_filter_value v;
    int rc;

    if (s->kind == STMT_REMOVE) {
        if (t->op == N_SYS)
            rc = ops->set_sys(msg->self, (ent_filter_sys)t->sys, NULL);
        else
            rc = ops->set_user(msg->self, t->val.u.s.ptr, t->val.u.s.len, NULL);
    } else {
        if (feval_node(e, s->expr, &v) < 0)
            return -1;
        if (t->op == N_SYS) {
            if (convert_for_sys(e, (ent_filter_sys)t->sys, e->prog->nodes[s->expr].start, &v) < 0)
                return -1;
            rc = ops->set_sys(msg->self, (ent_filter_sys)t->sys, v.type == ENT_FV_NULL ? NULL : &v);
        } else {
            ent_filter_value old;
            if (v.type == ENT_FV_INT && ops->read.get_user(msg->self, t->val.u.s.ptr, t->val.u.s.len, &old) &&
                old.type == ENT_FV_DOUBLE)
                v = ent_fv_double((double)v.u.i);
            rc = ops->set_user(msg->self, t->val.u.s.ptr, t->val.u.s.len, &v);
        }
    }
    if (rc != 0) {
        const char *scope = t->op == N_SYS ? "sys." : "";
        const char *name = t->op == N_SYS ? ent_filter_sys_name((ent_filter_sys)t->sys) : t->val.u.s.ptr;
        int len = t->op == N_SYS ? (int)strlen(name) : (int)t->val.u.s.len;
        ferr_set(e->err, ENT_FILTER_ERR_MESSAGE, e->prog->text, e->prog->text_len, s->pos,
                 "the message refused the change to '%s%.*s'", scope, len, name);
        return -1;
    }
    return 0;
}

int ent_filter_action_exec(const ent_filter_action *a, const ent_filter_mut_msg *msg, ent_filter_error *err)
{
    char scratch[ENT_FILTER_SCRATCH_BYTES];
    feval e = {.prog = &a->prog, .ops = &msg->ops->read, .self = msg->self, .scratch = scratch,
               .cap = sizeof scratch, .err = err};
    for (size_t i = 0; i < a->n; i++) {
        e.used = 0; /* the previous value has been copied by the message */
        if (exec_statement(&e, &a->stmts[i], msg) < 0)
            return -1;
    }
    return 0;
}
