/* See http_xml.h: the reading half (http_xml_write.c writes). The parser
 * builds a small tree (an array of nodes), then flattens the description
 * inside <entry><content> into properties. */
#include "http_xml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_filter.h"

#define XML_NS_XML "http://www.w3.org/XML/1998/namespace"
#define KEY_VALUE_ELEMENT "KeyValueOfstringanyType"

/* ---- the tree ---- */

typedef struct xnode {
    char *local, *ns;          /* resolved name */
    char *qname;               /* as written, to match the end tag */
    http_xml_buf text;         /* character data directly inside */
    char *type, *type_ns;      /* xsi:type split and resolved */
    int parent, first, last, next; /* indexes, -1 for none */
    int line;
} xnode;

/* A namespace declaration in scope: popped when its element closes. */
typedef struct xns {
    char *prefix; /* "" for the default namespace */
    char *uri;
    int depth;
} xns;

typedef struct xdoc {
    xnode *nodes;
    int n;
    size_t cap;
    xns *ns;
    int nns;
    size_t cap_ns;
    char *err;
    size_t errlen;
    const char *buf, *end, *p;
    int line;
} xdoc;

typedef struct xattr {
    char *qname;
    char *value;
} xattr;

__attribute__((format(printf, 2, 3))) static int fail(xdoc *d, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(d->err, d->errlen, "line %d: %s", d->line, what);
    return -1;
}

static void doc_free(xdoc *d)
{
    for (int i = 0; i < d->n; i++) {
        ent_free(d->nodes[i].local);
        ent_free(d->nodes[i].ns);
        ent_free(d->nodes[i].qname);
        http_xml_buf_free(&d->nodes[i].text);
        ent_free(d->nodes[i].type);
        ent_free(d->nodes[i].type_ns);
    }
    ent_free(d->nodes);
    for (int i = 0; i < d->nns; i++) {
        ent_free(d->ns[i].prefix);
        ent_free(d->ns[i].uri);
    }
    ent_free(d->ns);
    ent_free(d);
}

static char *dup_n(const char *s, size_t n)
{
    char *c = ent_malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = 0;
    }
    return c;
}

/* ---- UTF-8 ---- */

static size_t utf8_put(unsigned cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* XML 1.0 Char: tab, newline, return and everything from space up, minus surrogates and FFFE/FFFF. */
static bool xml_char(unsigned cp)
{
    return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp < 0xd800) || (cp >= 0xe000 && cp < 0xfffe) ||
           (cp >= 0x10000 && cp <= 0x10ffff);
}

/* ---- scanning ---- */

static bool at(const xdoc *d, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(d->end - d->p) >= n && !memcmp(d->p, s, n);
}

static void advance(xdoc *d, size_t n)
{
    for (size_t i = 0; i < n && d->p < d->end; i++, d->p++)
        if (*d->p == '\n')
            d->line++;
}

static void skip_ws(xdoc *d)
{
    while (d->p < d->end && (*d->p == ' ' || *d->p == '\t' || *d->p == '\r' || *d->p == '\n'))
        advance(d, 1);
}

/* Advances past the next occurrence of s; -1 (with what in the error) if none. */
static int skip_past(xdoc *d, const char *s, const char *what)
{
    size_t n = strlen(s);
    while ((size_t)(d->end - d->p) >= n) {
        if (!memcmp(d->p, s, n)) {
            advance(d, n);
            return 0;
        }
        advance(d, 1);
    }
    return fail(d, "%s is not closed (no '%s')", what, s);
}

static bool name_start(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}

static bool name_char(unsigned char c)
{
    return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':';
}

/* A (qualified) name at p: malloc'd, or NULL after fail(). */
static char *read_name(xdoc *d, const char *what)
{
    const char *s = d->p;
    if (d->p >= d->end || !name_start((unsigned char)*d->p)) {
        fail(d, "expected %s", what);
        return NULL;
    }
    while (d->p < d->end && name_char((unsigned char)*d->p))
        d->p++;
    char *n = dup_n(s, (size_t)(d->p - s));
    if (!n)
        fail(d, "out of memory");
    return n;
}

/* Decodes one reference at p ('&' ... ';') onto out; returns bytes written or -1. */
static int read_reference(xdoc *d, char out[4])
{
    static const struct {
        const char *name;
        char c;
    } predefined[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++)
        if (at(d, predefined[i].name)) {
            advance(d, strlen(predefined[i].name));
            out[0] = predefined[i].c;
            return 1;
        }
    if (at(d, "&#")) {
        advance(d, 2);
        int base = 10;
        if (d->p < d->end && *d->p == 'x') {
            base = 16;
            advance(d, 1);
        }
        unsigned long cp = 0;
        int digits = 0;
        while (d->p < d->end && *d->p != ';') {
            char c = *d->p;
            int v = c >= '0' && c <= '9' ? c - '0'
                    : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                           : -1;
            if (v < 0 || ++digits > 8)
                return fail(d, "malformed character reference");
            cp = cp * (unsigned long)base + (unsigned long)v;
            advance(d, 1);
        }
        if (d->p >= d->end || !digits || !xml_char((unsigned)cp))
            return fail(d, "malformed character reference");
        advance(d, 1);
        return (int)utf8_put((unsigned)cp, out);
    }
    const char *semi = memchr(d->p, ';', (size_t)(d->end - d->p) < 32 ? (size_t)(d->end - d->p) : 32);
    return fail(d, "unknown entity '%.*s' (only &lt; &gt; &amp; &quot; &apos; and character references)",
                semi ? (int)(semi - d->p + 1) : 8, d->p);
}

static int text_append(xdoc *d, http_xml_buf *b, const char *s, size_t n)
{
    http_xml_rawn(b, s, n);
    return b->oom ? fail(d, "out of memory") : 0;
}

/* Makes room for one more element in *v, which holds n of *cap; 0 or -1. */
static int grow(xdoc *d, void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *t = ent_realloc(*v, c * size);
    if (!t)
        return fail(d, "out of memory");
    *v = t;
    *cap = c;
    return 0;
}

/* An attribute value between quotes, references decoded. */
static char *read_attr_value(xdoc *d)
{
    if (d->p >= d->end || (*d->p != '"' && *d->p != '\'')) {
        fail(d, "an attribute value must be quoted");
        return NULL;
    }
    char q = *d->p;
    advance(d, 1);
    http_xml_buf tmp;
    http_xml_buf_init(&tmp);
    while (d->p < d->end && *d->p != q) {
        char out[4];
        int n;
        if (*d->p == '<') {
            fail(d, "'<' inside an attribute value");
            break;
        }
        if (*d->p == '&') {
            if ((n = read_reference(d, out)) < 0 || text_append(d, &tmp, out, (size_t)n))
                break;
            continue;
        }
        if (text_append(d, &tmp, d->p, 1))
            break;
        advance(d, 1);
    }
    if (d->p < d->end && *d->p == q) {
        advance(d, 1);
        char *v = http_xml_take(&tmp, NULL);
        if (!v)
            fail(d, "out of memory");
        return v;
    }
    if (d->p >= d->end)
        fail(d, "an attribute value is not closed");
    http_xml_buf_free(&tmp);
    return NULL;
}

/* ---- namespaces ---- */

static const char *ns_lookup(const xdoc *d, const char *prefix, size_t n)
{
    if (n == 3 && !memcmp(prefix, "xml", 3))
        return XML_NS_XML;
    for (int i = d->nns - 1; i >= 0; i--)
        if (strlen(d->ns[i].prefix) == n && !memcmp(d->ns[i].prefix, prefix, n))
            return d->ns[i].uri;
    return NULL;
}

static int ns_push(xdoc *d, const char *prefix, const char *uri, int depth)
{
    if (grow(d, (void **)&d->ns, &d->cap_ns, (size_t)d->nns, sizeof *d->ns))
        return -1;
    xns *x = &d->ns[d->nns];
    x->prefix = dup_n(prefix, strlen(prefix));
    x->uri = dup_n(uri, strlen(uri));
    x->depth = depth;
    if (!x->prefix || !x->uri) {
        ent_free(x->prefix);
        ent_free(x->uri);
        return fail(d, "out of memory");
    }
    d->nns++;
    return 0;
}

static void ns_pop(xdoc *d, int depth)
{
    while (d->nns && d->ns[d->nns - 1].depth >= depth) {
        d->nns--;
        ent_free(d->ns[d->nns].prefix);
        ent_free(d->ns[d->nns].uri);
    }
}

/* Splits qname at its colon and resolves the prefix (the default namespace
 * applies to elements only). */
static int resolve(xdoc *d, const char *qname, bool element, char **local, char **ns)
{
    const char *colon = strchr(qname, ':');
    const char *uri;
    if (colon) {
        if (colon == qname || !colon[1] || strchr(colon + 1, ':'))
            return fail(d, "malformed name '%s'", qname);
        uri = ns_lookup(d, qname, (size_t)(colon - qname));
        if (!uri)
            return fail(d, "the prefix of '%s' is not declared", qname);
    } else {
        uri = element ? ns_lookup(d, "", 0) : NULL;
    }
    const char *l = colon ? colon + 1 : qname;
    *local = dup_n(l, strlen(l));
    *ns = uri ? dup_n(uri, strlen(uri)) : NULL;
    if (!*local || (uri && !*ns)) {
        /* the caller frees neither on failure */
        ent_free(*local);
        ent_free(*ns);
        *local = *ns = NULL;
        return fail(d, "out of memory");
    }
    return 0;
}

/* ---- elements ---- */

static int new_node(xdoc *d, int parent)
{
    if (d->n >= HTTP_XML_ELEMENTS_MAX)
        return fail(d, "more than %d elements", HTTP_XML_ELEMENTS_MAX);
    if (grow(d, (void **)&d->nodes, &d->cap, (size_t)d->n, sizeof *d->nodes))
        return -1;
    xnode *nd = &d->nodes[d->n];
    memset(nd, 0, sizeof *nd);
    nd->parent = parent;
    nd->first = nd->last = nd->next = -1;
    nd->line = d->line;
    if (parent >= 0) {
        xnode *p = &d->nodes[parent];
        if (p->last >= 0)
            d->nodes[p->last].next = d->n;
        else
            p->first = d->n;
        p->last = d->n;
    }
    return d->n++;
}

static void free_attrs(xattr *a, int n)
{
    for (int i = 0; i < n; i++) {
        ent_free(a[i].qname);
        ent_free(a[i].value);
    }
}

/* The namespace declarations, then the element's name and its xsi:type. */
static int apply_attrs(xdoc *d, xnode *nd, xattr *a, int na, int depth)
{
    for (int i = 0; i < na; i++) {
        for (int k = 0; k < i; k++)
            if (!strcmp(a[i].qname, a[k].qname))
                return fail(d, "attribute '%s' is given twice", a[i].qname);
        if (!strcmp(a[i].qname, "xmlns")) {
            if (ns_push(d, "", a[i].value, depth))
                return -1;
        } else if (!strncmp(a[i].qname, "xmlns:", 6)) {
            if (!a[i].qname[6] || !*a[i].value)
                return fail(d, "malformed namespace declaration '%s'", a[i].qname);
            if (ns_push(d, a[i].qname + 6, a[i].value, depth))
                return -1;
        }
    }
    if (resolve(d, nd->qname, true, &nd->local, &nd->ns))
        return -1;
    for (int i = 0; i < na; i++) {
        if (!strncmp(a[i].qname, "xmlns", 5) && (!a[i].qname[5] || a[i].qname[5] == ':'))
            continue;
        char *local, *ns;
        if (resolve(d, a[i].qname, false, &local, &ns))
            return -1;
        bool is_type = ns && !strcmp(ns, HTTP_XML_NS_XSI) && !strcmp(local, "type");
        ent_free(local);
        ent_free(ns);
        if (!is_type)
            continue;
        const char *v = a[i].value, *colon = strchr(v, ':');
        if (colon) {
            const char *uri = ns_lookup(d, v, (size_t)(colon - v));
            if (!uri)
                return fail(d, "the prefix of the type '%s' is not declared", v);
            nd->type_ns = dup_n(uri, strlen(uri));
            nd->type = dup_n(colon + 1, strlen(colon + 1));
        } else {
            nd->type = dup_n(v, strlen(v));
        }
        if (!nd->type || (colon && !nd->type_ns))
            return fail(d, "out of memory");
    }
    return 0;
}

/* A start tag at p ('<' name ...). *self_closing tells whether it ended with "/>". */
static int read_start_tag(xdoc *d, int parent, int depth, bool *self_closing)
{
    advance(d, 1);
    if (depth > HTTP_XML_DEPTH_MAX)
        return fail(d, "elements nest deeper than %d", HTTP_XML_DEPTH_MAX);
    int idx = new_node(d, parent);
    if (idx < 0)
        return -1;
    char *qname = read_name(d, "an element name");
    if (!qname)
        return -1;
    d->nodes[idx].qname = qname;
    xattr attrs[HTTP_XML_ATTRS_MAX];
    int na = 0, rc = -1;
    for (;;) {
        const char *before = d->p;
        skip_ws(d);
        if (at(d, "/>") || at(d, ">")) {
            *self_closing = at(d, "/>");
            advance(d, *self_closing ? 2 : 1);
            break;
        }
        if (d->p == before) {
            fail(d, "expected an attribute, '>' or '/>' in <%s>", qname);
            goto out;
        }
        if (na == HTTP_XML_ATTRS_MAX) {
            fail(d, "more than %d attributes on <%s>", HTTP_XML_ATTRS_MAX, qname);
            goto out;
        }
        char *aname = read_name(d, "an attribute name");
        if (!aname)
            goto out;
        skip_ws(d);
        if (d->p >= d->end || *d->p != '=') {
            fail(d, "attribute '%s' has no value", aname);
            ent_free(aname);
            goto out;
        }
        advance(d, 1);
        skip_ws(d);
        char *value = read_attr_value(d);
        if (!value) {
            ent_free(aname);
            goto out;
        }
        attrs[na].qname = aname;
        attrs[na].value = value;
        na++;
    }
    rc = apply_attrs(d, &d->nodes[idx], attrs, na, depth) ? -1 : idx;
out:
    free_attrs(attrs, na);
    return rc;
}

/* Comments and processing instructions, where markup may stand. 1 if one was skipped. */
static int skip_misc(xdoc *d)
{
    if (at(d, "<!--"))
        return skip_past(d, "-->", "a comment") ? -1 : 1;
    if (at(d, "<?"))
        return skip_past(d, "?>", "a processing instruction") ? -1 : 1;
    if (at(d, "<!DOCTYPE") || at(d, "<!doctype"))
        return fail(d, "document type declarations are not accepted");
    return 0;
}

static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return false;
    return true;
}

static int parse_doc(xdoc *d)
{
    if (at(d, "\xef\xbb\xbf"))
        advance(d, 3);
    /* prolog */
    for (;;) {
        skip_ws(d);
        int r = skip_misc(d);
        if (r < 0)
            return -1;
        if (!r)
            break;
    }
    if (!at(d, "<") || at(d, "</") || at(d, "<!"))
        return fail(d, "the body is not an XML document (expected the root element)");
    int cur = -1, depth = 0;
    do {
        if (at(d, "</")) {
            advance(d, 2);
            char *name = read_name(d, "an end tag name");
            if (!name)
                return -1;
            skip_ws(d);
            bool match = !strcmp(name, d->nodes[cur].qname);
            if (!match || !at(d, ">")) {
                fail(d, match ? "end tag </%s> is not closed" : "end tag </%s> does not close <%s>", name,
                     d->nodes[cur].qname);
                ent_free(name);
                return -1;
            }
            ent_free(name);
            advance(d, 1);
            if (d->nodes[cur].first >= 0 && !blank(d->nodes[cur].text.data))
                return fail(d, "<%s> mixes text and elements", d->nodes[cur].qname);
            ns_pop(d, depth);
            depth--;
            cur = d->nodes[cur].parent;
        } else if (at(d, "<![CDATA[")) {
            advance(d, 9);
            const char *s = d->p;
            if (skip_past(d, "]]>", "a CDATA section") || text_append(d, &d->nodes[cur].text, s, (size_t)(d->p - 3 - s)))
                return -1;
        } else if (at(d, "<!--") || at(d, "<?") || at(d, "<!")) {
            int r = skip_misc(d);
            if (r <= 0)
                return r < 0 ? -1 : fail(d, "unexpected markup '<!'");
        } else if (at(d, "<")) {
            bool self_closing = false;
            int idx = read_start_tag(d, cur, depth + 1, &self_closing);
            if (idx < 0)
                return -1;
            if (self_closing)
                ns_pop(d, depth + 1);
            else
                cur = idx, depth++;
        } else {
            /* character data up to the next markup */
            while (d->p < d->end && *d->p != '<') {
                if (*d->p == '&') {
                    char out[4];
                    int n = read_reference(d, out);
                    if (n < 0 || text_append(d, &d->nodes[cur].text, out, (size_t)n))
                        return -1;
                    continue;
                }
                const char *s = d->p;
                while (d->p < d->end && *d->p != '<' && *d->p != '&')
                    advance(d, 1);
                if (text_append(d, &d->nodes[cur].text, s, (size_t)(d->p - s)))
                    return -1;
            }
            if (d->p >= d->end)
                return fail(d, "<%s> is not closed", d->nodes[cur].qname);
        }
    } while (cur >= 0);
    /* epilogue */
    for (;;) {
        skip_ws(d);
        if (d->p >= d->end)
            return 0;
        int r = skip_misc(d);
        if (r < 0)
            return -1;
        if (!r)
            return fail(d, "content after the root element");
    }
}

/* ---- flattening ---- */

typedef struct flat {
    http_xml_prop *v;
    size_t n, cap;
    char **owned; /* paths built here */
    size_t nowned, cap_owned;
} flat;

static int child_named(const xdoc *d, int parent, const char *local)
{
    for (int c = d->nodes[parent].first; c >= 0; c = d->nodes[c].next)
        if (!strcmp(d->nodes[c].local, local))
            return c;
    return -1;
}

static http_xml_prop *add_prop(xdoc *d, flat *f)
{
    if (grow(d, (void **)&f->v, &f->cap, f->n, sizeof *f->v))
        return NULL;
    http_xml_prop *p = &f->v[f->n++];
    memset(p, 0, sizeof *p);
    return p;
}

static char *own_path(xdoc *d, flat *f, const char *prefix, const char *local)
{
    if (grow(d, (void **)&f->owned, &f->cap_owned, f->nowned, sizeof *f->owned))
        return NULL;
    size_t n = (prefix ? strlen(prefix) + 1 : 0) + strlen(local) + 1;
    char *s = ent_malloc(n);
    if (!s) {
        fail(d, "out of memory");
        return NULL;
    }
    snprintf(s, n, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", local);
    f->owned[f->nowned++] = s;
    return s;
}

static const char *text_of(const xnode *nd) { return nd->text.data ? nd->text.data : ""; }

static int flatten(xdoc *d, flat *f, int parent, const char *prefix)
{
    for (int c = d->nodes[parent].first; c >= 0; c = d->nodes[c].next) {
        xnode *nd = &d->nodes[c];
        if (!strcmp(nd->local, KEY_VALUE_ELEMENT)) {
            int k = child_named(d, c, "Key"), v = child_named(d, c, "Value");
            d->line = nd->line;
            if (k < 0 || v < 0)
                return fail(d, "<%s> in %s needs a <Key> and a <Value>", nd->qname, prefix ? prefix : "the description");
            if (d->nodes[v].first >= 0)
                return fail(d, "the <Value> of key '%s' holds elements, not a value", text_of(&d->nodes[k]));
            http_xml_prop *p = add_prop(d, f);
            if (!p)
                return -1;
            p->path = prefix ? prefix : "";
            p->key = text_of(&d->nodes[k]);
            p->value = text_of(&d->nodes[v]);
            p->type = d->nodes[v].type;
            p->type_ns = d->nodes[v].type_ns;
            p->line = nd->line;
            continue;
        }
        const char *path = own_path(d, f, prefix, nd->local);
        http_xml_prop *p = path ? add_prop(d, f) : NULL;
        if (!p)
            return -1;
        p->path = path;
        p->value = nd->first >= 0 ? NULL : text_of(nd);
        p->type = nd->type;
        p->type_ns = nd->type_ns;
        p->line = nd->line;
        if (nd->first >= 0 && flatten(d, f, c, path))
            return -1;
    }
    return 0;
}

/* The entry is kept with its tree and its paths. */
typedef struct entry_doc {
    xdoc *doc;
    char **owned;
    size_t nowned;
} entry_doc;

static void entry_doc_free(entry_doc *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nowned; i++)
        ent_free(e->owned[i]);
    ent_free(e->owned);
    doc_free(e->doc);
    ent_free(e);
}

int http_xml_parse_entry(const char *body, size_t len, http_xml_entry *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    xdoc *d = ent_calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->err = err;
    d->errlen = errlen;
    d->buf = d->p = body;
    d->end = body + len;
    d->line = 1;
    /* UTF-8 and XML characters only, before anything reads it */
    for (const unsigned char *p = (const unsigned char *)body, *e = p + len; p < e;) {
        size_t n = http_xml_utf8_seq(p, e);
        if (!n || (n == 1 && !xml_char(*p))) {
            int line = 1;
            for (const char *q = body; q < (const char *)p; q++)
                line += *q == '\n';
            snprintf(err, errlen, "line %d: the body is not UTF-8 XML text (byte 0x%02x at offset %zu)", line, *p,
                     (size_t)(p - (const unsigned char *)body));
            doc_free(d);
            return -1;
        }
        p += n;
    }
    flat f = {0};
    int rc = parse_doc(d);
    int content = -1, desc = -1;
    if (!rc) {
        d->line = 1;
        if (strcmp(d->nodes[0].local, "entry"))
            rc = fail(d, "the body must be an Atom <entry>, not <%s>", d->nodes[0].qname);
        else if ((content = child_named(d, 0, "content")) < 0)
            rc = fail(d, "the <entry> has no <content>");
        else if ((desc = d->nodes[content].first) < 0)
            rc = fail(d, "the <content> holds no description (such as <QueueDescription>)");
        else if (d->nodes[desc].next >= 0)
            rc = fail(d, "the <content> holds more than one element (<%s> and <%s>)", d->nodes[desc].qname,
                      d->nodes[d->nodes[desc].next].qname);
    }
    if (!rc)
        rc = flatten(d, &f, desc, NULL);
    entry_doc *keep = rc ? NULL : ent_calloc(1, sizeof *keep);
    if (!rc && !keep)
        rc = fail(d, "out of memory");
    if (rc) {
        for (size_t i = 0; i < f.nowned; i++)
            ent_free(f.owned[i]);
        ent_free(f.owned);
        ent_free(f.v);
        doc_free(d);
        return -1;
    }
    keep->doc = d;
    keep->owned = f.owned;
    keep->nowned = f.nowned;
    out->description = d->nodes[desc].local;
    out->props = f.v;
    out->n = f.n;
    out->doc = keep;
    return 0;
}

void http_xml_entry_free(http_xml_entry *e)
{
    if (!e)
        return;
    ent_free(e->props);
    entry_doc_free(e->doc);
    memset(e, 0, sizeof *e);
}
