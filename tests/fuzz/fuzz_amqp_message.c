/* libFuzzer target for what a client's message goes through on a send:
 * amqp_msg_parse and the batch splitter, the filter view topic rules read
 * (amqp_filter_msg.h), rule actions rewriting the bytes (amqp_rule_action.h)
 * and the delivery encoding a receiver gets (amqp_msg_encode_delivery).
 *
 * Checked beyond "no crash": what a batch says it holds parses; a rewritten
 * message parses again and carries the RuleName it was given; the delivery
 * form of a stored message parses. A failed check aborts, so libFuzzer
 * reports it like a crash; ASan/UBSan/LSan catch the rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_codec.h"
#include "amqp_filter_msg.h"
#include "amqp_message.h"
#include "amqp_rule_action.h"
#include "ent_filter.h"
#include "fuzz_check.h"

/* Larger inputs only exercise the same loops longer. */
#define FUZZ_MAX_INPUT 65536
#define RULE_NAME "fuzzrule"

/* Filters over every system property and user properties of each type. */
static const char *const filter_texts[] = {
    "sys.Label = 'x' OR color = 'red' OR a > 3",
    "sys.MessageId LIKE 'm%' AND sys.CorrelationId IS NOT NULL AND EXISTS(b)",
    "sys.To = 'to' OR sys.ReplyTo = 'rt' OR sys.SessionId = 's1' OR sys.ReplyToSessionId = 's2'",
    "sys.ContentType = 'application/json' AND sys.TimeToLive > '00:00:01' AND d > '2020-01-01T00:00:00Z'",
    "sys.PartitionKey = 'pk' OR sys.ViaPartitionKey IS NULL OR sys.ScheduledEnqueueTimeUtc IS NULL",
    "sys.Size > 10 AND sys.EnqueuedTimeUtc > '2000-01-01T00:00:00Z' AND c = true AND e IS NULL",
};
static ent_filter *filters[sizeof filter_texts / sizeof filter_texts[0] + 1];
static size_t nfilters;
static ent_filter_action *action;

static void init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    ent_filter_error err;
    for (size_t i = 0; i < sizeof filter_texts / sizeof filter_texts[0]; i++)
        CHECK(!ent_filter_parse(filter_texts[i], strlen(filter_texts[i]), NULL, 0, &filters[nfilters++], &err));
    ent_filter_prop props[] = {{"color", ent_fv_cstr("red")}};
    ent_filter_correlation corr = {.label = "x", .to = "to", .properties = props, .nproperties = 1};
    CHECK(!ent_filter_new_correlation(&corr, &filters[nfilters++], &err));
    const char *a = "SET a = a + 1; SET sys.Label = 'z'; REMOVE b; SET n = sys.MessageId + 'x'; SET sys.To = color";
    CHECK(!ent_filter_action_parse(a, strlen(a), NULL, 0, &action, &err));
}

static void exercise(const uint8_t *bytes, size_t len, const amqp_msg *m)
{
    amqp_filter_view v;
    amqp_filter_view_init(&v, bytes, len, m, 1700000000000);
    ent_filter_msg fm = amqp_filter_view_msg(&v);
    for (size_t i = 0; i < nfilters; i++) {
        ent_filter_error err;
        (void)ent_filter_eval(filters[i], &fm, &err);
    }

    uint8_t *out = NULL;
    size_t outlen = 0;
    ent_filter_error err;
    if (!amqp_rule_apply(bytes, len, m, 1700000000000, action, RULE_NAME, &out, &outlen, &err)) {
        amqp_msg again;
        char why[200];
        CHECK(!amqp_msg_parse(out, outlen, &again, why, sizeof why));
        amqp_filter_view v2;
        amqp_filter_view_init(&v2, out, outlen, &again, 1700000000000);
        ent_filter_value name;
        CHECK(amqp_filter_view_get_user(&v2, "RuleName", 8, &name) == 1);
        CHECK(name.type == ENT_FV_STRING && name.u.s.len == strlen(RULE_NAME) &&
              !memcmp(name.u.s.ptr, RULE_NAME, name.u.s.len));
        free(out);
    } else {
        CHECK(out == NULL);
    }

    amqp_delivery_info info = {
        .sequence_number = 7, .enqueued_ms = 1700000000000, .locked_until_ms = 1700000060000, .ttl_ms = 60000,
        .header_delivery_count = 1, .message_state = 0, .dead_letter_reason = "r", .dead_letter_description = "d",
        .dead_letter_source = "q", .message_id = "mid", .expires_ms = 1700000060000,
    };
    amqp_buf b = {0};
    if (!amqp_msg_encode_delivery(bytes, len, &info, &b) && !b.failed) {
        amqp_msg d;
        char why[200];
        CHECK(!amqp_msg_parse(b.data, b.len, &d, why, sizeof why));
    }
    amqp_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size > FUZZ_MAX_INPUT)
        return 0;
    amqp_msg m;
    char why[200];
    if (amqp_msg_parse(data, size, &m, why, sizeof why))
        return 0;
    if (!amqp_msg_is_batch(&m)) {
        exercise(data, size, &m);
        return 0;
    }
    const uint8_t *cur = NULL;
    amqp_span inner;
    while (amqp_msg_batch_next(&m, &cur, &inner)) {
        amqp_msg one;
        CHECK(!amqp_msg_parse(inner.p, inner.len, &one, why, sizeof why)); /* amqp_msg_is_batch promised */
        exercise(inner.p, inner.len, &one);
    }
    return 0;
}
