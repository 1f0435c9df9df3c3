/* Each message's story, the decisions (entities/ent_story.h): the kinds and
 * their names, which columns each kind shows under which key, the texts a
 * client gives that an event may keep, retention, and what a query may ask. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_story.h"

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(ent_story_kind_name(ENT_STORY_SENT), "sent");
    assert_string_equal(ent_story_kind_name(ENT_STORY_ROUTED), "routed");
    assert_string_equal(ent_story_kind_name(ENT_STORY_NOT_ROUTED), "not-routed");
    assert_string_equal(ent_story_kind_name(ENT_STORY_LOCKED), "locked");
    assert_string_equal(ent_story_kind_name(ENT_STORY_DEAD_LETTERED), "dead-lettered");
    assert_string_equal(ent_story_kind_name(ENT_STORY_RECEIVED), "received-and-deleted");
    assert_string_equal(ent_story_kind_name(ENT_STORY_PURGED), "purged");
    assert_string_equal(ent_story_kind_name(ENT_STORY_DELETED), "deleted");
    assert_null(ent_story_kind_name(0));
    assert_null(ent_story_kind_name(-1));
    assert_null(ent_story_kind_name(ENT_STORY_KIND_MAX + 1));
    /* every kind has a name, and no two share one */
    for (int k = 1; k <= ENT_STORY_KIND_MAX; k++) {
        assert_non_null(ent_story_kind_name(k));
        for (int j = 1; j < k; j++)
            assert_string_not_equal(ent_story_kind_name(k), ent_story_kind_name(j));
    }
}

static void test_shapes(void **state)
{
    (void)state;
    ent_story_shape s = ent_story_shape_of(ENT_STORY_SENT);
    assert_string_equal(s.note, "traceparent");
    assert_true(s.peer);
    assert_false(s.lock);
    s = ent_story_shape_of(ENT_STORY_LOCKED);
    assert_true(s.peer);
    assert_true(s.lock);
    assert_string_equal(s.number, "deliveryCount");
    assert_null(s.note);
    s = ent_story_shape_of(ENT_STORY_DEAD_LETTERED);
    assert_string_equal(s.note, "reason");
    assert_string_equal(s.description, "description");
    assert_string_equal(s.other, "forwardedTo");
    assert_false(s.peer);
    s = ent_story_shape_of(ENT_STORY_ROUTED);
    assert_string_equal(s.note, "rule");
    assert_string_equal(s.other, "topic");
    assert_true(s.number_is_entity); /* one row in the topic, an element per subscription */
    s = ent_story_shape_of(ENT_STORY_NOT_ROUTED);
    assert_string_equal(s.note, "rules");
    assert_true(s.number_is_entity);
    s = ent_story_shape_of(ENT_STORY_FORWARDED);
    assert_string_equal(s.other, "from");
    assert_false(s.number_is_entity);
    s = ent_story_shape_of(ENT_STORY_ACTIVATED);
    assert_string_equal(s.number, "scheduledSequenceNumber");
    s = ent_story_shape_of(ENT_STORY_COMPLETED);
    assert_null(s.note);
    assert_null(s.number);
    assert_null(s.other);
    assert_false(s.peer);
    s = ent_story_shape_of(999); /* a kind a newer emulator wrote: shown bare */
    assert_null(s.note);
    assert_false(s.peer);
}

static void test_trace_properties(void **state)
{
    (void)state;
    assert_string_equal(ent_story_trace_properties[0], "traceparent");
    assert_string_equal(ent_story_trace_properties[1], "Diagnostic-Id");
}

static void test_text_keep(void **state)
{
    (void)state;
    const char *tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    assert_int_equal(ent_story_text_keep(tp, strlen(tp), ENT_STORY_TRACE_MAX), strlen(tp));
    assert_int_equal(ent_story_text_keep(tp, strlen(tp), 10), 10); /* cut */
    /* UTF-8 is kept, and a cut backs off to a character's start: "é" is 2 bytes */
    const char *e = "ab\xc3\xa9";
    assert_int_equal(ent_story_text_keep(e, 4, 4), 4);
    assert_int_equal(ent_story_text_keep(e, 4, 3), 2);
    /* not UTF-8, or a NUL: nothing (PostgreSQL would refuse it, and the send with it) */
    assert_int_equal(ent_story_text_keep("a\xff" "b", 3, 64), 0);
    assert_int_equal(ent_story_text_keep("a\0b", 3, 64), 0);
    assert_int_equal(ent_story_text_keep(NULL, 0, 64), 0);
    assert_int_equal(ent_story_text_keep("", 0, 64), 0);
}

static void test_prune_before(void **state)
{
    (void)state;
    assert_int_equal(ent_story_prune_before(10000000, 3600000), 10000000 - 3600000);
    assert_int_equal(ent_story_prune_before(1000, 3600000), 0); /* never before the epoch */
    assert_true(ENT_STORY_RETENTION_MIN_S <= ENT_STORY_RETENTION_DEFAULT_S);
    assert_true(ENT_STORY_RETENTION_DEFAULT_S <= ENT_STORY_RETENTION_MAX_S);
}

/* Parses, expecting SB_OK. */
static ent_story_query ok(const char *entity, const char *seq, const char *mid, const char *top, const char *page)
{
    ent_story_query q;
    char why[256] = "";
    sb_status st = ent_story_query_parse(entity, seq, mid, top, page, &q, why, sizeof why);
    if (st != SB_OK)
        fail_msg("expected a query, got: %s", why);
    return q;
}

/* Parses, expecting a refusal whose text holds want. */
static void refused(const char *entity, const char *seq, const char *mid, const char *top, const char *page,
                    const char *want)
{
    ent_story_query q;
    char why[256] = "";
    assert_int_equal(ent_story_query_parse(entity, seq, mid, top, page, &q, why, sizeof why), SB_ERR_ARGUMENT);
    if (!strstr(why, want))
        fail_msg("refusal \"%s\" does not say \"%s\"", why, want);
}

static void test_queries(void **state)
{
    (void)state;
    ent_story_query q = ok(NULL, NULL, "m-1", NULL, NULL);
    assert_int_equal(q.kind, ENT_STORY_BY_MESSAGE_ID);
    assert_string_equal(q.message_id, "m-1");
    q = ok("orders", NULL, "m-1", NULL, NULL);
    assert_int_equal(q.kind, ENT_STORY_BY_MESSAGE_ID);
    assert_string_equal(q.entity, "orders");
    q = ok("orders", "42", NULL, NULL, NULL);
    assert_int_equal(q.kind, ENT_STORY_BY_SEQUENCE);
    assert_int_equal(q.sequence_number, 42);
    q = ok("orders", "9223372036854775807", NULL, NULL, NULL);
    assert_int_equal(q.sequence_number, INT64_MAX);
    q = ok("orders", NULL, NULL, NULL, NULL);
    assert_int_equal(q.kind, ENT_STORY_OF_ENTITY);
    assert_int_equal(q.top, ENT_STORY_PAGE_DEFAULT);
    assert_int_equal(q.page.id, 0);
    q = ok("orders", NULL, NULL, "5", "1234-7");
    assert_int_equal(q.top, 5);
    assert_int_equal(q.page.id, 1234);
    assert_int_equal(q.page.ord, 7);
    char text[64];
    ent_story_cursor_format(q.page, text, sizeof text);
    assert_string_equal(text, "1234-7"); /* what an answer's "next" says, read back the same */
}

static void test_bad_queries(void **state)
{
    (void)state;
    refused(NULL, NULL, NULL, NULL, NULL, "name what to tell");
    refused(NULL, "5", NULL, NULL, NULL, "name what to tell");
    refused("", NULL, NULL, NULL, NULL, "entity is empty");
    refused("q", "5", "m", NULL, NULL, "not both");
    refused(NULL, NULL, "", NULL, NULL, "messageId is empty");
    char longid[ENT_MESSAGE_ID_SIZE + 8];
    memset(longid, 'x', sizeof longid - 1);
    longid[sizeof longid - 1] = 0;
    refused(NULL, NULL, longid, NULL, NULL, "longer than a MessageId");
    refused(NULL, NULL, "m", "5", NULL, "page and top apply to an entity");
    refused("q", "5", NULL, NULL, "1-1", "page and top apply to an entity");
    refused("q", "-1", NULL, NULL, NULL, "sequenceNumber must be a whole number");
    refused("q", "1.5", NULL, NULL, NULL, "not '1.5'");
    refused("q", "12a", NULL, NULL, NULL, "sequenceNumber");
    refused("q", "", NULL, NULL, NULL, "sequenceNumber");
    refused("q", "9223372036854775808", NULL, NULL, NULL, "sequenceNumber"); /* INT64_MAX + 1 */
    refused("q", NULL, NULL, "0", NULL, "top must be a whole number from 1 to 1000");
    refused("q", NULL, NULL, "1001", NULL, "top");
    refused("q", NULL, NULL, "ten", NULL, "not 'ten'");
    refused("q", NULL, NULL, NULL, "12", "page must be the 'next' value");
    refused("q", NULL, NULL, NULL, "a-b", "page");
    refused("q", NULL, NULL, NULL, "0-1", "page");
    refused("q", NULL, NULL, NULL, "1--1", "page");
}

static void test_rule_names(void **state)
{
    (void)state;
    ent_filter_rule rules[3];
    memset(rules, 0, sizeof rules);
    snprintf(rules[0].name, sizeof rules[0].name, "red-only");
    snprintf(rules[1].name, sizeof rules[1].name, "big");
    snprintf(rules[2].name, sizeof rules[2].name, "urgent");
    char out[ENT_STORY_RULES_NOTE_SIZE];
    ent_story_rule_names(rules, 3, out, sizeof out);
    assert_string_equal(out, "red-only, big, urgent");
    ent_story_rule_names(rules, 0, out, sizeof out);
    assert_string_equal(out, "");
    char small[16];
    ent_story_rule_names(rules, 3, small, sizeof small); /* a name that does not fit is left out whole */
    assert_string_equal(small, "red-only, big");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),   cmocka_unit_test(test_shapes),     cmocka_unit_test(test_trace_properties),
        cmocka_unit_test(test_text_keep),    cmocka_unit_test(test_prune_before), cmocka_unit_test(test_queries),
        cmocka_unit_test(test_bad_queries),  cmocka_unit_test(test_rule_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
