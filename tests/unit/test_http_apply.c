/* PUT bodies into properties and rules (amqp10/http_apply.c), and rows back
 * into the XML the SDKs read (amqp10/http_describe.c): the values the SDKs
 * send, the refusals naming what is wrong, and the reader-facing shapes JS
 * depends on (one xmlns attribute on CountDetails, 4-character type prefixes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_apply.h"
#include "http_describe.h"
#include "store_rule_json.h"

static char *wrap(const char *description, const char *inner)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "<entry xmlns=\"http://www.w3.org/2005/Atom\"><content type=\"application/xml\"><%s "
             "xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" "
             "xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">%s</%s></content></entry>",
             description, inner, description);
    return buf;
}

static sb_status apply_queue(const char *inner, ent_queue_props *q, char *err, size_t errlen)
{
    http_xml_entry e;
    const char *body = wrap("QueueDescription", inner);
    assert_int_equal(http_xml_parse_entry(body, strlen(body), &e, err, errlen), 0);
    assert_int_equal(ent_queue_props_init(q, "q1", err, errlen), SB_OK);
    sb_status st = http_apply_queue(q, &e, 256, err, errlen);
    http_xml_entry_free(&e);
    return st;
}

static void test_queue_values(void **state)
{
    (void)state;
    ent_queue_props q;
    char err[512];
    assert_int_equal(apply_queue("<LockDuration>PT45S</LockDuration><MaxDeliveryCount>7</MaxDeliveryCount>"
                                 "<RequiresSession>true</RequiresSession><ForwardTo>sb://h:1/other</ForwardTo>"
                                 "<Status>SendDisabled</Status><UserMetadata>u</UserMetadata>"
                                 "<AutoDeleteOnIdle>P10675199DT2H48M5.4775807S</AutoDeleteOnIdle>"
                                 "<SizeInBytes>9</SizeInBytes><EnableExpress>false</EnableExpress><AuthorizationRules/>",
                                 &q, err, sizeof err),
                     SB_OK);
    assert_int_equal(q.lock_duration_ms, 45000);
    assert_int_equal(q.max_delivery_count, 7);
    assert_true(q.requires_session);
    assert_string_equal(q.forward_to, "other");
    assert_int_equal(q.status, ENT_ENTITY_SEND_DISABLED);
    assert_string_equal(q.user_metadata, "u");
    assert_int_equal(q.auto_delete_on_idle_ms, ENT_DURATION_UNLIMITED);
}

static void test_queue_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *inner, *says;
    } cases[] = {
        {"<LockDuration>PT1S</LockDuration>", "LockDuration \"PT1S\" is below the minimum PT5S"},
        {"<Nope>1</Nope>", "QueueDescription has no property Nope"},
        {"<SupportOrdering>x</SupportOrdering><SubscriptionCount>1</SubscriptionCount>", "has no property SubscriptionCount"},
        {"<EnableExpress>true</EnableExpress>", "EnableExpress must be false"},
        {"<IsAnonymousAccessible>true</IsAnonymousAccessible>", "IsAnonymousAccessible must be false"},
        {"<MaxMessageSizeInKilobytes>1024</MaxMessageSizeInKilobytes>", "256 KB"},
        {"<AuthorizationRules><AuthorizationRule/></AuthorizationRules>", "AuthorizationRules must be empty"},
        {"<ForwardTo>q1</ForwardTo>", "cannot be the queue itself"},
        {"<Status>Paused</Status>", "Status \"Paused\" is not one of"},
        {"<DeadLetteringOnFilterEvaluationExceptions>true</DeadLetteringOnFilterEvaluationExceptions>",
         "has no property DeadLetteringOnFilterEvaluationExceptions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ent_queue_props q;
        char err[512] = "";
        sb_status st = apply_queue(cases[i].inner, &q, err, sizeof err);
        if (st == SB_OK || !strstr(err, cases[i].says))
            fail_msg("case %zu: %s -> %s (%s), expected '%s'", i, cases[i].inner, sb_status_name(st), err,
                     cases[i].says);
    }
}

static void test_subscription_with_rule(void **state)
{
    (void)state;
    const char *body = wrap(
        "SubscriptionDescription",
        "<LockDuration>PT20S</LockDuration><DefaultRuleDescription><Filter i:type=\"SqlFilter\">"
        "<SqlExpression>a = @p</SqlExpression><Parameters><KeyValueOfstringanyType><Key>@p</Key>"
        "<Value i:type=\"d6p1:dateTime\" xmlns:d6p1=\"http://www.w3.org/2001/XMLSchema\">2000-01-01T00:00:00Z</Value>"
        "</KeyValueOfstringanyType></Parameters></Filter><Action i:type=\"SqlRuleAction\"><SqlExpression>SET b = 1"
        "</SqlExpression></Action><Name>Mine</Name></DefaultRuleDescription>");
    http_xml_entry e;
    char err[512];
    assert_int_equal(http_xml_parse_entry(body, strlen(body), &e, err, sizeof err), 0);
    ent_subscription_props s;
    assert_int_equal(ent_subscription_props_init(&s, "t", "s", err, sizeof err), SB_OK);
    bool has_rule = false;
    assert_int_equal(http_apply_subscription(&s, &e, &has_rule, err, sizeof err), SB_OK);
    assert_true(has_rule);
    assert_int_equal(s.lock_duration_ms, 20000);
    broker_rule_def d;
    assert_int_equal(http_apply_rule(&d, &e, HTTP_APPLY_DEFAULT_RULE, NULL, err, sizeof err), SB_OK);
    assert_string_equal(d.name, "Mine");
    assert_int_equal(d.kind, ENT_FILTER_KIND_SQL);
    assert_string_equal(d.row.filter_type, "Sql");
    assert_string_equal(d.row.sql_expression, "a = @p");
    assert_string_equal(d.row.action_expression, "SET b = 1");
    assert_string_equal(d.row.filter_parameters, "{\"@p\":{\"type\":\"timestamp\",\"value\":\"2000-01-01T00:00:00.000Z\"}}");
    broker_rule_def_free(&d);
    http_xml_entry_free(&e);
}

/* The Java admin client writes a TrueFilter (and a FalseFilter) as the SqlFilter
 * Service Bus takes it for: SqlExpression, CompatibilityLevel and an empty
 * Parameters. Parameters with items stay refused for them. */
static void test_true_filter_as_java_writes_it(void **state)
{
    (void)state;
    const char *types[] = {"TrueFilter", "FalseFilter"};
    const char *sql[] = {"1=1", "1=0"};
    for (int i = 0; i < 2; i++) {
        char inner[1024];
        snprintf(inner, sizeof inner,
                 "<Filter i:type=\"%s\"><SqlExpression>%s</SqlExpression><CompatibilityLevel>20</CompatibilityLevel>"
                 "<Parameters/></Filter><Action i:type=\"EmptyRuleAction\"/><Name>r</Name>",
                 types[i], sql[i]);
        const char *body = wrap("RuleDescription", inner);
        http_xml_entry e;
        char err[512];
        assert_int_equal(http_xml_parse_entry(body, strlen(body), &e, err, sizeof err), 0);
        broker_rule_def d;
        assert_int_equal(http_apply_rule(&d, &e, "", "r", err, sizeof err), SB_OK);
        assert_int_equal(d.kind, i == 0 ? ENT_FILTER_KIND_TRUE : ENT_FILTER_KIND_FALSE);
        broker_rule_def_free(&d);
        http_xml_entry_free(&e);
    }
    const char *body = wrap("RuleDescription",
                            "<Filter i:type=\"TrueFilter\"><SqlExpression>1=1</SqlExpression><Parameters>"
                            "<KeyValueOfstringanyType><Key>@p</Key><Value i:type=\"d6p1:int\" xmlns:d6p1=\""
                            "http://www.w3.org/2001/XMLSchema\">1</Value></KeyValueOfstringanyType></Parameters>"
                            "</Filter><Name>r</Name>");
    http_xml_entry e;
    char err[512];
    assert_int_equal(http_xml_parse_entry(body, strlen(body), &e, err, sizeof err), 0);
    broker_rule_def d;
    assert_int_equal(http_apply_rule(&d, &e, "", "r", err, sizeof err), SB_ERR_ARGUMENT);
    assert_non_null(strstr(err, "Parameters"));
    http_xml_entry_free(&e);
}

static void test_correlation_rule_types(void **state)
{
    (void)state;
    const char *kv = "<KeyValueOfstringanyType><Key>%s</Key><Value i:type=\"d6p1:%s\" xmlns:d6p1=\"%s\">%s</Value>"
                     "</KeyValueOfstringanyType>";
    char props[2048] = "", one[512];
    const char *items[][3] = {
        {"s", "string", "text"},          {"i", "int", "-5"},         {"l", "long", "9000000000"},
        {"d", "double", "2.5"},           {"b", "boolean", "true"},   {"t", "dateTime", "2000-01-02T03:04:05Z"},
        {"u", "guid", "0f8fad5b-d9cb-469f-a165-70867728950e"},        {"p", "duration", "PT1M"},
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        const char *ns = !strcmp(items[i][1], "guid") || !strcmp(items[i][1], "duration")
                             ? HTTP_XML_NS_SERIALIZATION
                             : HTTP_XML_NS_XSD;
        snprintf(one, sizeof one, kv, items[i][0], items[i][1], ns, items[i][2]);
        strcat(props, one);
    }
    char inner[4096];
    snprintf(inner, sizeof inner,
             "<Filter i:type=\"CorrelationFilter\"><CorrelationId>c</CorrelationId><Label>l</Label>"
             "<Properties>%s</Properties></Filter><Action i:type=\"EmptyRuleAction\"/><Name>ignored</Name>",
             props);
    const char *body = wrap("RuleDescription", inner);
    http_xml_entry e;
    char err[512];
    assert_int_equal(http_xml_parse_entry(body, strlen(body), &e, err, sizeof err), 0);
    broker_rule_def d;
    assert_int_equal(http_apply_rule(&d, &e, "", "r1", err, sizeof err), SB_OK);
    assert_string_equal(d.name, "r1"); /* the URL's name wins */
    assert_int_equal(d.kind, ENT_FILTER_KIND_CORRELATION);
    assert_null(d.action);
    assert_int_equal(d.ncorrelation_props, 8);
    assert_int_equal(d.correlation_props[1].value.type, ENT_FV_INT);
    assert_int_equal(d.correlation_props[2].value.u.i, INT64_C(9000000000));
    assert_int_equal(d.correlation_props[4].value.type, ENT_FV_BOOL);
    assert_int_equal(d.correlation_props[6].value.type, ENT_FV_UUID);
    assert_int_equal(d.correlation_props[7].value.u.i, 60000);

    /* and back: every type written with a 4-character prefix JS can cut off */
    store_rule row = d.row;
    row.created_ms = 0;
    http_xml_buf b;
    http_xml_buf_init(&b);
    assert_int_equal(http_describe_rule(&b, &row, err, sizeof err), 0);
    char *xml = http_xml_take(&b, NULL);
    assert_non_null(strstr(xml, "<Filter i:type=\"CorrelationFilter\"><CorrelationId>c</CorrelationId><Label>l</Label>"));
    assert_non_null(strstr(xml, "<Key>i</Key><Value i:type=\"d6p1:int\" xmlns:d6p1=\"" HTTP_XML_NS_XSD "\">-5</Value>"));
    assert_non_null(strstr(xml, "<Key>l</Key><Value i:type=\"d6p1:long\""));
    assert_non_null(strstr(xml, "<Key>t</Key><Value i:type=\"d6p1:dateTime\" xmlns:d6p1=\"" HTTP_XML_NS_XSD
                                "\">2000-01-02T03:04:05.000Z</Value>"));
    assert_non_null(strstr(xml, "<Value i:type=\"d6p1:guid\" xmlns:d6p1=\"" HTTP_XML_NS_SERIALIZATION "\">"));
    assert_non_null(strstr(xml, "<Action i:type=\"EmptyRuleAction\"/><CreatedAt>1970-01-01T00:00:00.000Z</CreatedAt>"
                                "<Name>r1</Name></RuleDescription>"));
    free(xml);
    broker_rule_def_free(&d);
    http_xml_entry_free(&e);
}

static void test_queue_description(void **state)
{
    (void)state;
    store_admin_queue q;
    char err[256];
    memset(&q, 0, sizeof q);
    assert_int_equal(ent_queue_props_init(&q.props, "q1", err, sizeof err), SB_OK);
    snprintf(q.props.forward_to, sizeof q.props.forward_to, "t");
    q.rt.active = 2, q.rt.dead_letter = 1, q.rt.scheduled = 3;
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_describe_queue(&b, &q, "h:1", 256);
    char *xml = http_xml_take(&b, NULL);
    const char *order[] = {"<LockDuration>PT1M<", "<MaxSizeInMegabytes>", "<RequiresSession>", "<MaxDeliveryCount>",
                           "<MessageCount>6<", "<Status>Active<", "<ForwardTo>sb://h:1/t<", "<CreatedAt>",
                           "<CountDetails xmlns:d2p1=", "<AutoDeleteOnIdle>", "<EnableExpress>false<",
                           "<MaxMessageSizeInKilobytes>256<"};
    const char *at = xml;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *next = strstr(at, order[i]);
        if (!next)
            fail_msg("'%s' missing or out of order in %s", order[i], xml);
        at = next;
    }
    /* exactly one attribute on CountDetails, the prefix's declaration */
    const char *cd = strstr(xml, "<CountDetails ");
    assert_non_null(cd);
    assert_true(strchr(cd, '>') - cd == (long)strlen("<CountDetails xmlns:d2p1=\"" HTTP_XML_NS_SB_COUNTS "\""));
    assert_non_null(strstr(xml, "<d2p1:ScheduledMessageCount>3</d2p1:ScheduledMessageCount>"));
    free(xml);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_values),
        cmocka_unit_test(test_queue_refusals),
        cmocka_unit_test(test_subscription_with_rule),
        cmocka_unit_test(test_correlation_rule_types),
        cmocka_unit_test(test_true_filter_as_java_writes_it),
        cmocka_unit_test(test_queue_description),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
