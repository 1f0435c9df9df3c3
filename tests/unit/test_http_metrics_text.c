/* The Prometheus text exposition writer (amqp10/http/http_metrics_text.c):
 * HELP and TYPE lines, label values escaped as the format says (backslash,
 * double quote, newline; bytes that are not UTF-8 replaced), numbers exact,
 * and histograms cumulative with +Inf, _sum and _count. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ent_alloc.h"
#include "http_metrics_text.h"

static char *text_of(http_xml_buf *b)
{
    size_t len = 0;
    char *s = http_xml_take(b, &len);
    assert_non_null(s);
    assert_int_equal(strlen(s), len);
    return s;
}

static void family_lines(void **state)
{
    (void)state;
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_mtext_family(&b, "sbemu_messages_in_total", HTTP_MTEXT_COUNTER, "Messages \"in\": a\\b\nnext line");
    http_mtext_family(&b, "sbemu_connections", HTTP_MTEXT_GAUGE, "Open.");
    http_mtext_family(&b, "sbemu_store_commit_seconds", HTTP_MTEXT_HISTOGRAM, "Latency.");
    char *s = text_of(&b);
    /* HELP escapes backslash and newline only; quotes stay as they are */
    assert_string_equal(s, "# HELP sbemu_messages_in_total Messages \"in\": a\\\\b\\nnext line\n"
                           "# TYPE sbemu_messages_in_total counter\n"
                           "# HELP sbemu_connections Open.\n"
                           "# TYPE sbemu_connections gauge\n"
                           "# HELP sbemu_store_commit_seconds Latency.\n"
                           "# TYPE sbemu_store_commit_seconds histogram\n");
    ent_free(s);
}

static void label_values_escaped(void **state)
{
    (void)state;
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_mtext_label l[] = {{"entity", "q\\1"}, {"reason", "say \"no\"\nplease"}, {"kind", ""}};
    http_mtext_u64(&b, "x_total", l, 3, 7);
    char *s = text_of(&b);
    assert_string_equal(s, "x_total{entity=\"q\\\\1\",reason=\"say \\\"no\\\"\\nplease\",kind=\"\"} 7\n");
    ent_free(s);
}

static void label_values_utf8(void **state)
{
    (void)state;
    http_xml_buf b;
    http_xml_buf_init(&b);
    /* valid: é, 中, 😀 pass as they are; invalid: a lone continuation byte, a
     * truncated sequence at the end, an overlong '/', a surrogate */
    http_mtext_label ok[] = {{"r", "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"}};
    http_mtext_u64(&b, "a", ok, 1, 1);
    http_mtext_label bad[] = {{"r", "x\x80y\xC0\xAFz\xED\xA0\x80w\xE4\xB8"}};
    http_mtext_u64(&b, "b", bad, 1, 2);
    char *s = text_of(&b);
    assert_string_equal(s, "a{r=\"\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\"} 1\n"
                           "b{r=\"x\xEF\xBF\xBDy\xEF\xBF\xBD\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDw"
                           "\xEF\xBF\xBD\xEF\xBF\xBD\"} 2\n");
    ent_free(s);
}

static void numbers(void **state)
{
    (void)state;
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_mtext_u64(&b, "big", NULL, 0, UINT64_MAX);
    http_mtext_i64(&b, "neg", NULL, 0, -5);
    http_mtext_double(&b, "d", NULL, 0, 0.005);
    http_mtext_double(&b, "third", NULL, 0, 1.0 / 3);
    http_mtext_double(&b, "inf", NULL, 0, INFINITY);
    http_mtext_double(&b, "ninf", NULL, 0, -INFINITY);
    http_mtext_double(&b, "nan", NULL, 0, NAN);
    char *s = text_of(&b);
    assert_string_equal(s, "big 18446744073709551615\n"
                           "neg -5\n"
                           "d 0.005\n"
                           "third 0.3333333333333333\n"
                           "inf +Inf\n"
                           "ninf -Inf\n"
                           "nan NaN\n");
    ent_free(s);
    char out[32];
    http_mtext_format_double(2.5, out, sizeof out);
    assert_string_equal(out, "2.5");
    http_mtext_format_double(0.0005, out, sizeof out);
    assert_string_equal(out, "0.0005");
    http_mtext_format_double(1000, out, sizeof out);
    assert_string_equal(out, "1000");
    /* as Go's FormatFloat(v, 'g', -1, 64), which Prometheus' own clients write */
    http_mtext_format_double(1e-5, out, sizeof out);
    assert_string_equal(out, "1e-05");
    http_mtext_format_double(1e6, out, sizeof out);
    assert_string_equal(out, "1e+06");
    http_mtext_format_double(123456, out, sizeof out);
    assert_string_equal(out, "123456");
    http_mtext_format_double(0, out, sizeof out);
    assert_string_equal(out, "0");
    http_mtext_format_double(-0.25, out, sizeof out);
    assert_string_equal(out, "-0.25");
}

static void histogram_cumulative(void **state)
{
    (void)state;
    http_xml_buf b;
    http_xml_buf_init(&b);
    const double bounds[] = {0.001, 0.01, 0.1};
    /* per bucket: 2 under 1 ms, none in (1, 10] ms, 3 in (10, 100] ms, 1 above */
    const uint64_t counts[] = {2, 0, 3, 1};
    http_mtext_label l[] = {{"namespace", "ns"}};
    http_mtext_histogram(&b, "h_seconds", l, 1, bounds, 3, counts, 1.25);
    http_mtext_histogram(&b, "bare", NULL, 0, bounds, 0, counts, 0);
    char *s = text_of(&b);
    assert_string_equal(s, "h_seconds_bucket{namespace=\"ns\",le=\"0.001\"} 2\n"
                           "h_seconds_bucket{namespace=\"ns\",le=\"0.01\"} 2\n"
                           "h_seconds_bucket{namespace=\"ns\",le=\"0.1\"} 5\n"
                           "h_seconds_bucket{namespace=\"ns\",le=\"+Inf\"} 6\n"
                           "h_seconds_sum{namespace=\"ns\"} 1.25\n"
                           "h_seconds_count{namespace=\"ns\"} 6\n"
                           /* no bounds: +Inf only; no labels: le alone */
                           "bare_bucket{le=\"+Inf\"} 2\n"
                           "bare_sum 0\n"
                           "bare_count 2\n");
    ent_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_lines),   cmocka_unit_test(label_values_escaped), cmocka_unit_test(label_values_utf8),
        cmocka_unit_test(numbers),        cmocka_unit_test(histogram_cumulative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
