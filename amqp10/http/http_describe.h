/* Queues, topics, subscriptions and rules written as the ATOM API's XML
 * (wire-protocol §9.5): the descriptions, the entries around them and the
 * feeds that list them. Pure: the caller gives the rows and the URL base. */
#ifndef HTTP_DESCRIBE_H
#define HTTP_DESCRIBE_H

#include <stdbool.h>
#include <stdint.h>

#include "http_xml.h"
#include "store_admin.h"
#include "store_rules.h"

#define HTTP_DESCRIBE_API_VERSION "2021-05"
/* The SQL compatibility level Service Bus reports for filters and actions. */
#define HTTP_DESCRIBE_COMPATIBILITY_LEVEL 20
/* The namespace name entries carry as their author (Microsoft's emulator's). */
#define HTTP_DESCRIBE_NAMESPACE "sbemulatorns"

/* base + "/" + path (percent-encoded) + "?" [query "&"] "api-version=2021-05".
 * base is "http(s)://host[:port]". */
void http_describe_url(http_xml_buf *b, const char *base, const char *path, const char *query);

/* The description elements. host names ForwardTo targets (sb://host/target).
 * max_message_kb: --max-message-size in KB, which Service Bus reports as
 * MaxMessageSizeInKilobytes (256 on Standard); the Java admin client sends a
 * topic's value back on every update, 0 when it was never read. */
void http_describe_queue(http_xml_buf *b, const store_admin_queue *q, const char *host, int64_t max_message_kb);
void http_describe_topic(http_xml_buf *b, const store_admin_topic *t, int64_t max_message_kb);
void http_describe_subscription(http_xml_buf *b, const store_admin_subscription *s, const char *host);
/* 0, or -1 with err when a JSON column does not read (a row written with plain SQL). */
int http_describe_rule(http_xml_buf *b, const store_rule *r, char *err, size_t errlen);

/* An <entry> for the entity at path (its id: JS takes the names from the
 * id's path, so subscriptions are <topic>/Subscriptions/<name> and rules
 * .../Rules/<name>); title is its name (.NET and Python read it there). rt
 * gives the published and updated times (NULL: the epoch). Close with
 * http_xml_entry_end. */
void http_describe_entry_begin(http_xml_buf *b, const char *base, const char *path, const char *title,
                               const store_admin_runtime *rt, bool top_level);
/* A <feed> of the page [skip, skip + top) of the list at path; more: there
 * are entries after it (then the next link). Close with http_xml_feed_end. */
void http_describe_feed_begin(http_xml_buf *b, const char *base, const char *path, const char *title, int64_t skip,
                              int64_t top, bool more, int64_t now_ms);

#endif
