/* See http_xml_write.h: the writing half. http_xml_buf grows as text is appended
 * (the reader gathers its texts in one too); escaping turns what XML cannot
 * carry into U+FFFD; the envelopes are the Atom entry and feed and the
 * Service Bus error body. */
#include "http_xml_write.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_filter.h" /* ent_fv_format_time */

void http_xml_buf_init(http_xml_buf *b) { memset(b, 0, sizeof *b); }

void http_xml_buf_free(http_xml_buf *b)
{
    ent_free(b->data);
    memset(b, 0, sizeof *b);
}

char *http_xml_take(http_xml_buf *b, size_t *len)
{
    if (b->oom || !b->data) {
        bool oom = b->oom;
        http_xml_buf_free(b);
        if (oom)
            return NULL;
        char *empty = ent_calloc(1, 1);
        if (len)
            *len = 0;
        return empty;
    }
    char *d = b->data;
    if (len)
        *len = b->len;
    memset(b, 0, sizeof *b);
    return d;
}

void http_xml_rawn(http_xml_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *t = ent_realloc(b->data, cap);
        if (!t) {
            b->oom = true;
            return;
        }
        b->data = t;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void http_xml_raw(http_xml_buf *b, const char *s) { http_xml_rawn(b, s, strlen(s)); }

void http_xml_rawf(http_xml_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        http_xml_rawn(b, small, (size_t)n);
        return;
    }
    char *big = ent_malloc((size_t)n + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    http_xml_rawn(b, big, (size_t)n);
    ent_free(big);
}

/* Escapes s; quotes too when it goes into an attribute value. */
static void escape(http_xml_buf *b, const char *s, bool attr)
{
    const char *special = attr ? "&<>\"'" : "&<>";
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *end = p + strlen((const char *)p);
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && ((*p >= 0x20 && *p < 0x80) || (!attr && (*p == '\t' || *p == '\n'))) && !strchr(special, *p))
            p++;
        http_xml_rawn(b, (const char *)run, (size_t)(p - run));
        if (p >= end)
            break;
        switch (*p) {
        case '&': http_xml_raw(b, "&amp;"); p++; continue;
        case '<': http_xml_raw(b, "&lt;"); p++; continue;
        case '>': http_xml_raw(b, "&gt;"); p++; continue;
        case '"': http_xml_raw(b, "&quot;"); p++; continue;
        case '\'': http_xml_raw(b, "&apos;"); p++; continue;
        case '\t': http_xml_raw(b, "&#x9;"); p++; continue;
        case '\n': http_xml_raw(b, "&#xA;"); p++; continue;
        case '\r': http_xml_raw(b, "&#xD;"); p++; continue;
        default: break;
        }
        size_t n = *p >= 0x80 ? http_xml_utf8_seq(p, end) : 0;
        if (n) {
            http_xml_rawn(b, (const char *)p, n);
            p += n;
        } else {
            http_xml_raw(b, "\xef\xbf\xbd"); /* U+FFFD for what XML cannot carry */
            p++;
        }
    }
}

void http_xml_text(http_xml_buf *b, const char *s) { escape(b, s, false); }
void http_xml_attr(http_xml_buf *b, const char *s) { escape(b, s, true); }

void http_xml_leaf(http_xml_buf *b, const char *name, const char *text)
{
    http_xml_rawf(b, "<%s>", name);
    http_xml_text(b, text);
    http_xml_rawf(b, "</%s>", name);
}

void http_xml_leaf_i64(http_xml_buf *b, const char *name, int64_t v)
{
    http_xml_rawf(b, "<%s>%lld</%s>", name, (long long)v, name);
}

void http_xml_leaf_bool(http_xml_buf *b, const char *name, bool v)
{
    http_xml_rawf(b, "<%s>%s</%s>", name, v ? "true" : "false", name);
}

void http_xml_leaf_time(http_xml_buf *b, const char *name, int64_t unix_ms)
{
    char t[64];
    ent_fv_format_time(unix_ms, t, sizeof t);
    http_xml_leaf(b, name, t);
}

static void link_element(http_xml_buf *b, const char *rel, const char *href)
{
    http_xml_rawf(b, "<link rel=\"%s\" href=\"", rel);
    http_xml_attr(b, href);
    http_xml_raw(b, "\"/>");
}

void http_xml_entry_begin(http_xml_buf *b, const http_xml_meta *m, bool top_level)
{
    if (top_level)
        http_xml_raw(b, "<?xml version=\"1.0\" encoding=\"utf-8\"?>");
    http_xml_raw(b, "<entry xmlns=\"" HTTP_XML_NS_ATOM "\">");
    http_xml_leaf(b, "id", m->id);
    http_xml_raw(b, "<title type=\"text\">");
    http_xml_text(b, m->title);
    http_xml_raw(b, "</title>");
    http_xml_leaf_time(b, "published", m->published_ms);
    http_xml_leaf_time(b, "updated", m->updated_ms);
    http_xml_raw(b, "<author>");
    http_xml_leaf(b, "name", m->author);
    http_xml_raw(b, "</author>");
    link_element(b, "self", m->id);
    http_xml_raw(b, "<content type=\"application/xml\">");
}

void http_xml_entry_end(http_xml_buf *b) { http_xml_raw(b, "</content></entry>"); }

void http_xml_feed_begin(http_xml_buf *b, const char *title, const char *self_url, const char *next_url,
                         int64_t updated_ms)
{
    http_xml_raw(b, "<?xml version=\"1.0\" encoding=\"utf-8\"?><feed xmlns=\"" HTTP_XML_NS_ATOM "\">");
    http_xml_raw(b, "<title type=\"text\">");
    http_xml_text(b, title);
    http_xml_raw(b, "</title>");
    http_xml_leaf(b, "id", self_url);
    http_xml_leaf_time(b, "updated", updated_ms);
    link_element(b, "self", self_url);
    if (next_url)
        link_element(b, "next", next_url);
}

void http_xml_feed_end(http_xml_buf *b) { http_xml_raw(b, "</feed>"); }

void http_xml_error(http_xml_buf *b, int code, const char *detail)
{
    http_xml_rawf(b, "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>%d</Code>", code);
    http_xml_leaf(b, "Detail", detail);
    http_xml_raw(b, "</Error>");
}

void http_xml_url_encode(http_xml_buf *b, const char *s, const char *keep)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("-._~", c) ||
                     (keep && c && strchr(keep, c));
        if (plain) {
            http_xml_rawn(b, (const char *)p, 1);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            http_xml_rawn(b, e, 3);
        }
    }
}

/* ---- UTF-8 (the reader checks its input with it too) ---- */

size_t http_xml_utf8_seq(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    unsigned cp;
    if (c < 0x80)
        return c ? 1 : 0;
    if (c >= 0xc2 && c < 0xe0)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c < 0xf0)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c < 0xf5)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}
