/* ent_filter_kvmsg: a message kept as two arrays of name/value pairs, which
 * owns copies of every name and string. It backs the `sbemu filter` command,
 * the tests, and any path that needs a mutable copy of a message for a rule
 * action. User property names match case-insensitively (ASCII), like the
 * filter language; a SET on an existing name keeps the name's spelling. */
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "filter_internal.h"

#define USER_INITIAL_CAP 8

void ent_filter_kvmsg_init(ent_filter_kvmsg *m) { memset(m, 0, sizeof *m); }

static void release_value(ent_filter_value *v)
{
    if (v->type == ENT_FV_STRING)
        ent_free((char *)v->u.s.ptr);
    *v = ent_fv_null();
}

/* Copy v, owning its string. */
static int copy_value(const ent_filter_value *v, ent_filter_value *out)
{
    *out = *v;
    if (v->type != ENT_FV_STRING)
        return 0;
    char *s = ent_malloc(v->u.s.len + 1);
    if (!s)
        return -1;
    if (v->u.s.len)
        memcpy(s, v->u.s.ptr, v->u.s.len);
    s[v->u.s.len] = 0;
    out->u.s.ptr = s;
    return 0;
}

void ent_filter_kvmsg_free(ent_filter_kvmsg *m)
{
    for (int i = 0; i < ENT_SYS_COUNT; i++)
        release_value(&m->sys[i]);
    for (size_t i = 0; i < m->nuser; i++) {
        ent_free((char *)m->user[i].name);
        release_value(&m->user[i].value);
    }
    ent_free(m->user);
    memset(m, 0, sizeof *m);
}

int ent_filter_kvmsg_set_sys(ent_filter_kvmsg *m, ent_filter_sys id, const ent_filter_value *v)
{
    if ((unsigned)id >= ENT_SYS_COUNT)
        return -1;
    ent_filter_value copy = ent_fv_null();
    /* Copy first: v may point at the value being replaced. */
    if (v && copy_value(v, &copy) < 0)
        return -1;
    release_value(&m->sys[id]);
    m->sys[id] = copy;
    m->sys_set[id] = v != NULL;
    return 0;
}

static ent_filter_prop *find_user(const ent_filter_kvmsg *m, const char *name, size_t len)
{
    for (size_t i = 0; i < m->nuser; i++) {
        const char *n = m->user[i].name;
        if (strlen(n) == len && fascii_ieq(name, len, n))
            return &m->user[i];
    }
    return NULL;
}

int ent_filter_kvmsg_set_user(ent_filter_kvmsg *m, const char *name, size_t len, const ent_filter_value *v)
{
    ent_filter_prop *p = find_user(m, name, len);
    if (!v) {
        if (p) {
            ent_free((char *)p->name);
            release_value(&p->value);
            size_t i = (size_t)(p - m->user);
            memmove(p, p + 1, (m->nuser - i - 1) * sizeof *p);
            m->nuser--;
        }
        return 0;
    }
    ent_filter_value copy;
    if (copy_value(v, &copy) < 0)
        return -1;
    if (p) {
        release_value(&p->value);
        p->value = copy;
        return 0;
    }
    if (m->nuser == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : USER_INITIAL_CAP;
        ent_filter_prop *grown = ent_realloc(m->user, cap * sizeof *grown);
        if (!grown) {
            release_value(&copy);
            return -1;
        }
        m->user = grown;
        m->cap = cap;
    }
    char *n = ent_malloc(len + 1);
    if (!n) {
        release_value(&copy);
        return -1;
    }
    if (len)
        memcpy(n, name, len);
    n[len] = 0;
    m->user[m->nuser].name = n;
    m->user[m->nuser].value = copy;
    m->nuser++;
    return 0;
}

static int kv_get_sys(const void *self, ent_filter_sys id, ent_filter_value *out)
{
    const ent_filter_kvmsg *m = self;
    if ((unsigned)id >= ENT_SYS_COUNT || !m->sys_set[id])
        return 0;
    *out = m->sys[id];
    return 1;
}

static int kv_get_user(const void *self, const char *name, size_t len, ent_filter_value *out)
{
    const ent_filter_prop *p = find_user(self, name, len);
    if (!p)
        return 0;
    *out = p->value;
    return 1;
}

static int kv_set_sys(void *self, ent_filter_sys id, const ent_filter_value *v)
{
    return ent_filter_kvmsg_set_sys(self, id, v);
}

static int kv_set_user(void *self, const char *name, size_t len, const ent_filter_value *v)
{
    return ent_filter_kvmsg_set_user(self, name, len, v);
}

static const ent_filter_mut_ops kv_ops = {
    .read = {.get_sys = kv_get_sys, .get_user = kv_get_user},
    .set_sys = kv_set_sys,
    .set_user = kv_set_user,
};

ent_filter_msg ent_filter_kvmsg_view(const ent_filter_kvmsg *m) { return (ent_filter_msg){&kv_ops.read, m}; }

ent_filter_mut_msg ent_filter_kvmsg_mut(ent_filter_kvmsg *m) { return (ent_filter_mut_msg){&kv_ops, m}; }
