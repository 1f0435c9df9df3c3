/* See http_metrics_text.h. */
#include "http_metrics_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Unicode replacement character, in UTF-8: what a byte that is not UTF-8 becomes. */
#define MTEXT_REPLACEMENT "\xEF\xBF\xBD"
/* Floats below 10^this are written without an exponent (Go's shortest 'g'). */
#define MTEXT_PLAIN_EXPONENT_MAX 6

/* How many bytes the well-formed UTF-8 sequence at s (n bytes left) has, or
 * 0 when it is not one (RFC 3629: no overlongs, no surrogates, nothing past
 * U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* s with backslash and newline escaped, and double quote too when quote is
 * set (label values; HELP text leaves quotes alone). */
static void escaped(http_xml_buf *b, const char *s, int quote)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    size_t run = 0; /* bytes that go out as they are, from p */
    for (size_t i = 0; i < n;) {
        const char *esc = NULL;
        size_t len = 1;
        if (p[i] == '\\')
            esc = "\\\\";
        else if (p[i] == '\n')
            esc = "\\n";
        else if (p[i] == '"' && quote)
            esc = "\\\"";
        else if (!(len = utf8_sequence(p + i, n - i))) {
            esc = MTEXT_REPLACEMENT;
            len = 1;
        }
        if (esc) {
            http_xml_rawn(b, (const char *)p + i - run, run);
            http_xml_raw(b, esc);
            run = 0;
        } else {
            run += len;
        }
        i += len;
    }
    http_xml_rawn(b, (const char *)p + n - run, run);
}

void http_mtext_family(http_xml_buf *b, const char *name, http_mtext_type type, const char *help)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    http_xml_rawf(b, "# HELP %s ", name);
    escaped(b, help, 0);
    http_xml_rawf(b, "\n# TYPE %s %s\n", name, types[type]);
}

/* name{a="x",b="y"[,le="..."]}, then a space: everything before the value. */
static void sample_head(http_xml_buf *b, const char *name, const char *suffix, const http_mtext_label *labels,
                        size_t nlabels, const char *le)
{
    http_xml_raw(b, name);
    http_xml_raw(b, suffix);
    if (nlabels || le) {
        http_xml_raw(b, "{");
        for (size_t i = 0; i < nlabels; i++) {
            http_xml_rawf(b, "%s%s=\"", i ? "," : "", labels[i].name);
            escaped(b, labels[i].value ? labels[i].value : "", 1);
            http_xml_raw(b, "\"");
        }
        if (le)
            http_xml_rawf(b, "%sle=\"%s\"", nlabels ? "," : "", le);
        http_xml_raw(b, "}");
    }
    http_xml_raw(b, " ");
}

void http_mtext_u64(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                    uint64_t value)
{
    sample_head(b, name, "", labels, nlabels, NULL);
    http_xml_rawf(b, "%llu\n", (unsigned long long)value);
}

void http_mtext_i64(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                    int64_t value)
{
    sample_head(b, name, "", labels, nlabels, NULL);
    http_xml_rawf(b, "%lld\n", (long long)value);
}

void http_mtext_format_double(double v, char *out, size_t outlen)
{
    if (isnan(v)) {
        snprintf(out, outlen, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(out, outlen, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    /* the fewest digits that read back exactly (0.005, not 0.0050000000000000001),
     * laid out as Go's FormatFloat(v, 'g', -1, 64) does, which is what the
     * Prometheus client libraries write: plain from 1e-4 up to 1e6, else
     * with an exponent (1000 is "1000", 1e-05 and 1e+06 have one) */
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(out, outlen, "%.*e", digits - 1, v);
        if (strtod(out, NULL) == v)
            break;
    }
    snprintf(out, outlen, "%.*e", digits - 1, v);
    int exp = atoi(strchr(out, 'e') + 1);
    if (exp < -4 || exp >= MTEXT_PLAIN_EXPONENT_MAX)
        return;
    int decimals = digits - 1 - exp;
    snprintf(out, outlen, "%.*f", decimals > 0 ? decimals : 0, v);
}

void http_mtext_double(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                       double value)
{
    char text[32];
    http_mtext_format_double(value, text, sizeof text);
    sample_head(b, name, "", labels, nlabels, NULL);
    http_xml_rawf(b, "%s\n", text);
}

void http_mtext_histogram(http_xml_buf *b, const char *name, const http_mtext_label *labels, size_t nlabels,
                          const double *bounds, size_t nbounds, const uint64_t *counts, double sum)
{
    uint64_t total = 0;
    char le[32];
    for (size_t i = 0; i <= nbounds; i++) {
        total += counts[i];
        if (i < nbounds)
            http_mtext_format_double(bounds[i], le, sizeof le);
        else
            snprintf(le, sizeof le, "+Inf");
        sample_head(b, name, "_bucket", labels, nlabels, le);
        http_xml_rawf(b, "%llu\n", (unsigned long long)total);
    }
    char text[32];
    http_mtext_format_double(sum, text, sizeof text);
    sample_head(b, name, "_sum", labels, nlabels, NULL);
    http_xml_rawf(b, "%s\n", text);
    sample_head(b, name, "_count", labels, nlabels, NULL);
    http_xml_rawf(b, "%llu\n", (unsigned long long)total);
}
