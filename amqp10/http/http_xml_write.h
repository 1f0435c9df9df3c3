/* The writing half of the ATOM API's XML (http_xml_write.c): an appending
 * buffer, escaping, the Atom entry and feed envelopes, the Service Bus error
 * body; and the namespaces both halves use. The reader (http_xml.h) builds
 * on this, never the other way. */
#ifndef HTTP_XML_WRITE_H
#define HTTP_XML_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- namespaces the API uses ---- */

#define HTTP_XML_NS_ATOM "http://www.w3.org/2005/Atom"
#define HTTP_XML_NS_SB "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"
#define HTTP_XML_NS_XSI "http://www.w3.org/2001/XMLSchema-instance"
#define HTTP_XML_NS_XSD "http://www.w3.org/2001/XMLSchema"
/* CountDetails' children (JS reads them through the prefix CountDetails declares). */
#define HTTP_XML_NS_SB_COUNTS "http://schemas.microsoft.com/netservices/2011/06/servicebus"
/* .NET's duration and guid values (XmlObjectConvertor). */
#define HTTP_XML_NS_SERIALIZATION "http://schemas.microsoft.com/2003/10/Serialization/"

/* ---- writing ---- */

/* An appending buffer. Out of memory is sticky: appends become no-ops and
 * http_xml_take answers NULL. */
typedef struct http_xml_buf {
    char *data;
    size_t len, cap;
    bool oom;
} http_xml_buf;

void http_xml_buf_init(http_xml_buf *b);
void http_xml_buf_free(http_xml_buf *b);
/* The text written so far (NUL-terminated, malloc'd; the buffer is emptied),
 * or NULL if memory ran out. */
char *http_xml_take(http_xml_buf *b, size_t *len);

void http_xml_raw(http_xml_buf *b, const char *s);
void http_xml_rawn(http_xml_buf *b, const char *s, size_t n);
__attribute__((format(printf, 2, 3))) void http_xml_rawf(http_xml_buf *b, const char *fmt, ...);
/* s escaped as element text (& < >; a return as &#xD; so that it survives
 * line-end normalisation); characters XML 1.0 cannot carry (controls other
 * than tab, newline, return) become U+FFFD. */
void http_xml_text(http_xml_buf *b, const char *s);
/* The same for an attribute value: quotes, tabs and newlines escaped too. */
void http_xml_attr(http_xml_buf *b, const char *s);
/* <name>escaped text</name> */
void http_xml_leaf(http_xml_buf *b, const char *name, const char *text);
void http_xml_leaf_i64(http_xml_buf *b, const char *name, int64_t v);
void http_xml_leaf_bool(http_xml_buf *b, const char *name, bool v);
/* ISO 8601 UTC with milliseconds, as .NET, JS and Python all parse it. */
void http_xml_leaf_time(http_xml_buf *b, const char *name, int64_t unix_ms);

/* What an entry says about itself. */
typedef struct http_xml_meta {
    const char *id;        /* the entity's URL (JS takes names from its path) */
    const char *title;     /* the entity's name (.NET and Python take it from here) */
    int64_t published_ms; /* created */
    int64_t updated_ms;
    const char *author;    /* the namespace */
} http_xml_meta;

/* <?xml ...?> (top level only), then <entry xmlns=Atom> with id, title,
 * published, updated, author, the self link, and <content type="application/xml">;
 * http_xml_entry_end closes content and entry. */
void http_xml_entry_begin(http_xml_buf *b, const http_xml_meta *m, bool top_level);
void http_xml_entry_end(http_xml_buf *b);
/* <feed> with its title, id (self_url), updated, the self link, and the next
 * link when next_url is not NULL (JS follows a feed only when it has both,
 * Python only when there are exactly two). Entries follow; then feed_end. */
void http_xml_feed_begin(http_xml_buf *b, const char *title, const char *self_url, const char *next_url,
                         int64_t updated_ms);
void http_xml_feed_end(http_xml_buf *b);
/* The Service Bus error body: <Error><Code>code</Code><Detail>detail</Detail></Error>. */
void http_xml_error(http_xml_buf *b, int code, const char *detail);

/* Appends s percent-encoded for a URL path or query (unreserved characters
 * and the ones listed in keep stay as they are). */
void http_xml_url_encode(http_xml_buf *b, const char *s, const char *keep);

/* Bytes of the valid UTF-8 sequence at p (end bounds it), or 0 when it is
 * not one: shared by the reader, which refuses such bytes, and the writer,
 * which replaces them. */
size_t http_xml_utf8_seq(const unsigned char *p, const unsigned char *end);

#endif
