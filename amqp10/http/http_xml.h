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
 * Writing is http_xml_write.h: http_xml_buf appends escaped text; the
 * envelope helpers write the <entry>, the <feed> (with the self and next
 * links that JS and Python page by) and the Service Bus error body
 * <Error><Code/><Detail/></Error>. */
#ifndef HTTP_XML_H
#define HTTP_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_xml_write.h"

/* ---- limits (not Service Bus ones: a description is a few KB) ---- */

#define HTTP_XML_DEPTH_MAX 32      /* nested elements */
#define HTTP_XML_ELEMENTS_MAX 4096 /* elements in one document */
#define HTTP_XML_ATTRS_MAX 32      /* attributes on one element, xmlns ones included */

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

#endif
