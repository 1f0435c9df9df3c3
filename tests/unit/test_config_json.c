/* Config.json: the official sample with comments, a file with every property,
 * compatibility leniencies, and bad files whose errors name entity + property. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_config_json.h"
#include "ent_log.h"

static char err[4096];
static char warnings[8192];

static void capture(ent_log_level level, const char *line)
{
    if (level == ENT_LOG_WARN)
        snprintf(warnings + strlen(warnings), sizeof warnings - strlen(warnings), "%s\n", line);
}

static int setup(void **state)
{
    (void)state;
    warnings[0] = err[0] = 0;
    ent_log_set_sink(capture);
    ent_log_set_level(ENT_LOG_DEBUG);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ent_log_set_sink(NULL);
    return 0;
}

#define assert_contains(hay, needle)                                                                             \
    do {                                                                                                         \
        if (!strstr((hay), (needle)))                                                                            \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));                                       \
    } while (0)

static int parse(const char *text, ent_config *cfg)
{
    err[0] = 0;
    return emu_config_parse(text, strlen(text), NULL, cfg, err, sizeof err);
}

/* Parses a file expected to fail and checks every fragment is in the error. */
static void expect_fail(const char *text, const char *frag1, const char *frag2)
{
    ent_config cfg;
    if (parse(text, &cfg) == 0) {
        ent_config_free(&cfg);
        fail_msg("expected a failure mentioning \"%s\"", frag1);
    }
    assert_int_equal(cfg.nqueues, 0);
    assert_int_equal(cfg.ntopics, 0);
    assert_contains(err, frag1);
    if (frag2)
        assert_contains(err, frag2);
    ent_config_free(&cfg);
}

/* The shape of the installer repository's Config.json, with comments. */
static const char official_sample[] =
    "// Azure Service Bus emulator configuration\n"
    "{\n"
    "  \"UserConfig\": {\n"
    "    \"Namespaces\": [\n"
    "      {\n"
    "        \"Name\": \"sbemulatorns\",\n"
    "        \"Queues\": [\n"
    "          {\n"
    "            \"Name\": \"queue.1\", // the first queue\n"
    "            \"Properties\": {\n"
    "              \"DeadLetteringOnMessageExpiration\": false,\n"
    "              \"DefaultMessageTimeToLive\": \"PT1H\",\n"
    "              \"DuplicateDetectionHistoryTimeWindow\": \"PT20S\",\n"
    "              \"ForwardDeadLetteredMessagesTo\": \"\",\n"
    "              \"ForwardTo\": \"\",\n"
    "              \"LockDuration\": \"PT1M\",\n"
    "              \"MaxDeliveryCount\": 3,\n"
    "              \"RequiresDuplicateDetection\": false,\n"
    "              \"RequiresSession\": false\n"
    "            }\n"
    "          }\n"
    "        ],\n"
    "        \"Topics\": [\n"
    "          {\n"
    "            \"Name\": \"topic.1\",\n"
    "            \"Properties\": {\n"
    "              \"DefaultMessageTimeToLive\": \"PT1H\",\n"
    "              \"DuplicateDetectionHistoryTimeWindow\": \"PT20S\",\n"
    "              \"RequiresDuplicateDetection\": false\n"
    "            },\n"
    "            \"Subscriptions\": [\n"
    "              {\n"
    "                \"Name\": \"subscription.1\",\n"
    "                \"Properties\": {\n"
    "                  \"DeadLetteringOnMessageExpiration\": false,\n"
    "                  \"DefaultMessageTimeToLive\": \"PT1H\",\n"
    "                  \"LockDuration\": \"PT1M\",\n"
    "                  \"MaxDeliveryCount\": 3,\n"
    "                  \"ForwardDeadLetteredMessagesTo\": \"\",\n"
    "                  \"ForwardTo\": \"\",\n"
    "                  \"RequiresSession\": false\n"
    "                },\n"
    "                \"Rules\": [\n"
    "                  {\n"
    "                    \"Name\": \"app-prop-filter-1\",\n"
    "                    \"Properties\": {\n"
    "                      \"FilterType\": \"Correlation\",\n"
    "                      \"CorrelationFilter\": {\n"
    "                        \"ContentType\": \"application/text\",\n"
    "                        \"CorrelationId\": \"id1\",\n"
    "                        \"Label\": \"subject1\",\n"
    "                        \"MessageId\": \"msgid1\",\n"
    "                        \"ReplyTo\": \"someQueue\",\n"
    "                        \"ReplyToSessionId\": \"sessionId\",\n"
    "                        \"SessionId\": \"session1\",\n"
    "                        \"To\": \"xyz\"\n"
    "                      }\n"
    "                    }\n"
    "                  }\n"
    "                ]\n"
    "              },\n"
    "              {\n"
    "                \"Name\": \"subscription.2\",\n"
    "                \"Properties\": {\n"
    "                  \"DeadLetteringOnMessageExpiration\": false,\n"
    "                  \"DefaultMessageTimeToLive\": \"PT1H\",\n"
    "                  \"LockDuration\": \"PT1M\",\n"
    "                  \"MaxDeliveryCount\": 3,\n"
    "                  \"ForwardDeadLetteredMessagesTo\": \"\",\n"
    "                  \"ForwardTo\": \"\",\n"
    "                  \"RequiresSession\": false\n"
    "                },\n"
    "                \"Rules\": [\n"
    "                  {\n"
    "                    \"Name\": \"user-prop-filter-1\",\n"
    "                    \"Properties\": {\n"
    "                      \"FilterType\": \"Correlation\",\n"
    "                      \"CorrelationFilter\": {\n"
    "                        \"Properties\": {\n"
    "                          \"prop3\": \"value3\"\n"
    "                        }\n"
    "                      }\n"
    "                    }\n"
    "                  }\n"
    "                ]\n"
    "              },\n"
    "              {\n"
    "                \"Name\": \"subscription.3\",\n"
    "                \"Properties\": {\n"
    "                  \"DeadLetteringOnMessageExpiration\": false,\n"
    "                  \"DefaultMessageTimeToLive\": \"PT1H\",\n"
    "                  \"LockDuration\": \"PT1M\",\n"
    "                  \"MaxDeliveryCount\": 3,\n"
    "                  \"ForwardDeadLetteredMessagesTo\": \"\",\n"
    "                  \"ForwardTo\": \"\",\n"
    "                  \"RequiresSession\": false\n"
    "                },\n"
    "                \"Rules\": [\n"
    "                  {\n"
    "                    \"Name\": \"sql-filter-1\",\n"
    "                    \"Properties\": {\n"
    "                      \"FilterType\": \"Sql\",\n"
    "                      \"SqlFilter\": {\n"
    "                        \"SqlExpression\": \"sys.MessageId = '123456' AND userProp1 = 'value1'\"\n"
    "                      },\n"
    "                      \"Action\": {\n"
    "                        \"SqlExpression\": \"SET sys.To = 'Entity'\"\n"
    "                      }\n"
    "                    }\n"
    "                  }\n"
    "                ]\n"
    "              },\n"
    "              {\n"
    "                /* no rules: gets $Default when stored */\n"
    "                \"Name\": \"subscription.4\",\n"
    "                \"Properties\": {\n"
    "                  \"LockDuration\": \"PT1M\",\n"
    "                  \"MaxDeliveryCount\": 3\n"
    "                }\n"
    "              }\n"
    "            ]\n"
    "          }\n"
    "        ]\n"
    "      }\n"
    "    ],\n"
    "    \"Logging\": {\n"
    "      \"Type\": \"File\"\n"
    "    }\n"
    "  }\n"
    "}\n";

static void test_official_sample(void **state)
{
    (void)state;
    ent_config cfg;
    if (parse(official_sample, &cfg))
        fail_msg("%s", err);
    assert_string_equal(cfg.namespace_name, "sbemulatorns");
    assert_string_equal(cfg.logging_type, "File");
    assert_int_equal(cfg.nqueues, 1);
    const ent_queue_props *q = &cfg.queues[0];
    assert_string_equal(q->name, "queue.1");
    assert_int_equal(q->lock_duration_ms, 60000);
    assert_int_equal(q->max_delivery_count, 3);
    assert_int_equal(q->default_message_time_to_live_ms, 3600000);
    assert_int_equal(q->duplicate_detection_history_time_window_ms, 20000);
    assert_string_equal(q->forward_to, "");
    assert_false(q->requires_session);
    /* Not in the file: Service Bus defaults. */
    assert_true(q->auto_delete_on_idle_ms == ENT_DURATION_UNLIMITED);
    assert_int_equal(q->max_size_in_megabytes, 1024);

    assert_int_equal(cfg.ntopics, 1);
    const ent_topic_config *t = &cfg.topics[0];
    assert_string_equal(t->props.name, "topic.1");
    assert_int_equal(t->props.default_message_time_to_live_ms, 3600000);
    assert_int_equal(t->nsubscriptions, 4);

    const ent_subscription_config *s1 = &t->subscriptions[0];
    assert_string_equal(s1->props.name, "subscription.1");
    assert_string_equal(s1->props.topic, "topic.1");
    assert_int_equal(s1->props.max_delivery_count, 3);
    assert_int_equal(s1->nrules, 1);
    const ent_rule_props *r = &s1->rules[0];
    assert_string_equal(r->name, "app-prop-filter-1");
    assert_int_equal(r->filter_type, ENT_FILTER_TYPE_CORRELATION);
    assert_string_equal(r->correlation.content_type, "application/text");
    assert_string_equal(r->correlation.correlation_id, "id1");
    assert_string_equal(r->correlation.subject, "subject1");
    assert_string_equal(r->correlation.message_id, "msgid1");
    assert_string_equal(r->correlation.reply_to, "someQueue");
    assert_string_equal(r->correlation.reply_to_session_id, "sessionId");
    assert_string_equal(r->correlation.session_id, "session1");
    assert_string_equal(r->correlation.to, "xyz");
    assert_int_equal(r->correlation.nproperties, 0);

    r = &t->subscriptions[1].rules[0];
    assert_int_equal(r->filter_type, ENT_FILTER_TYPE_CORRELATION);
    assert_int_equal(r->correlation.nproperties, 1);
    assert_string_equal(r->correlation.properties[0].name, "prop3");
    assert_string_equal(r->correlation.properties[0].value.u.s, "value3");

    r = &t->subscriptions[2].rules[0];
    assert_int_equal(r->filter_type, ENT_FILTER_TYPE_SQL);
    assert_string_equal(r->sql_expression, "sys.MessageId = '123456' AND userProp1 = 'value1'");
    assert_string_equal(r->action_expression, "SET sys.To = 'Entity'");

    assert_int_equal(t->subscriptions[3].nrules, 0);
    assert_string_equal(warnings, "");
    ent_config_free(&cfg);
    assert_int_equal(cfg.nqueues, 0);
}

static const char every_property[] =
    "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\",\n"
    " \"Queues\": [{\"Name\": \"sales/eu/orders~1\", \"Properties\": {\n"
    "   \"LockDuration\": \"PT5M\", \"MaxDeliveryCount\": 2000, \"DefaultMessageTimeToLive\": \"P14D\",\n"
    "   \"DeadLetteringOnMessageExpiration\": true, \"RequiresDuplicateDetection\": true,\n"
    "   \"DuplicateDetectionHistoryTimeWindow\": \"P7D\", \"RequiresSession\": true,\n"
    "   \"ForwardTo\": \"archive\", \"ForwardDeadLetteredMessagesTo\": \"dead-sink\",\n"
    "   \"AutoDeleteOnIdle\": \"PT5M\", \"Status\": \"ReceiveDisabled\", \"MaxSizeInMegabytes\": 5120,\n"
    "   \"EnableBatchedOperations\": false, \"EnablePartitioning\": true, \"UserMetadata\": \"owner=sales\"}}],\n"
    " \"Topics\": [{\"Name\": \"events\", \"Properties\": {\n"
    "   \"DefaultMessageTimeToLive\": \"P10675199DT2H48M5.4775807S\", \"RequiresDuplicateDetection\": true,\n"
    "   \"DuplicateDetectionHistoryTimeWindow\": \"PT1H\", \"AutoDeleteOnIdle\": \"P30D\",\n"
    "   \"Status\": \"SendDisabled\", \"MaxSizeInMegabytes\": 2048, \"EnableBatchedOperations\": false,\n"
    "   \"EnablePartitioning\": true, \"SupportOrdering\": true, \"UserMetadata\": \"topic meta\"},\n"
    "   \"Subscriptions\": [{\"Name\": \"audit\", \"Properties\": {\n"
    "     \"LockDuration\": \"PT30S\", \"MaxDeliveryCount\": 50, \"DefaultMessageTimeToLive\": \"P2D\",\n"
    "     \"DeadLetteringOnMessageExpiration\": true, \"DeadLetteringOnFilterEvaluationExceptions\": false,\n"
    "     \"RequiresSession\": true, \"ForwardTo\": \"sales/eu/orders~1\", \"ForwardDeadLetteredMessagesTo\": \"dead-sink\",\n"
    "     \"AutoDeleteOnIdle\": \"PT10M\", \"Status\": \"Disabled\", \"EnableBatchedOperations\": false,\n"
    "     \"UserMetadata\": \"sub meta\"},\n"
    "     \"Rules\": [\n"
    "       {\"Name\": \"typed\", \"Properties\": {\"FilterType\": \"Correlation\", \"CorrelationFilter\": {\n"
    "          \"Properties\": {\"s\": \"x\", \"i\": 42, \"d\": 1.5, \"b\": true}}}},\n"
    "       {\"Name\": \"sql\", \"Properties\": {\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"a > 1\"},\n"
    "          \"Action\": {\"SqlExpression\": \"SET b = 2\"}}},\n"
    "       {\"Name\": \"$Default\", \"Properties\": {\"FilterType\": \"True\"}}]}]}]}],\n"
    " \"Logging\": {\"Type\": \"Console\"}}}\n";

static void test_every_property(void **state)
{
    (void)state;
    ent_config cfg;
    if (parse(every_property, &cfg))
        fail_msg("%s", err);
    assert_string_equal(cfg.logging_type, "Console");
    const ent_queue_props *q = &cfg.queues[0];
    assert_string_equal(q->name, "sales/eu/orders~1");
    assert_int_equal(q->lock_duration_ms, 300000);
    assert_int_equal(q->max_delivery_count, 2000);
    assert_int_equal(q->default_message_time_to_live_ms, 14 * ENT_DURATION_MS_PER_DAY);
    assert_true(q->dead_lettering_on_message_expiration);
    assert_true(q->requires_duplicate_detection);
    assert_int_equal(q->duplicate_detection_history_time_window_ms, 7 * ENT_DURATION_MS_PER_DAY);
    assert_true(q->requires_session);
    assert_string_equal(q->forward_to, "archive");
    assert_string_equal(q->forward_dead_lettered_messages_to, "dead-sink");
    assert_int_equal(q->auto_delete_on_idle_ms, 300000);
    assert_int_equal(q->status, ENT_ENTITY_RECEIVE_DISABLED);
    assert_int_equal(q->max_size_in_megabytes, 5120);
    assert_false(q->enable_batched_operations);
    assert_true(q->enable_partitioning);
    assert_string_equal(q->user_metadata, "owner=sales");

    const ent_topic_props *t = &cfg.topics[0].props;
    assert_true(t->default_message_time_to_live_ms == ENT_DURATION_UNLIMITED);
    assert_true(t->requires_duplicate_detection);
    assert_int_equal(t->duplicate_detection_history_time_window_ms, 3600000);
    assert_int_equal(t->auto_delete_on_idle_ms, 30 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(t->status, ENT_ENTITY_SEND_DISABLED);
    assert_int_equal(t->max_size_in_megabytes, 2048);
    assert_false(t->enable_batched_operations);
    assert_true(t->enable_partitioning);
    assert_true(t->support_ordering);
    assert_string_equal(t->user_metadata, "topic meta");

    const ent_subscription_config *sc = &cfg.topics[0].subscriptions[0];
    const ent_subscription_props *s = &sc->props;
    assert_int_equal(s->lock_duration_ms, 30000);
    assert_int_equal(s->max_delivery_count, 50);
    assert_int_equal(s->default_message_time_to_live_ms, 2 * ENT_DURATION_MS_PER_DAY);
    assert_true(s->dead_lettering_on_message_expiration);
    assert_false(s->dead_lettering_on_filter_evaluation_exceptions);
    assert_true(s->requires_session);
    assert_string_equal(s->forward_to, "sales/eu/orders~1");
    assert_string_equal(s->forward_dead_lettered_messages_to, "dead-sink");
    assert_int_equal(s->auto_delete_on_idle_ms, 600000);
    assert_int_equal(s->status, ENT_ENTITY_DISABLED);
    assert_false(s->enable_batched_operations);
    assert_string_equal(s->user_metadata, "sub meta");

    assert_int_equal(sc->nrules, 3);
    const ent_correlation_filter *c = &sc->rules[0].correlation;
    assert_int_equal(c->nproperties, 4);
    assert_int_equal(c->properties[0].value.type, ENT_VALUE_STRING);
    assert_int_equal(c->properties[1].value.type, ENT_VALUE_INT);
    assert_int_equal(c->properties[1].value.u.i, 42);
    assert_int_equal(c->properties[2].value.type, ENT_VALUE_DOUBLE);
    assert_int_equal(c->properties[3].value.type, ENT_VALUE_BOOL);
    assert_string_equal(sc->rules[1].sql_expression, "a > 1");
    assert_string_equal(sc->rules[1].action_expression, "SET b = 2");
    assert_int_equal(sc->rules[2].filter_type, ENT_FILTER_TYPE_TRUE);
    assert_string_equal(warnings, "");
    ent_config_free(&cfg);
}

/* ---- Comments and other leniencies -------------------------------------- */

static void test_strip_comments(void **state)
{
    (void)state;
    const char in[] = "{\"a\": \"http://x/*y*/\", // c\n /* b\n c */ \"b\": \"\\\"//\", \"c\": [1, 2,],}";
    char *out = emu_config_strip_comments(in, strlen(in), err, sizeof err);
    assert_non_null(out);
    assert_int_equal(strlen(out), strlen(in));
    assert_contains(out, "\"http://x/*y*/\"");
    assert_contains(out, "\"\\\"//\"");
    assert_null(strstr(out, "// c"));
    assert_null(strstr(out, "/* b"));
    assert_null(strstr(out, "2,]"));
    /* Newlines survive so that JSON error positions stay right. */
    int nl = 0;
    for (char *p = out; *p; p++)
        nl += *p == '\n';
    assert_int_equal(nl, 2);
    free(out);

    assert_null(emu_config_strip_comments("{ /* open", 9, err, sizeof err));
    assert_string_equal(err, "line 1, column 3: unterminated /* comment");
}

static void test_lenient_shape(void **state)
{
    (void)state;
    ent_config cfg;
    /* BOM, lower-case keys, trailing commas, comments, no Topics, no Logging. */
    const char text[] = "\xEF\xBB\xBF{ \"userconfig\": { \"namespaces\": [ { \"name\": \"sbemulatorns\", "
                        "\"queues\": [ { \"name\": \"q1\", \"properties\": { \"lockduration\": \"PT10S\", }, }, ], "
                        "}, ], }, } // end";
    if (parse(text, &cfg))
        fail_msg("%s", err);
    assert_int_equal(cfg.nqueues, 1);
    assert_int_equal(cfg.queues[0].lock_duration_ms, 10000);
    assert_string_equal(cfg.logging_type, "");
    ent_config_free(&cfg);
}

static void test_warnings_not_errors(void **state)
{
    (void)state;
    ent_config cfg;
    const char text[] =
        "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"myns\", \"Properties\": {\"MaxAllowedConnections\": 100},"
        " \"Queues\": [{\"Name\": \"q\", \"Properties\": {\"Colour\": \"blue\", \"MaxMessageSizeInKilobytes\": 1024,"
        "  \"DuplicateDetectionHistoryTimeWindow\": \"PT5S\"}, \"Extra\": 1}],"
        " \"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Rules\": [{\"Name\": \"r\","
        "  \"Properties\": {\"SqlFilter\": {\"SqlExpression\": \"1=1\", \"Parameters\": {}}, \"Weird\": 1}}]}]}]}],"
        " \"Logging\": {\"Type\": \"File\"}, \"Other\": true}}";
    if (parse(text, &cfg))
        fail_msg("%s", err);
    /* a namespace named otherwise (.NET Aspire names it after its resource) is no warning */
    assert_null(strstr(warnings, "myns"));
    assert_contains(warnings, "namespace \"Properties\" are not used");
    assert_contains(warnings, "queue \"q\": unknown property \"Colour\" ignored");
    assert_contains(warnings, "queue \"q\": MaxMessageSizeInKilobytes is not supported by sbemu; ignored");
    assert_contains(warnings, "queue \"q\": unknown key \"Extra\" ignored");
    assert_contains(warnings, "UserConfig: unknown key \"Other\" ignored");
    /* The official emulator's PT5S minimum: raised to the cloud's PT20S. */
    assert_contains(warnings, "DuplicateDetectionHistoryTimeWindow \"PT5S\" is below the Service Bus minimum; using PT20S");
    assert_int_equal(cfg.queues[0].duplicate_detection_history_time_window_ms, 20000);
    /* FilterType inferred from the filter object. */
    const ent_rule_props *r = &cfg.topics[0].subscriptions[0].rules[0];
    assert_int_equal(r->filter_type, ENT_FILTER_TYPE_SQL);
    assert_string_equal(r->sql_expression, "1=1");
    assert_contains(warnings, "unknown property \"SqlFilter.Parameters\" ignored");
    assert_contains(warnings, "unknown property \"Weird\" ignored");
    ent_config_free(&cfg);
}

/* .NET Aspire writes "FilterType": "Sql" with only a CorrelationFilter: the
 * filter given is the one meant, and the start must not fail. */
static void test_aspire_filter_type(void **state)
{
    (void)state;
    ent_config cfg;
    const char text[] =
        "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"messaging\", \"Queues\": [], \"Topics\": [{\"Name\": \"t\","
        " \"Subscriptions\": [{\"Name\": \"s\", \"Rules\": [{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"Sql\","
        "  \"CorrelationFilter\": {\"ContentType\": \"application/json\", \"Properties\": {\"p\": \"v\"}}}},"
        " {\"Name\": \"r2\", \"Properties\": {\"FilterType\": \"Correlation\", \"SqlFilter\": {\"SqlExpression\": \"a = 1\"}}}]}]}]}],"
        " \"Logging\": {\"Type\": \"File\"}}}";
    if (parse(text, &cfg))
        fail_msg("%s", err);
    const ent_rule_props *r = &cfg.topics[0].subscriptions[0].rules[0];
    assert_int_equal(r->filter_type, ENT_FILTER_TYPE_CORRELATION);
    assert_string_equal(r->correlation.content_type, "application/json");
    r = &cfg.topics[0].subscriptions[0].rules[1];
    assert_int_equal(r->filter_type, ENT_FILTER_TYPE_SQL);
    assert_string_equal(r->sql_expression, "a = 1");
    assert_null(strstr(warnings, "ignored because FilterType"));
    ent_config_free(&cfg);
}

static void test_no_official_caps(void **state)
{
    (void)state;
    /* 60 queues, TTL 30 days, MaxDeliveryCount 100: all fine in sbemu. */
    char text[16384] = "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Queues\": [";
    for (int i = 0; i < 60; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "%s{\"Name\": \"q%d\", \"Properties\": {\"DefaultMessageTimeToLive\": \"P30D\", "
                 "\"MaxDeliveryCount\": 100}}",
                 i ? "," : "", i);
    strcat(text, "], \"Topics\": []}], \"Logging\": {\"Type\": \"File\"}}}");
    ent_config cfg;
    if (parse(text, &cfg))
        fail_msg("%s", err);
    assert_int_equal(cfg.nqueues, 60);
    assert_int_equal(cfg.queues[59].max_delivery_count, 100);
    ent_config_free(&cfg);
}

static void test_several_namespaces(void **state)
{
    (void)state;
    ent_config cfg;
    /* The first is the default namespace; every other one is its own, and one
     * named as an earlier one (the default's name, "default", another) is
     * merged into it. */
    const char text[] = "{\"UserConfig\": {\"Namespaces\": ["
                        "{\"Name\": \"sbemulatorns\", \"Queues\": [{\"Name\": \"a\"}]},"
                        "{\"Name\": \"second\", \"Queues\": [{\"Name\": \"a\"}], \"Topics\": [{\"Name\": \"t\"}]},"
                        "{\"Name\": \"Default\", \"Queues\": [{\"Name\": \"b\"}]},"
                        "{\"Name\": \"SECOND\", \"Queues\": [{\"Name\": \"c\"}]},"
                        "{\"Name\": \"third_3\"}],"
                        " \"Logging\": {\"Type\": \"File\"}}}";
    if (parse(text, &cfg))
        fail_msg("%s", err);
    assert_string_equal(cfg.namespace_name, "sbemulatorns");
    assert_int_equal(cfg.nqueues, 2);
    assert_string_equal(cfg.queues[0].name, "a");
    assert_string_equal(cfg.queues[1].name, "b");
    assert_int_equal(cfg.ntopics, 0);
    assert_int_equal(cfg.nothers, 2);
    assert_string_equal(cfg.others[0].namespace_name, "second");
    assert_int_equal(cfg.others[0].nqueues, 2);
    assert_string_equal(cfg.others[0].queues[0].name, "a"); /* a name of the default's is free here */
    assert_string_equal(cfg.others[0].queues[1].name, "c");
    assert_int_equal(cfg.others[0].ntopics, 1);
    assert_string_equal(cfg.others[1].namespace_name, "third_3");
    assert_int_equal(cfg.others[1].nqueues, 0);
    assert_ptr_equal(ent_config_find_namespace(&cfg, "Second"), &cfg.others[0]);
    assert_null(ent_config_find_namespace(&cfg, "sbemulatorns"));
    ent_config_free(&cfg);
    /* ...a name clash within one namespace is still a clash... */
    expect_fail("{\"UserConfig\": {\"Namespaces\": [{\"Queues\": [{\"Name\": \"a\"}]},"
                " {\"Name\": \"sbemulatorns\", \"Queues\": [{\"Name\": \"A\"}]}]}}",
                "queue \"A\" is declared twice", NULL);
    expect_fail("{\"UserConfig\": {\"Namespaces\": [{}, {\"Name\": \"ns1\", \"Queues\": [{\"Name\": \"a\"}]},"
                " {\"Name\": \"NS1\", \"Topics\": [{\"Name\": \"A\"}]}]}}",
                "topic \"A\" is declared twice (a queue already has that name)", NULL);
    /* ...and every namespace but the first needs a name a namespace may have. */
    expect_fail("{\"UserConfig\": {\"Namespaces\": [{}, {\"Queues\": [{\"Name\": \"a\"}]}]}}",
                "Namespaces[1] has no \"Name\": every namespace but the first (the default one) needs one", NULL);
    expect_fail("{\"UserConfig\": {\"Namespaces\": [{}, {\"Name\": \"bad name\"}]}}",
                "Namespaces[1]: The namespace name 'bad name' holds ' ' at position 4", NULL);
    expect_fail("{\"UserConfig\": {\"Namespaces\": [{}, {\"Name\": \"-x\"}]}}",
                "must start with a letter or a digit", NULL);
}

/* ---- Bad files ---------------------------------------------------------- */

#define NS_OPEN "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", "
#define NS_CLOSE "}], \"Logging\": {\"Type\": \"File\"}}}"

static void test_bad_types(void **state)
{
    (void)state;
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": {\"MaxDeliveryCount\": \"ten\"}}]" NS_CLOSE,
                "Config.json: queue \"orders\": MaxDeliveryCount \"ten\" is not an integer", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": {\"RequiresSession\": 1}}]" NS_CLOSE,
                "queue \"orders\": RequiresSession must be true or false, got an integer", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": {\"LockDuration\": 60}}]" NS_CLOSE,
                "queue \"orders\": LockDuration must be an ISO-8601 duration string", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": {\"ForwardTo\": {\"a\": 1}}}]" NS_CLOSE,
                "queue \"orders\": ForwardTo must be a single value, got an object", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": [1]}]" NS_CLOSE,
                "queue \"orders\": \"Properties\" must be an object, got an array", NULL);
    expect_fail(NS_OPEN "\"Queues\": {\"Name\": \"orders\"}" NS_CLOSE, "\"Queues\" must be an array, got an object",
                NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": 5}]" NS_CLOSE, "Queues[0]: \"Name\" must be a string, got an integer",
                NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Properties\": "
                        "{\"Status\": \"SendDisabled\"}}]}]" NS_CLOSE,
                "subscription \"t/Subscriptions/s\": Status \"SendDisabled\" is not allowed for a subscription", NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Rules\": [{\"Name\": "
                        "\"r\", \"Properties\": {\"FilterType\": \"Correlation\", \"CorrelationFilter\": "
                        "{\"Properties\": {\"p\": [1]}}}}]}]}]" NS_CLOSE,
                "rule \"t/Subscriptions/s/Rules/r\": CorrelationFilter.Properties.p must be a single value, got an array",
                NULL);
    expect_fail("[1, 2]", "the top level must be an object, got an array", NULL);
    expect_fail("{\"UserConfig\": []}", "\"UserConfig\" must be an object, got an array", NULL);
}

static void test_bad_durations(void **state)
{
    (void)state;
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": {\"LockDuration\": \"PT2S\"}}]" NS_CLOSE,
                "Config.json: queue \"orders\": LockDuration \"PT2S\" is below the minimum PT5S", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": {\"LockDuration\": \"1 minute\"}}]" NS_CLOSE,
                "queue \"orders\": LockDuration \"1 minute\" is not an ISO-8601 duration", NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Name\": \"events\", \"Properties\": {\"DefaultMessageTimeToLive\": \"-PT1H\"}}]"
                NS_CLOSE,
                "topic \"events\": DefaultMessageTimeToLive \"-PT1H\" is not an ISO-8601 duration: negative", NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Properties\": "
                        "{\"AutoDeleteOnIdle\": \"PT1M\"}}]}]" NS_CLOSE,
                "subscription \"t/Subscriptions/s\": AutoDeleteOnIdle \"PT1M\" is below the minimum PT5M", NULL);
    /* Below the official minimum too: refused, not raised. */
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"q\", \"Properties\": {\"DuplicateDetectionHistoryTimeWindow\": "
                        "\"PT1S\"}}]" NS_CLOSE,
                "queue \"q\": DuplicateDetectionHistoryTimeWindow \"PT1S\" is below the minimum PT20S", NULL);
}

static void test_missing_names(void **state)
{
    (void)state;
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"a\"}, {\"Properties\": {}}]" NS_CLOSE,
                "Config.json: Queues[1] has no \"Name\"", NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Properties\": {}}]" NS_CLOSE, "Topics[0] has no \"Name\"", NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{}]}]" NS_CLOSE,
                "topic \"t\": Subscriptions[0] has no \"Name\"", NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Rules\": [{}]}]}]"
                NS_CLOSE,
                "subscription \"t/Subscriptions/s\": Rules[0] has no \"Name\"", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"bad name\"}]" NS_CLOSE,
                "Queues[0]: queue name \"bad name\" contains ' '", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"\"}]" NS_CLOSE, "Queues[0]: queue name is empty", NULL);
    expect_fail("{\"UserConfig\": {\"Logging\": {\"Type\": \"File\"}}}", "UserConfig has no \"Namespaces\" array",
                NULL);
    expect_fail("{\"Namespaces\": []}", "no \"UserConfig\" object", NULL);
}

static void test_bad_rules(void **state)
{
    (void)state;
    const char *prefix = NS_OPEN "\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Rules\": [";
    const char *suffix = "]}]}]" NS_CLOSE;
    struct { const char *rule; const char *want; } cases[] = {
        {"{\"Name\": \"r\"}", "rule \"t/Subscriptions/s/Rules/r\" has no \"Properties\""},
        {"{\"Name\": \"r\", \"Properties\": {}}", "rule \"t/Subscriptions/s/Rules/r\": FilterType is missing"},
        {"{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"SQL92\", \"SqlFilter\": {\"SqlExpression\": \"1=1\"}}}",
         "rule \"t/Subscriptions/s/Rules/r\": FilterType \"SQL92\" is not one of"},
        {"{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"Sql\"}}",
         "rule \"t/Subscriptions/s/Rules/r\": FilterType Sql needs a SqlFilter.SqlExpression"},
        {"{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"Correlation\", \"CorrelationFilter\": {}}}",
         "FilterType Correlation needs at least one CorrelationFilter property"},
        {"{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"Sql\", \"SqlFilter\": \"1=1\"}}",
         "rule \"t/Subscriptions/s/Rules/r\": \"SqlFilter\" must be an object, got a string"},
        {"{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": 7}}}",
         "SqlFilter.SqlExpression must be a string, got an integer"},
        {"{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"Correlation\", \"CorrelationFilter\": {\"To\": 1}}}",
         "CorrelationFilter.To must be a string, got an integer"},
        {"{\"Name\": \"a/b\", \"Properties\": {\"FilterType\": \"True\"}}", "rule name \"a/b\" contains '/'"},
        {"{\"Name\": \"r\", \"Properties\": {\"FilterType\": \"True\"}}, {\"Name\": \"R\", \"Properties\": "
         "{\"FilterType\": \"True\"}}",
         "rule \"t/Subscriptions/s/Rules/R\" is declared twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048];
        snprintf(text, sizeof text, "%s%s%s", prefix, cases[i].rule, suffix);
        expect_fail(text, cases[i].want, NULL);
    }
}

static void test_duplicates(void **state)
{
    (void)state;
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"orders\"}, {\"Name\": \"ORDERS\"}]" NS_CLOSE,
                "queue \"ORDERS\" is declared twice (a queue already has that name)", NULL);
    expect_fail(NS_OPEN "\"Queues\": [{\"Name\": \"x\"}], \"Topics\": [{\"Name\": \"x\"}]" NS_CLOSE,
                "topic \"x\" is declared twice (a queue already has that name)", NULL);
    expect_fail(NS_OPEN "\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\"}, {\"Name\": \"s\"}]}]"
                NS_CLOSE,
                "subscription \"t/Subscriptions/s\" is declared twice", NULL);
}

/* UserConfig.Faults: fault rules in the API's shape, strict (README "Faults on demand"). */
#define FAULTS(rules) "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"myns\"}], \"Faults\": [" rules "]}}"

static void test_faults(void **state)
{
    (void)state;
    ent_config cfg;
    assert_int_equal(parse(FAULTS("{\"name\": \"busy\", \"Entity\": \"q*\", \"operation\": \"send\", \"effect\": "
                                  "\"error\", \"error\": \"server-busy\", \"times\": 2},"
                                  "{\"name\": \"slow\", \"namespace\": \"MYNS\", \"operation\": \"receive\", "
                                  "\"effect\": \"delay\", \"delayMs\": 10}"),
                           &cfg),
                     0);
    assert_int_equal(cfg.nfaults, 2);
    assert_string_equal(cfg.faults[0].name, "busy");
    assert_string_equal(cfg.faults[0].entity, "q*");
    assert_int_equal(cfg.faults[0].error, SB_ERR_SERVER_BUSY);
    assert_int_equal(cfg.faults[1].delay_ms, 10);
    ent_config_free(&cfg);
    expect_fail(FAULTS("{\"name\": \"b\", \"operation\": \"send\", \"effect\": \"explode\"}"),
                "UserConfig.Faults[0] (\"b\"): unknown effect 'explode'", NULL);
    expect_fail(FAULTS("{\"operation\": \"send\", \"effect\": \"never\"}"), "UserConfig.Faults[0] has no \"name\"",
                NULL);
    expect_fail(FAULTS("{\"name\": \"n\", \"namespace\": \"no.such\", \"operation\": \"send\", \"effect\": "
                       "\"never\"}"),
                "The namespace name 'no.such' holds '.' at position 3", NULL);
    expect_fail(FAULTS("{\"name\": \"n\", \"operation\": \"send\", \"effect\": \"never\", \"times\": -1}"),
                "\"times\" must be from 1", NULL);
    expect_fail(FAULTS("{\"name\": \"n\", \"operation\": \"send\", \"effect\": \"never\", \"color\": 1}"),
                "unknown key \"color\"", NULL);
    expect_fail(FAULTS("{\"name\": \"n\", \"operation\": \"send\", \"effect\": \"never\", \"times\": {}}"),
                "\"times\" must be a single value", NULL);
    expect_fail(FAULTS("{\"name\": \"n\", \"operation\": \"send\", \"effect\": \"never\"},"
                       "{\"name\": \"N\", \"operation\": \"send\", \"effect\": \"never\"}"),
                "a fault rule named \"N\" is given twice", NULL);
    expect_fail("{\"UserConfig\": {\"Namespaces\": [], \"Faults\": {}}}", "\"Faults\" must be an array", NULL);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_fail("{\n  \"UserConfig\": {\n    \"Namespaces\": [\n  }\n}", "Config.json: line 4, column", NULL);
    expect_fail("// only a comment\n", "line", NULL);
    expect_fail("", "line 1", NULL);
    expect_fail("{\"UserConfig\": {/* never closed}", "unterminated /* comment", NULL);
    expect_fail("{\"a\": 'single quotes'}", "line 1, column", NULL);
    ent_config cfg;
    assert_int_equal(emu_config_parse("{\"a\": 1}garbage", 15, "my.json", &cfg, err, sizeof err), -1);
    assert_contains(err, "my.json: line 1");
}

static void test_load_file(void **state)
{
    (void)state;
    char path[] = "/tmp/sbemu-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, official_sample, strlen(official_sample)), (ssize_t)strlen(official_sample));
    close(fd);
    ent_config cfg;
    if (emu_config_load(path, &cfg, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(cfg.nqueues, 1);
    assert_int_equal(cfg.topics[0].nsubscriptions, 4);
    ent_config_free(&cfg);

    FILE *f = fopen(path, "w");
    fputs(NS_OPEN "\"Queues\": [{\"Name\": \"orders\", \"Properties\": {\"LockDuration\": \"PT1H\"}}]" NS_CLOSE, f);
    fclose(f);
    assert_int_equal(emu_config_load(path, &cfg, err, sizeof err), -1);
    assert_contains(err, path);
    assert_contains(err, "queue \"orders\": LockDuration \"PT1H\" is above the maximum PT5M");
    ent_config_free(&cfg);
    unlink(path);

    assert_int_equal(emu_config_load("/nonexistent/Config.json", &cfg, err, sizeof err), -1);
    assert_contains(err, "/nonexistent/Config.json: cannot open");
    ent_config_free(&cfg);
}

static void test_sample_config_of_the_repo(void **state)
{
    (void)state;
    /* scripts/sample-config.json, when the test runs from the source tree. */
    const char *candidates[] = {"scripts/sample-config.json", "../scripts/sample-config.json",
                                "../../scripts/sample-config.json"};
    for (size_t i = 0; i < 3; i++) {
        if (access(candidates[i], R_OK))
            continue;
        ent_config cfg;
        if (emu_config_load(candidates[i], &cfg, err, sizeof err))
            fail_msg("%s", err);
        assert_true(cfg.nqueues >= 1);
        ent_config_free(&cfg);
        return;
    }
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_official_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_property, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strip_comments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lenient_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warnings_not_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aspire_filter_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_official_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_several_namespaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_durations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_syntax_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_config_of_the_repo, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
