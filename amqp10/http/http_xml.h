/* The XML of the ATOM management API (wire-protocol §9), read and written
 * with no I/O, so that cmocka drives it directly (tests/unit/test_http_xml.c).
 *
 * Reading. A PUT body is an Atom <entry> whose <content> holds one
 * description (QueueDescription, TopicDescription, SubscriptionDescription,
 * RuleDescription). http_xml_parse_entry reads it into a flat list of
 * properties, in document order, so that the resource handlers deal with
 * names and texts and never with XML:
 *
 *   <LockDuration>PT1M</LockDuration>           path "LockDuration", value "PT1M"
 *   <Filter i:type="SqlFilter">                 path "Filter", type "SqlFilter", value NULL
 *     <SqlExpression>a=1</SqlExpression>        path "Filter.SqlExpression", value "a=1"
 *     <Parameters><KeyValueOfstringanyType>     path "Filter.Parameters", key "@p",
 *       <Key>@p</Key><Value i:type="d6p1:int"   value "5", type "int" (type_ns: XMLSchema)
 *       xmlns:d6p1="...XMLSchema">5</Value>
 *
 * An element holding elements gives a property with value NULL, then its
 * children; an empty element gives value "". Matching is by local name: the
 * SDKs agree on names but not on prefixes (JS writes p4:type and l28:double,
 * Python ns0:/xsi:, .NET i:). Namespaces are resolved all the same, so an
 * undeclared prefix is an error, and xsi:type is found by its namespace.
 *
 * The parser is small and strict: UTF-8 only, no DTD (no entity expansion),
 * the five predefined entities and character references, CDATA, comments and
 * processing instructions skipped, bounded depth, elements and attributes.
 * Every refusal says what and where ("line 3: end tag </Foo> does not close
 * <Bar>").
 *
 * Writing. http_xml_buf appends escaped text; the envelope helpers write the
 * <entry>, the <feed> (with the self and next links that JS and Python page
 * by) and the Service Bus error body <Error><Code/><Detail/></Error>. */
#ifndef HTTP_XML_H
#define HTTP_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- limits (not Service Bus ones: a description is a few KB) ---- */

#define HTTP_XML_DEPTH_MAX 32      /* nested elements */
#define HTTP_XML_ELEMENTS_MAX 4096 /* elements in one document */
#define HTTP_XML_ATTRS_MAX 32      /* attributes on one element, xmlns ones included */

/* ---- namespaces the API uses ---- */

#define HTTP_XML_NS_ATOM "http://www.w3.org/2005/Atom"
#define HTTP_XML_NS_SB "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"
#define HTTP_XML_NS_XSI "http://www.w3.org/2001/XMLSchema-instance"
#define HTTP_XML_NS_XSD "http://www.w3.org/2001/XMLSchema"
/* CountDetails' children (JS reads them through the prefix CountDetails declares). */
#define HTTP_XML_NS_SB_COUNTS "http://schemas.microsoft.com/netservices/2011/06/servicebus"
/* .NET's duration and guid values (XmlObjectConvertor). */
#define HTTP_XML_NS_SERIALIZATION "http://schemas.microsoft.com/2003/10/Serialization/"

/* ---- reading ---- */

typedef struct http_xml_prop {
    const char *path;    /* element local names from the description down, joined with '.' */
    const char *key;     /* a KeyValueOfstringanyType item: its <Key>; else NULL */
    const char *value;   /* text, entities decoded; NULL for an element that holds elements */
    const char *type;    /* the xsi:type, without its prefix ("SqlFilter", "int"); NULL if none */
    const char *type_ns; /* the namespace of the type's prefix; NULL if it has none */
    int line;            /* where the element starts, for error texts */
} http_xml_prop;

/* A parsed entry. Owns every string its props point to. */
typedef struct http_xml_entry {
    const char *description; /* local name of the element inside <content> */
    http_xml_prop *props;
    size_t n;
    void *doc; /* the parsed document (private) */
} http_xml_entry;

/* Returns 0, or -1 with the reason in err (then *out holds nothing to free). */
int http_xml_parse_entry(const char *body, size_t len, http_xml_entry *out, char *err, size_t errlen);
void http_xml_entry_free(http_xml_entry *e);

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
