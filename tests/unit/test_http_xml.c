/* The ATOM/XML codec (amqp10/http_xml.c): the bodies the SDKs send, read into
 * properties; malformed and hostile input refused with a reason; and the
 * writer's escaping and envelopes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_xml.h"

/* What JS 7.9.5 sends for createQueue with a few options (stringifyXML output). */
static const char js_queue[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
    "<entry xmlns=\"http://www.w3.org/2005/Atom\"><updated>2024-01-01T00:00:00.000Z</updated>"
    "<content type=\"application/xml\"><QueueDescription "
    "xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" "
    "xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\"><LockDuration>PT45S</LockDuration>"
    "<MaxDeliveryCount>7</MaxDeliveryCount><UserMetadata>a &amp; b &lt;c&gt; &#233;&#x4E2D;</UserMetadata>"
    "<ForwardTo/></QueueDescription></content></entry>";

/* JS's rule body: p4:type prefixes, l28:-typed values declared on Value. */
static const char js_rule[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
    "<entry xmlns=\"http://www.w3.org/2005/Atom\"><updated>2024-01-01T00:00:00.000Z</updated>"
    "<content type=\"application/xml\"><RuleDescription "
    "xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" "
    "xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">"
    "<Filter p4:type=\"CorrelationFilter\" xmlns:p4=\"http://www.w3.org/2001/XMLSchema-instance\">"
    "<CorrelationId>c1</CorrelationId><Properties><KeyValueOfstringanyType><Key>k.1</Key>"
    "<Value p4:type=\"l28:double\" xmlns:l28=\"http://www.w3.org/2001/XMLSchema\">2</Value>"
    "</KeyValueOfstringanyType><KeyValueOfstringanyType><Key>s</Key>"
    "<Value p4:type=\"l28:string\" xmlns:l28=\"http://www.w3.org/2001/XMLSchema\"><![CDATA[x<y]]></Value>"
    "</KeyValueOfstringanyType></Properties></Filter>"
    "<Action p4:type=\"EmptyRuleAction\" xmlns:p4=\"http://www.w3.org/2001/XMLSchema-instance\"/>"
    "<Name>r1</Name></RuleDescription></content></entry>";

/* Python (ElementTree): prefixed Atom elements, ns1: stripped by its workaround policy. */
static const char py_rule[] =
    "<ns0:entry xmlns:ns0=\"http://www.w3.org/2005/Atom\" "
    "xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" "
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n"
    "<ns0:content type=\"application/xml\"><RuleDescription>\n"
    "  <Filter xsi:type=\"SqlFilter\"><SqlExpression>a = @p</SqlExpression>"
    "<Parameters><KeyValueOfstringanyType><Key>@p</Key>"
    "<Value xsi:type=\"d6p1:int\" xmlns:d6p1=\"http://www.w3.org/2001/XMLSchema\">5</Value>"
    "</KeyValueOfstringanyType></Parameters></Filter>\n"
    "</RuleDescription></ns0:content></ns0:entry>";

static const http_xml_prop *find(const http_xml_entry *e, const char *path, const char *key)
{
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->props[i].path, path) && (!key || (e->props[i].key && !strcmp(e->props[i].key, key))))
            return &e->props[i];
    return NULL;
}

static void test_js_queue(void **state)
{
    (void)state;
    http_xml_entry e;
    char err[256] = "";
    assert_int_equal(http_xml_parse_entry(js_queue, strlen(js_queue), &e, err, sizeof err), 0);
    assert_string_equal(e.description, "QueueDescription");
    assert_int_equal(e.n, 4);
    assert_string_equal(e.props[0].path, "LockDuration");
    assert_string_equal(e.props[0].value, "PT45S");
    assert_null(e.props[0].type);
    assert_string_equal(e.props[1].value, "7");
    assert_string_equal(e.props[2].value, "a & b <c> \xc3\xa9\xe4\xb8\xad");
    assert_string_equal(e.props[3].path, "ForwardTo");
    assert_string_equal(e.props[3].value, "");
    http_xml_entry_free(&e);
}

static void test_js_rule(void **state)
{
    (void)state;
    http_xml_entry e;
    char err[256] = "";
    assert_int_equal(http_xml_parse_entry(js_rule, strlen(js_rule), &e, err, sizeof err), 0);
    assert_string_equal(e.description, "RuleDescription");
    const http_xml_prop *f = find(&e, "Filter", NULL);
    assert_non_null(f);
    assert_null(f->value); /* holds elements */
    assert_string_equal(f->type, "CorrelationFilter");
    assert_null(f->type_ns);
    assert_string_equal(find(&e, "Filter.CorrelationId", NULL)->value, "c1");
    const http_xml_prop *k = find(&e, "Filter.Properties", "k.1");
    assert_non_null(k);
    assert_string_equal(k->value, "2");
    assert_string_equal(k->type, "double");
    assert_string_equal(k->type_ns, HTTP_XML_NS_XSD);
    assert_string_equal(find(&e, "Filter.Properties", "s")->value, "x<y");
    const http_xml_prop *a = find(&e, "Action", NULL);
    assert_string_equal(a->type, "EmptyRuleAction");
    assert_string_equal(a->value, "");
    assert_string_equal(find(&e, "Name", NULL)->value, "r1");
    http_xml_entry_free(&e);
}

static void test_python_rule(void **state)
{
    (void)state;
    http_xml_entry e;
    char err[256] = "";
    assert_int_equal(http_xml_parse_entry(py_rule, strlen(py_rule), &e, err, sizeof err), 0);
    assert_string_equal(find(&e, "Filter", NULL)->type, "SqlFilter");
    assert_string_equal(find(&e, "Filter.SqlExpression", NULL)->value, "a = @p");
    const http_xml_prop *p = find(&e, "Filter.Parameters", "@p");
    assert_string_equal(p->type, "int");
    assert_string_equal(p->value, "5");
    assert_int_equal(p->line, 3);
    http_xml_entry_free(&e);
}

/* Each refused with a reason that contains the given words. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        const char *says;
    } cases[] = {
        {"", "not an XML document"},
        {"hello", "not an XML document"},
        {"<entry><content><Q>", "not closed"},
        {"<entry><content><Q></X></content></entry>", "does not close <Q>"},
        {"<entry><content><Q/></content></entry><x/>", "after the root"},
        {"<!DOCTYPE x [<!ENTITY a \"aaaa\">]><entry/>", "document type"},
        {"<entry><content><Q>&bogus;</Q></content></entry>", "unknown entity"},
        {"<entry><content><Q>&#0;</Q></content></entry>", "character reference"},
        {"<entry><content><Q>&#xD800;</Q></content></entry>", "character reference"},
        {"<entry><content><p:Q/></content></entry>", "not declared"},
        {"<entry xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\"><content><Q><V i:type=\"z:int\">1</V></Q>"
         "</content></entry>",
         "type 'z:int' is not declared"},
        {"<entry><content><Q a='1' a='2'/></content></entry>", "given twice"},
        {"<entry><content><Q a=1/></content></entry>", "quoted"},
        {"<feed><content><Q/></content></feed>", "Atom <entry>"},
        {"<entry><title/></entry>", "no <content>"},
        {"<entry><content/></entry>", "holds no description"},
        {"<entry><content><A/><B/></content></entry>", "more than one"},
        {"<entry><content><Q><L>x<M/></L></Q></content></entry>", "mixes text"},
        {"<entry><content><Q><KeyValueOfstringanyType><Key>k</Key></KeyValueOfstringanyType></Q></content></entry>",
         "needs a <Key> and a <Value>"},
        {"<entry><content><Q>\xff</Q></content></entry>", "not UTF-8"},
        {"<entry><content><Q>\x01</Q></content></entry>", "not UTF-8"},
        {"<entry><content><Q><!-- open </Q></content></entry>", "comment"},
        {"<entry><content><Q><![CDATA[x</Q></content></entry>", "CDATA"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        http_xml_entry e;
        char err[256] = "";
        int rc = http_xml_parse_entry(cases[i].body, strlen(cases[i].body), &e, err, sizeof err);
        if (rc != -1 || !strstr(err, cases[i].says))
            fail_msg("case %zu (%s): rc %d, err '%s', expected '%s'", i, cases[i].body, rc, err, cases[i].says);
    }
}

static void test_limits(void **state)
{
    (void)state;
    char err[256];
    http_xml_entry e;
    /* nesting past the limit */
    size_t cap = 64 + (HTTP_XML_DEPTH_MAX + 4) * 8;
    char *deep = malloc(cap);
    strcpy(deep, "<entry><content>");
    for (int i = 0; i < HTTP_XML_DEPTH_MAX + 2; i++)
        strcat(deep, "<a>");
    assert_int_equal(http_xml_parse_entry(deep, strlen(deep), &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "deeper"));
    free(deep);
    /* too many elements */
    size_t n = HTTP_XML_ELEMENTS_MAX + 10;
    char *many = malloc(n * 4 + 64);
    strcpy(many, "<entry><content><Q>");
    char *p = many + strlen(many);
    for (size_t i = 0; i < n; i++, p += 4)
        memcpy(p, "<a/>", 4);
    strcpy(p, "</Q></content></entry>");
    assert_int_equal(http_xml_parse_entry(many, strlen(many), &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "elements"));
    free(many);
    /* a billion-laughs style body is refused at its DTD */
    const char *laughs = "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"ha\"><!ENTITY b \"&a;&a;\">]>"
                         "<entry><content><Q>&b;</Q></content></entry>";
    assert_int_equal(http_xml_parse_entry(laughs, strlen(laughs), &e, err, sizeof err), -1);
}

static void test_every_prefix_of_a_body_is_safe(void **state)
{
    (void)state;
    /* every truncation of the JS rule either parses or is refused, never crashes */
    size_t len = strlen(js_rule);
    for (size_t i = 0; i <= len; i++) {
        char *copy = malloc(i + 1);
        memcpy(copy, js_rule, i);
        copy[i] = 0;
        http_xml_entry e;
        char err[256];
        if (http_xml_parse_entry(copy, i, &e, err, sizeof err) == 0) {
            assert_int_equal(i, len);
            http_xml_entry_free(&e);
        }
        free(copy);
    }
}

static void test_writer(void **state)
{
    (void)state;
    http_xml_buf b;
    http_xml_buf_init(&b);
    http_xml_text(&b, "a<b>&\"'\x01\xc3\xa9\xff\t\r\n");
    size_t len;
    char *s = http_xml_take(&b, &len);
    assert_string_equal(s, "a&lt;b&gt;&amp;\"'\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\t&#xD;\n");
    assert_int_equal(len, strlen(s));
    free(s);
    http_xml_attr(&b, "\"'&\t");
    s = http_xml_take(&b, NULL);
    assert_string_equal(s, "&quot;&apos;&amp;&#x9;");
    free(s);

    http_xml_meta m = {"https://h:1/q1?api-version=2021-05", "q1", 0, 1000, "ns"};
    http_xml_entry_begin(&b, &m, true);
    http_xml_leaf_i64(&b, "MaxDeliveryCount", 10);
    http_xml_leaf_bool(&b, "RequiresSession", false);
    http_xml_entry_end(&b);
    s = http_xml_take(&b, NULL);
    assert_non_null(strstr(s, "<id>https://h:1/q1?api-version=2021-05</id>"));
    assert_non_null(strstr(s, "<title type=\"text\">q1</title>"));
    assert_non_null(strstr(s, "<published>1970-01-01T00:00:00.000Z</published>"));
    assert_non_null(strstr(s, "<updated>1970-01-01T00:00:01.000Z</updated>"));
    assert_non_null(strstr(s, "<MaxDeliveryCount>10</MaxDeliveryCount><RequiresSession>false</RequiresSession>"));
    /* what the writer writes, the reader reads */
    http_xml_entry e;
    char err[256];
    assert_int_equal(http_xml_parse_entry(s, strlen(s), &e, err, sizeof err), -1); /* content holds two elements */
    free(s);

    http_xml_feed_begin(&b, "Queues", "https://h/$Resources/Queues?$skip=0&$top=2", "https://h/x?$skip=2&$top=2",
                        0);
    http_xml_feed_end(&b);
    s = http_xml_take(&b, NULL);
    assert_non_null(strstr(s, "<link rel=\"self\" href=\"https://h/$Resources/Queues?$skip=0&amp;$top=2\"/>"
                              "<link rel=\"next\" href=\"https://h/x?$skip=2&amp;$top=2\"/>"));
    free(s);

    http_xml_error(&b, 409, "exists <already>");
    s = http_xml_take(&b, NULL);
    assert_string_equal(s, "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>409</Code>"
                           "<Detail>exists &lt;already&gt;</Detail></Error>");
    free(s);

    http_xml_url_encode(&b, "t/Subscriptions/a b$", "/$");
    s = http_xml_take(&b, NULL);
    assert_string_equal(s, "t/Subscriptions/a%20b$");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_js_queue),
        cmocka_unit_test(test_js_rule),
        cmocka_unit_test(test_python_rule),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_every_prefix_of_a_body_is_safe),
        cmocka_unit_test(test_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
