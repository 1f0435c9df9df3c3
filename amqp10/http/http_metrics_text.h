/* Prometheus' text exposition format, version 0.0.4 (what every Prometheus
 * scrapes by default), written into an http_xml_buf: the writer behind
 * GET /metrics (http_metrics.c says what is exposed). No I/O, no state: it
 * is unit-tested on its own (test_http_metrics_text).
 *
 * A family is written once: its # HELP and # TYPE lines, then all its
 * samples, before the next family begins (Prometheus refuses a family that
 * comes back later). Names are ours and valid by construction
 * ([a-zA-Z_:][a-zA-Z0-9_:]*); label values may be anything a client sent (a
 * dead-letter reason, an entity name) and are escaped as the format says:
 * backslash, double quote and newline; bytes that are not UTF-8 become U+FFFD,
 * since the format is UTF-8. */
#ifndef HTTP_METRICS_TEXT_H
#define HTTP_METRICS_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "http_xml_write.h"

/* The Content-Type of an answer in this format. */
#define HTTP_MTEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef enum http_mtext_type { HTTP_MTEXT_COUNTER, HTTP_MTEXT_GAUGE, HTTP_MTEXT_HISTOGRAM } http_mtext_type;

/* One label of a sample; both strings borrowed for the call. */
typedef struct http_mtext_label {
    const char *name, *value;
} http_mtext_label;

/* # HELP name help (help escaped: backslash and newline) and # TYPE name type. */
void http_mtext_family(http_xml_buf *b, const char *name, http_mtext_type type, const char *help);

/* One sample line: name{labels} value. An integer is written exactly (a
 * counter past 2^53 stays exact in the text; Prometheus reads it as a float). */
void http_mtext_u64(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                    uint64_t value);
void http_mtext_i64(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                    int64_t value);
/* A float, in the shortest text that reads back as the same double; NaN and
 * the infinities as Prometheus spells them (NaN, +Inf, -Inf). */
void http_mtext_double(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                       double value);

/* A histogram's samples under its family name: name_bucket{labels,le="b"}
 * for each of the nbounds upper bounds (ascending) and for +Inf, cumulative;
 * then name_sum and name_count. counts[i] is how many observations fell in
 * bucket i alone (i == nbounds: above the last bound), as a histogram is
 * kept; the running total is made here. */
void http_mtext_histogram(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                          const double *bounds, size_t nbounds, const uint64_t *counts, double sum);

/* v in the shortest form that reads back as v (what le="" and float samples
 * carry): "0.005", "2.5", "1e-05", "+Inf". out holds at least 32 bytes. */
void http_mtext_format_double(double v, char *out, size_t outlen);

#endif
