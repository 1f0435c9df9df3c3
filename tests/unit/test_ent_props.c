/* Entity properties: defaults, every limit in and out of range, name rules,
 * the setter by name and its error texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_props.h"

static char err[1024];

#define assert_contains(hay, needle)                                                                             \
    do {                                                                                                         \
        if (!strstr((hay), (needle)))                                                                            \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));                                       \
    } while (0)

static ent_queue_props queue(const char *name)
{
    ent_queue_props q;
    assert_int_equal(ent_queue_props_init(&q, name, err, sizeof err), SB_OK);
    return q;
}

static sb_status qset_str(ent_queue_props *q, const char *prop, const char *s)
{
    err[0] = 0;
    return ent_queue_set(q, prop, ent_value_string(s), err, sizeof err);
}

static sb_status qset_int(ent_queue_props *q, const char *prop, int64_t i)
{
    err[0] = 0;
    return ent_queue_set(q, prop, ent_value_int(i), err, sizeof err);
}

static int teardown_limits(void **state)
{
    (void)state;
    ent_limits_set(NULL);
    return 0;
}

/* ---- Defaults ------------------------------------------------------------ */

static void test_queue_defaults(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_string_equal(q.name, "orders");
    assert_int_equal(q.lock_duration_ms, 60000);
    assert_int_equal(q.max_delivery_count, 10);
    assert_true(q.default_message_time_to_live_ms == ENT_DURATION_UNLIMITED);
    assert_false(q.dead_lettering_on_message_expiration);
    assert_false(q.requires_duplicate_detection);
    assert_int_equal(q.duplicate_detection_history_time_window_ms, 600000);
    assert_false(q.requires_session);
    assert_string_equal(q.forward_to, "");
    assert_string_equal(q.forward_dead_lettered_messages_to, "");
    assert_true(q.auto_delete_on_idle_ms == ENT_DURATION_UNLIMITED);
    assert_int_equal(q.status, ENT_ENTITY_ACTIVE);
    assert_int_equal(q.max_size_in_megabytes, 1024);
    assert_true(q.enable_batched_operations);
    assert_false(q.enable_partitioning);
    assert_string_equal(q.user_metadata, "");
    assert_int_equal(ent_queue_validate(&q, err, sizeof err), SB_OK);
}

static void test_topic_and_subscription_defaults(void **state)
{
    (void)state;
    ent_topic_props t;
    assert_int_equal(ent_topic_props_init(&t, "events", err, sizeof err), SB_OK);
    assert_true(t.default_message_time_to_live_ms == ENT_DURATION_UNLIMITED);
    assert_int_equal(t.duplicate_detection_history_time_window_ms, 600000);
    assert_true(t.auto_delete_on_idle_ms == ENT_DURATION_UNLIMITED);
    assert_int_equal(t.max_size_in_megabytes, 1024);
    assert_true(t.enable_batched_operations);
    assert_true(t.support_ordering);
    assert_false(t.enable_partitioning);
    assert_int_equal(t.status, ENT_ENTITY_ACTIVE);
    assert_int_equal(ent_topic_validate(&t, err, sizeof err), SB_OK);

    ent_subscription_props s;
    assert_int_equal(ent_subscription_props_init(&s, "events", "audit", err, sizeof err), SB_OK);
    assert_string_equal(s.topic, "events");
    assert_string_equal(s.name, "audit");
    assert_int_equal(s.lock_duration_ms, 60000);
    assert_int_equal(s.max_delivery_count, 10);
    assert_true(s.default_message_time_to_live_ms == ENT_DURATION_UNLIMITED);
    assert_true(s.dead_lettering_on_filter_evaluation_exceptions);
    assert_false(s.dead_lettering_on_message_expiration);
    assert_false(s.requires_session);
    assert_true(s.auto_delete_on_idle_ms == ENT_DURATION_UNLIMITED);
    assert_true(s.enable_batched_operations);
    assert_int_equal(ent_subscription_validate(&s, err, sizeof err), SB_OK);

    ent_rule_props r;
    assert_int_equal(ent_rule_props_init(&r, "events", "audit", ENT_DEFAULT_RULE_NAME, err, sizeof err), SB_OK);
    assert_int_equal(r.filter_type, ENT_FILTER_TYPE_TRUE);
    assert_null(r.sql_expression);
    assert_null(r.action_expression);
    assert_int_equal(ent_rule_validate(&r, err, sizeof err), SB_OK);
    ent_rule_props_free(&r);
}

/* ---- Limits: in and out of range ---------------------------------------- */

static void test_lock_duration_limits(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "LockDuration", "PT5S"), SB_OK);
    assert_int_equal(q.lock_duration_ms, 5000);
    assert_int_equal(qset_str(&q, "LockDuration", "PT5M"), SB_OK);
    assert_int_equal(q.lock_duration_ms, 300000);
    assert_int_equal(qset_str(&q, "LockDuration", "PT2S"), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": LockDuration \"PT2S\" is below the minimum PT5S");
    assert_int_equal(q.lock_duration_ms, 300000); /* unchanged */
    assert_int_equal(qset_str(&q, "LockDuration", "PT4.999S"), SB_ERR_ARGUMENT_RANGE);
    assert_int_equal(qset_str(&q, "LockDuration", "PT5M0.001S"), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": LockDuration \"PT5M0.001S\" is above the maximum PT5M");
    assert_int_equal(qset_str(&q, "LockDuration", ENT_DURATION_MAXVALUE_TEXT), SB_ERR_ARGUMENT_RANGE);

    ent_subscription_props s;
    ent_subscription_props_init(&s, "events", "audit", err, sizeof err);
    assert_int_equal(ent_subscription_set(&s, "LockDuration", ent_value_string("PT1S"), err, sizeof err),
                     SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err,
                        "subscription \"events/Subscriptions/audit\": LockDuration \"PT1S\" is below the minimum PT5S");
    assert_int_equal(ent_subscription_set(&s, "LockDuration", ent_value_string("PT30S"), err, sizeof err), SB_OK);
    assert_int_equal(s.lock_duration_ms, 30000);
}

static void test_max_delivery_count_limits(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_int(&q, "MaxDeliveryCount", 1), SB_OK);
    assert_int_equal(q.max_delivery_count, 1);
    /* No cap of 10 as in the official emulator. */
    assert_int_equal(qset_int(&q, "MaxDeliveryCount", 2000), SB_OK);
    assert_int_equal(q.max_delivery_count, 2000);
    assert_int_equal(qset_int(&q, "MaxDeliveryCount", INT32_MAX), SB_OK);
    assert_int_equal(qset_int(&q, "MaxDeliveryCount", 0), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": MaxDeliveryCount 0 is below the minimum 1");
    assert_int_equal(qset_int(&q, "MaxDeliveryCount", -5), SB_ERR_ARGUMENT_RANGE);
    assert_int_equal(qset_int(&q, "MaxDeliveryCount", (int64_t)INT32_MAX + 1), SB_ERR_ARGUMENT_RANGE);
    assert_contains(err, "above the maximum");
    assert_int_equal(q.max_delivery_count, INT32_MAX);
}

static void test_default_ttl_limits(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "DefaultMessageTimeToLive", "PT1S"), SB_OK);
    assert_int_equal(q.default_message_time_to_live_ms, 1000);
    /* No 1 h cap as in the official emulator. */
    assert_int_equal(qset_str(&q, "DefaultMessageTimeToLive", "P14D"), SB_OK);
    assert_int_equal(q.default_message_time_to_live_ms, 14 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(qset_str(&q, "DefaultMessageTimeToLive", ENT_DURATION_MAXVALUE_TEXT), SB_OK);
    assert_true(q.default_message_time_to_live_ms == ENT_DURATION_UNLIMITED);
    assert_int_equal(qset_str(&q, "DefaultMessageTimeToLive", "PT0.5S"), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": DefaultMessageTimeToLive \"PT0.5S\" is below the minimum PT1S");
    assert_int_equal(qset_str(&q, "DefaultMessageTimeToLive", "PT0S"), SB_ERR_ARGUMENT_RANGE);
}

static void test_auto_delete_on_idle_limits(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "AutoDeleteOnIdle", "PT5M"), SB_OK);
    assert_int_equal(q.auto_delete_on_idle_ms, 300000);
    assert_int_equal(qset_str(&q, "AutoDeleteOnIdle", "P365D"), SB_OK);
    assert_int_equal(qset_str(&q, "AutoDeleteOnIdle", ENT_DURATION_MAXVALUE_TEXT), SB_OK);
    assert_true(q.auto_delete_on_idle_ms == ENT_DURATION_UNLIMITED);
    assert_int_equal(qset_str(&q, "AutoDeleteOnIdle", "PT4M59S"), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": AutoDeleteOnIdle \"PT4M59S\" is below the minimum PT5M");

    ent_topic_props t;
    ent_topic_props_init(&t, "events", err, sizeof err);
    assert_int_equal(ent_topic_set(&t, "AutoDeleteOnIdle", ent_value_string("PT1M"), err, sizeof err),
                     SB_ERR_ARGUMENT_RANGE);
    assert_contains(err, "topic \"events\": AutoDeleteOnIdle \"PT1M\" is below the minimum PT5M");
}

static void test_dup_window_limits(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "DuplicateDetectionHistoryTimeWindow", "PT20S"), SB_OK);
    assert_int_equal(q.duplicate_detection_history_time_window_ms, 20000);
    assert_int_equal(qset_str(&q, "DuplicateDetectionHistoryTimeWindow", "P7D"), SB_OK);
    assert_int_equal(q.duplicate_detection_history_time_window_ms, 7 * ENT_DURATION_MS_PER_DAY);
    assert_int_equal(qset_str(&q, "DuplicateDetectionHistoryTimeWindow", "PT19S"), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err,
                        "queue \"orders\": DuplicateDetectionHistoryTimeWindow \"PT19S\" is below the minimum PT20S");
    assert_int_equal(qset_str(&q, "DuplicateDetectionHistoryTimeWindow", "P7DT1S"), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err,
                        "queue \"orders\": DuplicateDetectionHistoryTimeWindow \"P7DT1S\" is above the maximum P7D");
}

static void test_max_size_limits(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_int(&q, "MaxSizeInMegabytes", 1), SB_OK);
    assert_int_equal(qset_int(&q, "MaxSizeInMegabytes", 5120), SB_OK);
    assert_int_equal(qset_int(&q, "MaxSizeInMegabytes", ENT_MAX_SIZE_IN_MEGABYTES_MAX), SB_OK);
    assert_int_equal(qset_int(&q, "MaxSizeInMegabytes", 0), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": MaxSizeInMegabytes 0 is below the minimum 1");
    assert_int_equal(qset_int(&q, "MaxSizeInMegabytes", ENT_MAX_SIZE_IN_MEGABYTES_MAX + 1), SB_ERR_ARGUMENT_RANGE);
}

static void test_user_metadata_limit(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    char text[ENT_USER_METADATA_MAX + 2];
    memset(text, 'x', ENT_USER_METADATA_MAX);
    text[ENT_USER_METADATA_MAX] = 0;
    assert_int_equal(qset_str(&q, "UserMetadata", text), SB_OK);
    assert_int_equal(strlen(q.user_metadata), ENT_USER_METADATA_MAX);
    text[ENT_USER_METADATA_MAX] = 'x';
    text[ENT_USER_METADATA_MAX + 1] = 0;
    assert_int_equal(qset_str(&q, "UserMetadata", text), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": UserMetadata is 1025 characters, above the maximum 1024");
    /* Characters, not bytes: 1024 two-byte characters fit. */
    char wide[ENT_USER_METADATA_MAX * 2 + 1];
    for (int i = 0; i < ENT_USER_METADATA_MAX; i++)
        memcpy(wide + 2 * i, "\xc3\xa9", 2);
    wide[ENT_USER_METADATA_MAX * 2] = 0;
    assert_int_equal(qset_str(&q, "UserMetadata", wide), SB_OK);
    /* Far too long for the buffer is still a clean refusal. */
    static char huge[20000];
    memset(huge, 'y', sizeof huge - 1);
    assert_int_equal(qset_str(&q, "UserMetadata", huge), SB_ERR_ARGUMENT_RANGE);
    assert_contains(err, "above the maximum 1024");
    assert_int_equal(qset_str(&q, "UserMetadata", "\xff\xfe"), SB_ERR_ARGUMENT);
    assert_contains(err, "UTF-8");
    assert_int_equal(ent_queue_set(&q, "UserMetadata", ent_value_null(), err, sizeof err), SB_OK);
    assert_string_equal(q.user_metadata, "");
}

static void test_changed_limits(void **state)
{
    (void)state;
    ent_limits l = *ent_limits_get();
    l.lock_duration_min_ms = 1000;
    ent_limits_set(&l);
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "LockDuration", "PT1S"), SB_OK);
    ent_limits_set(NULL);
    assert_int_equal(ent_limits_get()->lock_duration_min_ms, ENT_LOCK_DURATION_MIN_MS);
    assert_int_equal(ent_queue_validate(&q, err, sizeof err), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "queue \"orders\": LockDuration \"PT1S\" is below the minimum PT5S");
}

/* ---- Status ------------------------------------------------------------- */

static void test_status_per_kind(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    const char *all[] = {"Active", "Disabled", "SendDisabled", "ReceiveDisabled"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(qset_str(&q, "Status", all[i]), SB_OK);
        assert_string_equal(ent_entity_status_name(q.status), all[i]);
    }
    assert_int_equal(qset_str(&q, "status", "receivedisabled"), SB_OK);
    assert_int_equal(q.status, ENT_ENTITY_RECEIVE_DISABLED);
    assert_int_equal(qset_str(&q, "Status", "Paused"), SB_ERR_ARGUMENT);
    assert_string_equal(err,
                        "queue \"orders\": Status \"Paused\" is not one of Active, Disabled, SendDisabled, ReceiveDisabled");

    ent_topic_props t;
    ent_topic_props_init(&t, "events", err, sizeof err);
    assert_int_equal(ent_topic_set(&t, "Status", ent_value_string("SendDisabled"), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "Status", ent_value_string("ReceiveDisabled"), err, sizeof err),
                     SB_ERR_ARGUMENT);
    assert_string_equal(err, "topic \"events\": Status \"ReceiveDisabled\" is not allowed for a topic "
                             "(allowed: Active, Disabled, SendDisabled)");
    assert_int_equal(t.status, ENT_ENTITY_SEND_DISABLED);

    ent_subscription_props s;
    ent_subscription_props_init(&s, "events", "audit", err, sizeof err);
    assert_int_equal(ent_subscription_set(&s, "Status", ent_value_string("ReceiveDisabled"), err, sizeof err),
                     SB_OK);
    assert_int_equal(ent_subscription_set(&s, "Status", ent_value_string("SendDisabled"), err, sizeof err),
                     SB_ERR_ARGUMENT);
    assert_contains(err, "not allowed for a subscription (allowed: Active, Disabled, ReceiveDisabled)");

    s.status = ENT_ENTITY_SEND_DISABLED; /* assigned directly: validate catches it */
    assert_int_equal(ent_subscription_validate(&s, err, sizeof err), SB_ERR_ARGUMENT);
    assert_contains(err, "Status \"SendDisabled\" is not allowed");
}

/* ---- Names ------------------------------------------------------------- */

static void test_queue_names(void **state)
{
    (void)state;
    const char *good[] = {"a", "Z", "9", "orders", "queue.1", "my-queue_2", "a/b", "sales/eu/orders", "a~b",
                          "-leading-dash", "trailing.", "x_"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (ent_check_entity_path("queue name", good[i], err, sizeof err) != SB_OK)
            fail_msg("\"%s\" should be a valid queue name: %s", good[i], err);

    struct { const char *name; const char *why; } bad[] = {
        {"", "queue name is empty"},
        {"/a", "cannot start or end with '/'"},
        {"a/", "cannot start or end with '/'"},
        {"/", "cannot start or end with '/'"},
        {"a//b", "empty segment"},
        {"a@b", "contains '@', which Service Bus does not allow"},
        {"a?b", "contains '?'"},
        {"a#b", "contains '#'"},
        {"a*b", "contains '*'"},
        {"a b", "contains ' '"},
        {"a\\b", "contains '\\'"},
        {"a$b", "contains '$'"},
        {"caf\xc3\xa9", "0xc3"},
        {"a\tb", "0x09"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (ent_check_entity_path("queue name", bad[i].name, err, sizeof err) == SB_OK)
            fail_msg("\"%s\" should be refused", bad[i].name);
        assert_contains(err, bad[i].why);
    }
    assert_int_equal(ent_check_entity_path("queue name", NULL, err, sizeof err), SB_ERR_ARGUMENT);

    char name[ENT_ENTITY_PATH_MAX + 2];
    memset(name, 'q', ENT_ENTITY_PATH_MAX);
    name[ENT_ENTITY_PATH_MAX] = 0;
    assert_int_equal(ent_check_entity_path("queue name", name, err, sizeof err), SB_OK);
    ent_queue_props q;
    assert_int_equal(ent_queue_props_init(&q, name, err, sizeof err), SB_OK);
    assert_int_equal(strlen(q.name), ENT_ENTITY_PATH_MAX);
    name[ENT_ENTITY_PATH_MAX] = 'q';
    name[ENT_ENTITY_PATH_MAX + 1] = 0;
    assert_int_equal(ent_check_entity_path("queue name", name, err, sizeof err), SB_ERR_ARGUMENT_RANGE);
    assert_contains(err, "is 261 characters, above the maximum 260");
    assert_int_equal(ent_queue_props_init(&q, name, err, sizeof err), SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(q.name, "");

    assert_int_equal(ent_topic_props_init(&(ent_topic_props){0}, "t@1", err, sizeof err), SB_ERR_ARGUMENT);
    assert_string_equal(err, "topic name \"t@1\" contains '@', which Service Bus does not allow");
}

static void test_child_names(void **state)
{
    (void)state;
    ent_subscription_props s;
    assert_int_equal(ent_subscription_props_init(&s, "events", "sub with spaces", err, sizeof err), SB_OK);
    assert_int_equal(ent_subscription_props_init(&s, "events", "a/b", err, sizeof err), SB_ERR_ARGUMENT);
    assert_string_equal(err, "topic \"events\": subscription name \"a/b\" contains '/', which Service Bus does not allow");
    assert_int_equal(ent_subscription_props_init(&s, "events", "a\\b", err, sizeof err), SB_ERR_ARGUMENT);
    assert_int_equal(ent_subscription_props_init(&s, "events", "a#b", err, sizeof err), SB_ERR_ARGUMENT);
    assert_int_equal(ent_subscription_props_init(&s, "events", "", err, sizeof err), SB_ERR_ARGUMENT);
    assert_contains(err, "subscription name is empty");
    assert_int_equal(ent_subscription_props_init(&s, "bad topic", "ok", err, sizeof err), SB_ERR_ARGUMENT);
    assert_contains(err, "topic name \"bad topic\"");

    char name[ENT_SUBSCRIPTION_NAME_MAX + 2];
    memset(name, 's', ENT_SUBSCRIPTION_NAME_MAX);
    name[ENT_SUBSCRIPTION_NAME_MAX] = 0;
    assert_int_equal(ent_subscription_props_init(&s, "events", name, err, sizeof err), SB_OK);
    strcat(name, "s");
    assert_int_equal(ent_subscription_props_init(&s, "events", name, err, sizeof err), SB_ERR_ARGUMENT_RANGE);
    assert_contains(err, "is 51 characters, above the maximum 50");

    ent_rule_props r;
    assert_int_equal(ent_rule_props_init(&r, "events", "audit", "$Default", err, sizeof err), SB_OK);
    ent_rule_props_free(&r);
    memset(name, 'r', ENT_RULE_NAME_MAX + 1);
    name[ENT_RULE_NAME_MAX + 1] = 0;
    assert_int_equal(ent_rule_props_init(&r, "events", "audit", name, err, sizeof err), SB_ERR_ARGUMENT_RANGE);
    assert_contains(err, "subscription \"events/Subscriptions/audit\": rule name");
    assert_int_equal(ent_rule_props_init(&r, "events", "audit", "x*y", err, sizeof err), SB_ERR_ARGUMENT);
    assert_int_equal(ent_rule_props_init(&r, "events", "audit", "x/y", err, sizeof err), SB_ERR_ARGUMENT);
    ent_rule_props_free(&r);
}

/* ---- Forwarding --------------------------------------------------------- */

static void test_forward_to(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "ForwardTo", "archive"), SB_OK);
    assert_string_equal(q.forward_to, "archive");
    assert_int_equal(qset_str(&q, "ForwardTo", "Orders"), SB_ERR_ARGUMENT);
    assert_string_equal(err,
                        "queue \"orders\": ForwardTo \"Orders\" cannot be the queue itself (a forwarding loop)");
    assert_string_equal(q.forward_to, "archive");
    assert_int_equal(qset_str(&q, "ForwardDeadLetteredMessagesTo", "orders"), SB_ERR_ARGUMENT);
    assert_contains(err, "ForwardDeadLetteredMessagesTo \"orders\" cannot be the queue itself");
    assert_int_equal(qset_str(&q, "ForwardTo", "bad name"), SB_ERR_ARGUMENT);
    assert_string_equal(err, "queue \"orders\": ForwardTo \"bad name\" contains ' ' "
                             "(allowed: letters, digits, '.', '-', '_', '~' and '/')");
    /* "" and null both mean no forwarding (Config.json writes ""). */
    assert_int_equal(qset_str(&q, "ForwardTo", ""), SB_OK);
    assert_string_equal(q.forward_to, "");
    assert_int_equal(qset_str(&q, "ForwardTo", "archive"), SB_OK);
    assert_int_equal(ent_queue_set(&q, "ForwardTo", ent_value_null(), err, sizeof err), SB_OK);
    assert_string_equal(q.forward_to, "");

    strcpy(q.forward_to, "ORDERS");
    assert_int_equal(ent_queue_validate(&q, err, sizeof err), SB_ERR_ARGUMENT);
    assert_contains(err, "cannot be the queue itself");

    ent_subscription_props s;
    ent_subscription_props_init(&s, "events", "audit", err, sizeof err);
    assert_int_equal(ent_subscription_set(&s, "ForwardTo", ent_value_string("orders"), err, sizeof err), SB_OK);
    assert_int_equal(ent_subscription_set(&s, "ForwardTo", ent_value_string("events"), err, sizeof err),
                     SB_ERR_ARGUMENT);
    assert_contains(err, "ForwardTo \"events\" cannot be its own topic");
}

/* ---- The setter by name ------------------------------------------------- */

static void test_setter_names_case_insensitive(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "lockduration", "PT30S"), SB_OK);
    assert_int_equal(q.lock_duration_ms, 30000);
    assert_int_equal(qset_str(&q, "LOCKDURATION", "PT31S"), SB_OK);
    assert_int_equal(q.lock_duration_ms, 31000);
    assert_int_equal(ent_queue_set(&q, "requiresSession", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_true(q.requires_session);
    assert_int_equal(ent_queue_set(&q, "EnableDeadLetteringOnMessageExpiration", ent_value_bool(1), err, sizeof err),
                     SB_OK);
    assert_true(q.dead_lettering_on_message_expiration);

    ent_subscription_props s;
    ent_subscription_props_init(&s, "events", "audit", err, sizeof err);
    assert_int_equal(ent_subscription_set(&s, "EnableDeadLetteringOnFilterEvaluationExceptions", ent_value_bool(0),
                                          err, sizeof err),
                     SB_OK);
    assert_false(s.dead_lettering_on_filter_evaluation_exceptions);
    assert_int_equal(ent_subscription_set(&s, "DeadLetteringOnFilterEvaluationExceptions", ent_value_bool(1), err,
                                          sizeof err),
                     SB_OK);
    assert_true(s.dead_lettering_on_filter_evaluation_exceptions);
}

static void test_setter_every_queue_property(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_str(&q, "LockDuration", "PT45S"), SB_OK);
    assert_int_equal(qset_int(&q, "MaxDeliveryCount", 7), SB_OK);
    assert_int_equal(qset_str(&q, "DefaultMessageTimeToLive", "P1D"), SB_OK);
    assert_int_equal(ent_queue_set(&q, "DeadLetteringOnMessageExpiration", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_int_equal(ent_queue_set(&q, "RequiresDuplicateDetection", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_int_equal(qset_str(&q, "DuplicateDetectionHistoryTimeWindow", "PT1H"), SB_OK);
    assert_int_equal(ent_queue_set(&q, "RequiresSession", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_int_equal(qset_str(&q, "ForwardTo", "next"), SB_OK);
    assert_int_equal(qset_str(&q, "ForwardDeadLetteredMessagesTo", "dlq-sink"), SB_OK);
    assert_int_equal(qset_str(&q, "AutoDeleteOnIdle", "PT1H"), SB_OK);
    assert_int_equal(qset_str(&q, "Status", "SendDisabled"), SB_OK);
    assert_int_equal(qset_int(&q, "MaxSizeInMegabytes", 2048), SB_OK);
    assert_int_equal(ent_queue_set(&q, "EnableBatchedOperations", ent_value_bool(0), err, sizeof err), SB_OK);
    assert_int_equal(ent_queue_set(&q, "EnablePartitioning", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_int_equal(qset_str(&q, "UserMetadata", "owner=billing"), SB_OK);

    assert_int_equal(q.lock_duration_ms, 45000);
    assert_int_equal(q.max_delivery_count, 7);
    assert_int_equal(q.default_message_time_to_live_ms, ENT_DURATION_MS_PER_DAY);
    assert_true(q.dead_lettering_on_message_expiration);
    assert_true(q.requires_duplicate_detection);
    assert_int_equal(q.duplicate_detection_history_time_window_ms, 3600000);
    assert_true(q.requires_session);
    assert_string_equal(q.forward_to, "next");
    assert_string_equal(q.forward_dead_lettered_messages_to, "dlq-sink");
    assert_int_equal(q.auto_delete_on_idle_ms, 3600000);
    assert_int_equal(q.status, ENT_ENTITY_SEND_DISABLED);
    assert_int_equal(q.max_size_in_megabytes, 2048);
    assert_false(q.enable_batched_operations);
    assert_true(q.enable_partitioning);
    assert_string_equal(q.user_metadata, "owner=billing");
    assert_int_equal(ent_queue_validate(&q, err, sizeof err), SB_OK);
}

static void test_setter_every_topic_property(void **state)
{
    (void)state;
    ent_topic_props t;
    ent_topic_props_init(&t, "events", err, sizeof err);
    assert_int_equal(ent_topic_set(&t, "DefaultMessageTimeToLive", ent_value_string("PT2H"), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "RequiresDuplicateDetection", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "DuplicateDetectionHistoryTimeWindow", ent_value_string("PT30S"), err,
                                   sizeof err),
                     SB_OK);
    assert_int_equal(ent_topic_set(&t, "AutoDeleteOnIdle", ent_value_string("P1D"), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "Status", ent_value_string("Disabled"), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "MaxSizeInMegabytes", ent_value_int(5120), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "EnableBatchedOperations", ent_value_bool(0), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "EnablePartitioning", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "SupportOrdering", ent_value_bool(0), err, sizeof err), SB_OK);
    assert_int_equal(ent_topic_set(&t, "UserMetadata", ent_value_string("m"), err, sizeof err), SB_OK);
    assert_int_equal(t.default_message_time_to_live_ms, 7200000);
    assert_true(t.requires_duplicate_detection);
    assert_int_equal(t.duplicate_detection_history_time_window_ms, 30000);
    assert_int_equal(t.auto_delete_on_idle_ms, ENT_DURATION_MS_PER_DAY);
    assert_int_equal(t.status, ENT_ENTITY_DISABLED);
    assert_int_equal(t.max_size_in_megabytes, 5120);
    assert_false(t.enable_batched_operations);
    assert_true(t.enable_partitioning);
    assert_false(t.support_ordering);
    assert_string_equal(t.user_metadata, "m");
    /* Queue-only properties are unknown on a topic. */
    assert_int_equal(ent_topic_set(&t, "LockDuration", ent_value_string("PT1M"), err, sizeof err), SB_ERR_NOT_FOUND);
    assert_string_equal(err, "topic \"events\": unknown property \"LockDuration\" for a topic");
    assert_int_equal(ent_topic_set(&t, "ForwardTo", ent_value_string("x"), err, sizeof err), SB_ERR_NOT_FOUND);
    assert_int_equal(ent_topic_validate(&t, err, sizeof err), SB_OK);
}

static void test_setter_every_subscription_property(void **state)
{
    (void)state;
    ent_subscription_props s;
    ent_subscription_props_init(&s, "events", "audit", err, sizeof err);
    const struct { const char *name; ent_value v; } sets[] = {
        {"LockDuration", ent_value_string("PT2M")},
        {"MaxDeliveryCount", ent_value_int(3)},
        {"DefaultMessageTimeToLive", ent_value_string("PT10M")},
        {"DeadLetteringOnMessageExpiration", ent_value_bool(1)},
        {"DeadLetteringOnFilterEvaluationExceptions", ent_value_bool(0)},
        {"RequiresSession", ent_value_bool(1)},
        {"ForwardTo", ent_value_string("orders")},
        {"ForwardDeadLetteredMessagesTo", ent_value_string("dead")},
        {"AutoDeleteOnIdle", ent_value_string("PT6M")},
        {"Status", ent_value_string("ReceiveDisabled")},
        {"EnableBatchedOperations", ent_value_bool(0)},
        {"UserMetadata", ent_value_string("hello")},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (ent_subscription_set(&s, sets[i].name, sets[i].v, err, sizeof err) != SB_OK)
            fail_msg("%s: %s", sets[i].name, err);
    assert_int_equal(s.lock_duration_ms, 120000);
    assert_int_equal(s.max_delivery_count, 3);
    assert_int_equal(s.default_message_time_to_live_ms, 600000);
    assert_true(s.dead_lettering_on_message_expiration);
    assert_false(s.dead_lettering_on_filter_evaluation_exceptions);
    assert_true(s.requires_session);
    assert_string_equal(s.forward_to, "orders");
    assert_string_equal(s.forward_dead_lettered_messages_to, "dead");
    assert_int_equal(s.auto_delete_on_idle_ms, 360000);
    assert_int_equal(s.status, ENT_ENTITY_RECEIVE_DISABLED);
    assert_false(s.enable_batched_operations);
    assert_string_equal(s.user_metadata, "hello");
    assert_int_equal(ent_subscription_set(&s, "MaxSizeInMegabytes", ent_value_int(1), err, sizeof err),
                     SB_ERR_NOT_FOUND);
    assert_int_equal(ent_subscription_set(&s, "RequiresDuplicateDetection", ent_value_bool(1), err, sizeof err),
                     SB_ERR_NOT_FOUND);
    assert_int_equal(ent_subscription_validate(&s, err, sizeof err), SB_OK);
}

static void test_setter_types(void **state)
{
    (void)state;
    ent_queue_props q = queue("orders");
    assert_int_equal(qset_int(&q, "LockDuration", 30), SB_ERR_ARGUMENT);
    assert_string_equal(err,
                        "queue \"orders\": LockDuration must be an ISO-8601 duration string such as \"PT1M\", got an integer");
    assert_int_equal(qset_str(&q, "LockDuration", "30 seconds"), SB_ERR_ARGUMENT);
    assert_string_equal(err, "queue \"orders\": LockDuration \"30 seconds\" is not an ISO-8601 duration: "
                             "a duration starts with 'P' (e.g. PT1M, P14D)");
    assert_int_equal(qset_str(&q, "DefaultMessageTimeToLive", "-PT1M"), SB_ERR_ARGUMENT);
    assert_contains(err, "negative durations are not allowed");

    assert_int_equal(qset_str(&q, "MaxDeliveryCount", "5"), SB_OK); /* digit strings are accepted */
    assert_int_equal(q.max_delivery_count, 5);
    assert_int_equal(ent_queue_set(&q, "MaxDeliveryCount", ent_value_double(6.0), err, sizeof err), SB_OK);
    assert_int_equal(q.max_delivery_count, 6);
    assert_int_equal(ent_queue_set(&q, "MaxDeliveryCount", ent_value_double(6.5), err, sizeof err), SB_ERR_ARGUMENT);
    assert_string_equal(err, "queue \"orders\": MaxDeliveryCount must be an integer, got a fractional number");
    assert_int_equal(qset_str(&q, "MaxDeliveryCount", "five"), SB_ERR_ARGUMENT);
    assert_string_equal(err, "queue \"orders\": MaxDeliveryCount \"five\" is not an integer");
    assert_int_equal(ent_queue_set(&q, "MaxDeliveryCount", ent_value_bool(1), err, sizeof err), SB_ERR_ARGUMENT);
    assert_string_equal(err, "queue \"orders\": MaxDeliveryCount must be an integer, got a boolean");

    assert_int_equal(qset_str(&q, "RequiresSession", "TRUE"), SB_OK);
    assert_true(q.requires_session);
    assert_int_equal(qset_int(&q, "RequiresSession", 1), SB_ERR_ARGUMENT);
    assert_string_equal(err, "queue \"orders\": RequiresSession must be true or false, got an integer");
    assert_int_equal(qset_str(&q, "RequiresSession", "yes"), SB_ERR_ARGUMENT);
    assert_int_equal(ent_queue_set(&q, "RequiresSession", ent_value_null(), err, sizeof err), SB_ERR_ARGUMENT);
    assert_contains(err, "got null");

    assert_int_equal(qset_int(&q, "Status", 1), SB_ERR_ARGUMENT);
    assert_contains(err, "Status must be a string");
    assert_int_equal(qset_int(&q, "ForwardTo", 1), SB_ERR_ARGUMENT);
    assert_string_equal(err, "queue \"orders\": ForwardTo must be a string, got an integer");

    assert_int_equal(qset_str(&q, "NoSuchProperty", "x"), SB_ERR_NOT_FOUND);
    assert_string_equal(err, "queue \"orders\": unknown property \"NoSuchProperty\" for a queue");
    assert_int_equal(qset_str(&q, NULL, "x"), SB_ERR_NOT_FOUND);
    assert_int_equal(qset_str(&q, "SupportOrdering", "true"), SB_ERR_NOT_FOUND);
}

/* ---- Rules -------------------------------------------------------------- */

static void test_rule_sql(void **state)
{
    (void)state;
    ent_rule_props r;
    assert_int_equal(ent_rule_props_init(&r, "events", "audit", "urgent", err, sizeof err), SB_OK);
    assert_int_equal(ent_rule_set(&r, "FilterType", ent_value_string("Sql"), err, sizeof err), SB_OK);
    assert_int_equal(r.filter_type, ENT_FILTER_TYPE_SQL);
    assert_int_equal(ent_rule_validate(&r, err, sizeof err), SB_ERR_ARGUMENT);
    assert_string_equal(err,
                        "rule \"events/Subscriptions/audit/Rules/urgent\": FilterType Sql needs a SqlFilter.SqlExpression");
    assert_int_equal(ent_rule_set(&r, "SqlFilter.SqlExpression", ent_value_string("sys.Label = 'urgent'"), err,
                                  sizeof err),
                     SB_OK);
    assert_int_equal(ent_rule_set(&r, "action.sqlexpression", ent_value_string("SET sys.To = 'x'"), err, sizeof err),
                     SB_OK);
    assert_string_equal(r.sql_expression, "sys.Label = 'urgent'");
    assert_string_equal(r.action_expression, "SET sys.To = 'x'");
    assert_int_equal(ent_rule_validate(&r, err, sizeof err), SB_OK);

    static char longexpr[ENT_SQL_EXPRESSION_MAX + 2];
    memset(longexpr, 'a', ENT_SQL_EXPRESSION_MAX + 1);
    assert_int_equal(ent_rule_set(&r, "SqlFilter.SqlExpression", ent_value_string(longexpr), err, sizeof err),
                     SB_ERR_ARGUMENT_RANGE);
    assert_string_equal(err, "rule \"events/Subscriptions/audit/Rules/urgent\": SqlFilter.SqlExpression is 1025 "
                             "characters, above the maximum 1024");
    assert_string_equal(r.sql_expression, "sys.Label = 'urgent'");
    assert_int_equal(ent_rule_set(&r, "Action.SqlExpression", ent_value_string(longexpr), err, sizeof err),
                     SB_ERR_ARGUMENT_RANGE);
    /* An empty action is no action. */
    assert_int_equal(ent_rule_set(&r, "Action.SqlExpression", ent_value_string(""), err, sizeof err), SB_OK);
    assert_null(r.action_expression);

    assert_int_equal(ent_rule_set(&r, "FilterType", ent_value_string("Regex"), err, sizeof err), SB_ERR_ARGUMENT);
    assert_string_equal(err, "rule \"events/Subscriptions/audit/Rules/urgent\": FilterType \"Regex\" is not one of "
                             "Sql, Correlation, True, False");
    assert_int_equal(ent_rule_set(&r, "FilterType", ent_value_int(0), err, sizeof err), SB_ERR_ARGUMENT);
    assert_int_equal(ent_rule_set(&r, "FilterType", ent_value_string("SQL"), err, sizeof err), SB_OK);
    assert_int_equal(ent_rule_set(&r, "FilterType", ent_value_string("TrueFilter"), err, sizeof err), SB_OK);
    assert_int_equal(r.filter_type, ENT_FILTER_TYPE_TRUE);
    assert_int_equal(ent_rule_set(&r, "SqlFilter.Parameters", ent_value_string("x"), err, sizeof err),
                     SB_ERR_NOT_FOUND);
    assert_contains(err, "unknown property \"SqlFilter.Parameters\" for a rule");
    ent_rule_props_free(&r);
}

static void test_rule_correlation(void **state)
{
    (void)state;
    ent_rule_props r;
    assert_int_equal(ent_rule_props_init(&r, "events", "audit", "corr", err, sizeof err), SB_OK);
    assert_int_equal(ent_rule_set(&r, "FilterType", ent_value_string("Correlation"), err, sizeof err), SB_OK);
    assert_int_equal(ent_rule_validate(&r, err, sizeof err), SB_ERR_ARGUMENT);
    assert_contains(err, "FilterType Correlation needs at least one CorrelationFilter property");

    const char *fields[] = {"ContentType", "CorrelationId", "Label", "MessageId", "ReplyTo", "ReplyToSessionId",
                            "SessionId", "To"};
    char prop[64];
    for (size_t i = 0; i < 8; i++) {
        snprintf(prop, sizeof prop, "CorrelationFilter.%s", fields[i]);
        assert_int_equal(ent_rule_set(&r, prop, ent_value_string(fields[i]), err, sizeof err), SB_OK);
    }
    assert_string_equal(r.correlation.content_type, "ContentType");
    assert_string_equal(r.correlation.correlation_id, "CorrelationId");
    assert_string_equal(r.correlation.subject, "Label");
    assert_string_equal(r.correlation.message_id, "MessageId");
    assert_string_equal(r.correlation.reply_to, "ReplyTo");
    assert_string_equal(r.correlation.reply_to_session_id, "ReplyToSessionId");
    assert_string_equal(r.correlation.session_id, "SessionId");
    assert_string_equal(r.correlation.to, "To");
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Subject", ent_value_string("s2"), err, sizeof err), SB_OK);
    assert_string_equal(r.correlation.subject, "s2");
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.To", ent_value_int(3), err, sizeof err), SB_ERR_ARGUMENT);
    assert_contains(err, "CorrelationFilter.To must be a string, got an integer");
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Bogus", ent_value_string("x"), err, sizeof err),
                     SB_ERR_NOT_FOUND);

    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Properties.color", ent_value_string("red"), err, sizeof err),
                     SB_OK);
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Properties.size", ent_value_int(42), err, sizeof err), SB_OK);
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Properties.ratio", ent_value_double(0.5), err, sizeof err),
                     SB_OK);
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Properties.vip", ent_value_bool(1), err, sizeof err), SB_OK);
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Properties.color", ent_value_string("blue"), err, sizeof err),
                     SB_OK);
    assert_int_equal(r.correlation.nproperties, 4);
    assert_string_equal(r.correlation.properties[0].name, "color");
    assert_string_equal(r.correlation.properties[0].value.u.s, "blue");
    assert_int_equal(r.correlation.properties[1].value.u.i, 42);
    assert_true(r.correlation.properties[2].value.u.d == 0.5);
    assert_int_equal(r.correlation.properties[3].value.type, ENT_VALUE_BOOL);
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Properties.", ent_value_string("x"), err, sizeof err),
                     SB_ERR_ARGUMENT);

    ent_rule_props copy;
    assert_int_equal(ent_rule_props_copy(&copy, &r), 0);
    assert_int_equal(ent_rule_set(&r, "CorrelationFilter.Properties.size", ent_value_null(), err, sizeof err), SB_OK);
    assert_int_equal(r.correlation.nproperties, 3);
    assert_string_equal(r.correlation.properties[1].name, "ratio");
    assert_int_equal(ent_rule_validate(&r, err, sizeof err), SB_OK);
    ent_rule_props_free(&r);

    assert_int_equal(copy.correlation.nproperties, 4);
    assert_string_equal(copy.correlation.properties[0].value.u.s, "blue");
    assert_string_equal(copy.correlation.to, "To");
    assert_int_equal(ent_rule_validate(&copy, err, sizeof err), SB_OK);
    ent_rule_props_free(&copy);

    /* A single user property is enough. */
    ent_rule_props_init(&r, "events", "audit", "one", err, sizeof err);
    ent_rule_set(&r, "FilterType", ent_value_string("Correlation"), err, sizeof err);
    ent_rule_set(&r, "CorrelationFilter.Properties.p", ent_value_string("v"), err, sizeof err);
    assert_int_equal(ent_rule_validate(&r, err, sizeof err), SB_OK);
    ent_rule_props_free(&r);
}

static void test_type_names(void **state)
{
    (void)state;
    ent_entity_status s;
    assert_int_equal(ent_entity_status_parse("ACTIVE", &s), 0);
    assert_int_equal(s, ENT_ENTITY_ACTIVE);
    assert_int_equal(ent_entity_status_parse("Creating", &s), -1);
    assert_int_equal(ent_entity_status_parse(NULL, &s), -1);
    ent_filter_type f;
    assert_int_equal(ent_filter_type_parse("CorrelationFilter", &f), 0);
    assert_int_equal(f, ENT_FILTER_TYPE_CORRELATION);
    assert_int_equal(ent_filter_type_parse("false", &f), 0);
    assert_int_equal(f, ENT_FILTER_TYPE_FALSE);
    assert_int_equal(ent_filter_type_parse("Filter", &f), -1);
    assert_string_equal(ent_filter_type_name(ENT_FILTER_TYPE_SQL), "Sql");
    assert_string_equal(ent_value_type_name(ENT_VALUE_DOUBLE), "a number");
    assert_int_equal(ent_utf8_length("h\xc3\xa9llo"), 5);
    assert_int_equal(ent_utf8_length("\xc3"), -1);
    assert_int_equal(ent_utf8_length("\xc0\x80"), -1); /* overlong */
}

/* The dashboard's status change: each kind takes only its own statuses, any letter case. */
static void test_status_for_kind(void **state)
{
    (void)state;
    ent_entity_status s;
    char err[256];
    assert_int_equal(ent_entity_status_for("queue", "receivedisabled", &s, err, sizeof err), SB_OK);
    assert_int_equal(s, ENT_ENTITY_RECEIVE_DISABLED);
    assert_int_equal(ent_entity_status_for("topic", "SendDisabled", &s, err, sizeof err), SB_OK);
    assert_int_equal(s, ENT_ENTITY_SEND_DISABLED);
    assert_int_equal(ent_entity_status_for("topic", "ReceiveDisabled", &s, err, sizeof err), SB_ERR_ARGUMENT);
    assert_non_null(strstr(err, "not allowed for a topic (allowed: Active, Disabled, SendDisabled)"));
    assert_int_equal(ent_entity_status_for("subscription", "SendDisabled", &s, err, sizeof err), SB_ERR_ARGUMENT);
    assert_non_null(strstr(err, "ReceiveDisabled"));
    assert_int_equal(ent_entity_status_for("queue", "Paused", &s, err, sizeof err), SB_ERR_ARGUMENT);
    assert_non_null(strstr(err, "\"Paused\""));
    assert_int_equal(ent_entity_status_for("queue", NULL, &s, err, sizeof err), SB_ERR_ARGUMENT);
    assert_int_equal(ent_entity_status_for("namespace", "Active", &s, err, sizeof err), SB_ERR_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_defaults),
        cmocka_unit_test(test_topic_and_subscription_defaults),
        cmocka_unit_test(test_lock_duration_limits),
        cmocka_unit_test(test_max_delivery_count_limits),
        cmocka_unit_test(test_default_ttl_limits),
        cmocka_unit_test(test_auto_delete_on_idle_limits),
        cmocka_unit_test(test_dup_window_limits),
        cmocka_unit_test(test_max_size_limits),
        cmocka_unit_test(test_user_metadata_limit),
        cmocka_unit_test_teardown(test_changed_limits, teardown_limits),
        cmocka_unit_test(test_status_per_kind),
        cmocka_unit_test(test_status_for_kind),
        cmocka_unit_test(test_queue_names),
        cmocka_unit_test(test_child_names),
        cmocka_unit_test(test_forward_to),
        cmocka_unit_test(test_setter_names_case_insensitive),
        cmocka_unit_test(test_setter_every_queue_property),
        cmocka_unit_test(test_setter_every_topic_property),
        cmocka_unit_test(test_setter_every_subscription_property),
        cmocka_unit_test(test_setter_types),
        cmocka_unit_test(test_rule_sql),
        cmocka_unit_test(test_rule_correlation),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
