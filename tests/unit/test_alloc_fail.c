/* Out of memory at every allocation point of some real paths, one at a time
 * (ent_alloc_fail_after): each must end in a clean error (or, where the
 * allocation was optional, in the right result), never a crash, and leave
 * nothing of ours allocated (ent_alloc_live; ASan's leak check covers the
 * libraries' memory too). jansson is pointed at the wrapper so that its
 * allocations fail in turn as well. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "amqp_codec.h"
#include "amqp_message.h"
#include "emu_config_json.h"
#include "ent_alloc.h"
#include "ent_config.h"
#include "ent_filter.h"
#include "ent_log.h"
#include "http_xml.h"

/* One run of a path: returns 0 when it succeeded, -1 when it reported an
 * error; it frees whatever it made either way. */
typedef int (*path_fn)(void);

/* Runs fn once counting its allocations, then once per allocation point with
 * that one (and all after it) failing. A run may still succeed where the
 * allocation was optional (a shrinking realloc); most must report the error. */
static void fail_each_allocation(const char *name, path_fn fn)
{
    ent_alloc_fail_after(0);
    int rc = fn();
    long points = ent_alloc_count(), live = ent_alloc_live();
    ent_alloc_fail_reset();
    assert_int_equal(rc, 0);
    assert_int_equal(live, 0);
    if (points == 0)
        fail_msg("%s: no allocation to fail", name);
    long errors = 0;
    for (long i = 1; i <= points; i++) {
        ent_alloc_fail_after(i);
        rc = fn();
        long failed = ent_alloc_failed();
        live = ent_alloc_live();
        ent_alloc_fail_reset();
        assert_true(failed > 0);
        errors += rc != 0;
        if (live != 0)
            fail_msg("%s: allocation %ld of %ld failed and %ld block(s) leaked", name, i, points, live);
    }
    if (errors * 2 < points)
        fail_msg("%s: only %ld of %ld failed allocations were reported", name, errors, points);
}

/* ---- the filter compiler --------------------------------------------------- */

static int sql_filter(void)
{
    ent_filter_prop params[] = {{"@limit", {.type = ENT_FV_INT, .u.i = 4}},
                                {"@label", {.type = ENT_FV_STRING, .u.s = {"blue", 4}}}};
    const char *text = "color IN ('red', @label) AND qty > @limit OR sys.Label LIKE '%Bus%' "
                       "AND NOT EXISTS(missing) AND (price * 2.5 + 1) / 3 <> 7";
    ent_filter *f = NULL;
    ent_filter_error err;
    if (ent_filter_parse(text, strlen(text), params, 2, &f, &err)) {
        assert_null(f);
        assert_int_equal(err.kind, ENT_FILTER_ERR_NOMEM);
        assert_int_equal(ent_filter_error_status(&err), SB_ERR_INTERNAL);
        return -1;
    }
    ent_filter_free(f);
    return 0;
}

static int rule_action(void)
{
    const char *text = "SET sys.Label = 'seen'; SET n = n + 1; REMOVE old; SET s = 'a' + n";
    ent_filter_action *a = NULL;
    ent_filter_error err;
    if (ent_filter_action_parse(text, strlen(text), NULL, 0, &a, &err)) {
        assert_null(a);
        assert_int_equal(err.kind, ENT_FILTER_ERR_NOMEM);
        return -1;
    }
    ent_filter_action_free(a);
    return 0;
}

static int correlation_rule(void)
{
    ent_filter_prop props[] = {{"region", {.type = ENT_FV_STRING, .u.s = {"emea", 4}}},
                               {"tier", {.type = ENT_FV_INT, .u.i = 2}}};
    ent_filter_correlation spec = {.correlation_id = "c1", .label = "orders", .properties = props, .nproperties = 2};
    ent_filter *f = NULL;
    ent_filter_error err;
    if (ent_filter_new_correlation(&spec, &f, &err)) {
        assert_int_equal(err.kind, ENT_FILTER_ERR_NOMEM);
        return -1;
    }
    ent_filter_rule r;
    if (ent_filter_rule_init(&r, "by-region", f, NULL, &err)) /* takes f even on failure */
        return -1;
    ent_filter_rule_free(&r);
    return 0;
}

static void test_filter_compiler(void **state)
{
    (void)state;
    fail_each_allocation("SQL filter", sql_filter);
    fail_each_allocation("rule action", rule_action);
    fail_each_allocation("correlation filter", correlation_rule);
}

/* ---- the ATOM reader and writer ------------------------------------------- */

static int xml_entry(void)
{
    const char *body =
        "<entry xmlns=\"http://www.w3.org/2005/Atom\"><content type=\"application/xml\">"
        "<SubscriptionDescription xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" "
        "xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">"
        "<LockDuration>PT1M</LockDuration><MaxDeliveryCount>7</MaxDeliveryCount>"
        "<DefaultRuleDescription><Filter i:type=\"SqlFilter\"><SqlExpression>a &gt; 1 AND b = 'x&amp;y'"
        "</SqlExpression></Filter><Name>first</Name></DefaultRuleDescription>"
        "<UserMetadata>caf&#233;</UserMetadata></SubscriptionDescription></content></entry>";
    http_xml_entry e;
    char err[256] = "";
    if (http_xml_parse_entry(body, strlen(body), &e, err, sizeof err)) {
        assert_true(err[0] != 0);
        return -1;
    }
    assert_true(e.n > 0);
    http_xml_entry_free(&e);
    return 0;
}

static int xml_writer(void)
{
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_xml_feed_begin(&b, "Queues", "https://localhost/$Resources/Queues", NULL, 0);
    for (int i = 0; i < 40; i++) {
        http_xml_raw(&b, "<entry>");
        http_xml_leaf(&b, "title", "a <queue> & its \"name\"");
        http_xml_leaf_i64(&b, "MaxDeliveryCount", i);
        http_xml_leaf_time(&b, "CreatedAt", INT64_C(1700000000000) + i);
        http_xml_raw(&b, "</entry>");
    }
    http_xml_feed_end(&b);
    size_t len = 0;
    char *text = http_xml_take(&b, &len);
    http_xml_buf_free(&b);
    if (!text)
        return -1;
    assert_true(len > 0);
    ent_free(text);
    return 0;
}

static void test_atom(void **state)
{
    (void)state;
    fail_each_allocation("ATOM entry", xml_entry);
    fail_each_allocation("ATOM writer", xml_writer);
}

/* ---- Config.json ---------------------------------------------------------- */

static int config_json(void)
{
    static const char text[] =
        "// comments are allowed\n"
        "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\",\n"
        " \"Queues\": [{\"Name\": \"q1\", \"Properties\": {\"LockDuration\": \"PT1M\", \"MaxDeliveryCount\": 3}},\n"
        "              {\"Name\": \"q2\", \"Properties\": {\"RequiresSession\": true}}],\n"
        " \"Topics\": [{\"Name\": \"t1\", \"Properties\": {\"DefaultMessageTimeToLive\": \"PT1H\"},\n"
        "   \"Subscriptions\": [{\"Name\": \"s1\", \"Properties\": {\"MaxDeliveryCount\": 5},\n"
        "     \"Rules\": [{\"Name\": \"sql\", \"Properties\": {\"FilterType\": \"Sql\",\n"
        "                  \"SqlFilter\": {\"SqlExpression\": \"color = 'red'\"},\n"
        "                  \"Action\": {\"SqlExpression\": \"SET seen = 1\"}}},\n"
        "                 {\"Name\": \"corr\", \"Properties\": {\"FilterType\": \"Correlation\",\n"
        "                  \"CorrelationFilter\": {\"Label\": \"x\", \"Properties\": {\"k\": \"v\"}}}}]}]}]}],\n"
        " \"Logging\": {\"Type\": \"File\"}}}\n";
    ent_config cfg;
    char err[512] = "";
    int rc = emu_config_parse(text, sizeof text - 1, "Config.json", &cfg, err, sizeof err);
    if (rc)
        assert_true(err[0] != 0);
    else
        assert_int_equal(cfg.nqueues, 2);
    ent_config_free(&cfg);
    return rc ? -1 : 0;
}

static void test_config_json(void **state)
{
    (void)state;
    fail_each_allocation("Config.json", config_json);
}

/* ---- the AMQP delivery encoder --------------------------------------------- */

static int delivery_encode(void)
{
    /* header, properties (message-id, group-id) and a data section */
    static const uint8_t stored[] = {
        0x00, 0x53, 0x70, 0xc0, 0x03, 0x02, 0x41, 0x40,                                      /* header */
        0x00, 0x53, 0x73, 0xc0, 0x11, 0x0b, 0xa1, 0x02, 'i', 'd', 0x40, 0x40, 0x40, 0x40, 0x40, /* properties */
        0x40, 0x40, 0x40, 0x40, 0xa1, 0x01, 's',
        0x00, 0x53, 0x75, 0xa0, 0x03, 'a', 'b', 'c', /* data */
    };
    amqp_delivery_info info = {.sequence_number = 7, .enqueued_ms = INT64_C(1700000000000),
                               .locked_until_ms = INT64_C(1700000060000), .ttl_ms = -1, .message_state = 0,
                               .dead_letter_reason = "why", .dead_letter_description = "because",
                               .dead_letter_source = "q1"};
    amqp_buf out = {0};
    int rc = amqp_msg_encode_delivery(stored, sizeof stored, &info, &out);
    if (rc == 0 && out.failed)
        fail_msg("the encoder reported success on a failed buffer");
    amqp_buf_free(&out);
    return rc ? -1 : 0;
}

static void test_delivery_encode(void **state)
{
    (void)state;
    fail_each_allocation("delivery encoder", delivery_encode);
}

static void quiet(ent_log_level level, const char *line)
{
    (void)level;
    (void)line;
}

int main(void)
{
    /* before jansson allocates anything, so that every block it frees is one it got from us */
    json_set_alloc_funcs(ent_malloc, ent_free);
    ent_log_set_sink(quiet);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_compiler),
        cmocka_unit_test(test_atom),
        cmocka_unit_test(test_config_json),
        cmocka_unit_test(test_delivery_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
