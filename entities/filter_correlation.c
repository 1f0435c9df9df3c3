/* The filters that are not SQL text (TrueFilter, FalseFilter,
 * CorrelationFilter), and the lifetime and accessors every filter shares
 * (an SQL filter's program included). Rules are filter_rule.c. */
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "filter_internal.h"

/* The texts Service Bus reports for true and false filters. */
#define TRUE_FILTER_TEXT "1=1"
#define FALSE_FILTER_TEXT "1=0"

sb_status ent_filter_error_status(const ent_filter_error *err)
{
    switch (err->kind) {
    case ENT_FILTER_ERR_NONE: return SB_OK;
    case ENT_FILTER_ERR_NOMEM: return SB_ERR_INTERNAL;
    default: return SB_ERR_ARGUMENT;
    }
}

static ent_filter *new_kind(ent_filter_kind kind)
{
    ent_filter *f = ent_calloc(1, sizeof *f);
    if (f)
        f->kind = kind;
    return f;
}

ent_filter *ent_filter_new_true(void) { return new_kind(ENT_FILTER_KIND_TRUE); }
ent_filter *ent_filter_new_false(void) { return new_kind(ENT_FILTER_KIND_FALSE); }

/* ---- correlation filters ------------------------------------------------------------ */

/* The spec's string fields with the system property each one matches. */
#define CORR_FIELDS 8

static const char **corr_field(ent_filter_correlation *c, int i, ent_filter_sys *id)
{
    static const ent_filter_sys ids[CORR_FIELDS] = {
        ENT_SYS_CORRELATION_ID, ENT_SYS_MESSAGE_ID, ENT_SYS_TO,         ENT_SYS_REPLY_TO,
        ENT_SYS_LABEL,          ENT_SYS_SESSION_ID, ENT_SYS_REPLY_TO_SESSION_ID, ENT_SYS_CONTENT_TYPE,
    };
    const char **fields[CORR_FIELDS] = {
        &c->correlation_id, &c->message_id, &c->to, &c->reply_to,
        &c->label, &c->session_id, &c->reply_to_session_id, &c->content_type,
    };
    *id = ids[i];
    return fields[i];
}

static void corr_release(ent_filter *f)
{
    ent_filter_sys id;
    for (int i = 0; i < CORR_FIELDS; i++)
        ent_free((char *)*corr_field(&f->corr, i, &id));
    for (size_t i = 0; i < f->corr.nproperties; i++) {
        ent_free((char *)f->corr_props[i].name);
        if (f->corr_props[i].value.type == ENT_FV_STRING)
            ent_free((char *)f->corr_props[i].value.u.s.ptr);
    }
    ent_free(f->corr_props);
}

static char *dup_bytes(const char *s, size_t n)
{
    char *d = ent_malloc(n + 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

int ent_filter_new_correlation(const ent_filter_correlation *spec, ent_filter **out, ent_filter_error *err)
{
    *out = NULL;
    if (err)
        memset(err, 0, sizeof *err);
    ent_filter *f = new_kind(ENT_FILTER_KIND_CORRELATION);
    if (!f)
        goto oom;

    ent_filter_correlation src = *spec;
    int any = spec->nproperties > 0;
    ent_filter_sys id;
    for (int i = 0; i < CORR_FIELDS; i++) {
        const char *s = *corr_field(&src, i, &id);
        if (!s)
            continue;
        any = 1;
        if (!(*corr_field(&f->corr, i, &id) = dup_bytes(s, strlen(s))))
            goto oom;
    }
    if (!any) {
        ferr_set(err, ENT_FILTER_ERR_SYNTAX, NULL, 0, FPOS_NONE,
                 "a correlation filter needs at least one system or user property");
        ent_filter_free(f);
        return -1;
    }
    if (spec->nproperties) {
        f->corr_props = ent_calloc(spec->nproperties, sizeof *f->corr_props);
        if (!f->corr_props)
            goto oom;
        for (size_t i = 0; i < spec->nproperties; i++) {
            const ent_filter_prop *p = &spec->properties[i];
            ent_filter_prop *q = &f->corr_props[i];
            f->corr.nproperties = i + 1; /* so that a failure frees what is copied */
            if (!p->name || !p->name[0]) {
                ferr_set(err, ENT_FILTER_ERR_SYNTAX, NULL, 0, FPOS_NONE, "correlation property %zu has no name", i + 1);
                ent_filter_free(f);
                return -1;
            }
            q->value = p->value;
            if (p->value.type == ENT_FV_STRING) {
                q->value.u.s.ptr = NULL;
                char *s = dup_bytes(p->value.u.s.ptr, p->value.u.s.len);
                if (!s)
                    goto oom;
                q->value.u.s.ptr = s;
            }
            if (!(q->name = dup_bytes(p->name, strlen(p->name))))
                goto oom;
        }
        f->corr.properties = f->corr_props;
    }
    *out = f;
    return 0;

oom:
    ferr_set(err, ENT_FILTER_ERR_NOMEM, NULL, 0, FPOS_NONE, "out of memory");
    ent_filter_free(f);
    return -1;
}

/* Service Bus compares correlation values exactly: strings are
 * case-sensitive; a missing property never matches. Names are looked up the
 * way SQL filters look them up (case-insensitively). */
ent_filter_result fcorr_eval(const ent_filter *f, const ent_filter_msg *msg)
{
    ent_filter_correlation c = f->corr;
    ent_filter_sys id;
    ent_filter_value v;
    for (int i = 0; i < CORR_FIELDS; i++) {
        const char *want = *corr_field(&c, i, &id);
        if (!want)
            continue;
        if (!msg->ops->get_sys(msg->self, id, &v) || v.type != ENT_FV_STRING)
            return ENT_FILTER_FALSE;
        size_t n = strlen(want);
        if (v.u.s.len != n || (n && memcmp(v.u.s.ptr, want, n) != 0))
            return ENT_FILTER_FALSE;
    }
    for (size_t i = 0; i < c.nproperties; i++) {
        const ent_filter_prop *p = &c.properties[i];
        if (!msg->ops->get_user(msg->self, p->name, strlen(p->name), &v) || !fv_equal(&v, &p->value))
            return ENT_FILTER_FALSE;
    }
    return ENT_FILTER_TRUE;
}

/* ---- every filter ---------------------------------------------------------------------- */

/* An SQL filter's compiled program (filter_parser.c makes it). */
void fprog_free(fprog *prog)
{
    ent_free(prog->text);
    ent_free(prog->nodes);
    ent_free(prog->pool);
    memset(prog, 0, sizeof *prog);
}

void ent_filter_free(ent_filter *f)
{
    if (!f)
        return;
    if (f->kind == ENT_FILTER_KIND_CORRELATION)
        corr_release(f);
    fprog_free(&f->prog);
    ent_free(f);
}

ent_filter_kind ent_filter_get_kind(const ent_filter *f) { return f->kind; }

const char *ent_filter_text(const ent_filter *f)
{
    switch (f->kind) {
    case ENT_FILTER_KIND_SQL: return f->prog.text;
    case ENT_FILTER_KIND_TRUE: return TRUE_FILTER_TEXT;
    case ENT_FILTER_KIND_FALSE: return FALSE_FILTER_TEXT;
    default: return NULL;
    }
}

const ent_filter_correlation *ent_filter_get_correlation(const ent_filter *f)
{
    return f->kind == ENT_FILTER_KIND_CORRELATION ? &f->corr : NULL;
}
