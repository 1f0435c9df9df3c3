/* libFuzzer target for a management API PUT body, what any HTTP client may
 * send: the XML reader (http_xml_parse_entry) and everything a body goes
 * through before the store (http_apply for every description, the rule
 * inside a subscription and a rule of its own, with the rule language's
 * parser). What parses must describe itself consistently: every property has
 * a path, and a key-value item a key. ASan/UBSan/LSan catch the rest. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "http_apply.h"

#define FUZZ_MAX_INPUT 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    http_xml_entry e;
    char err[1024];
    if (http_xml_parse_entry((const char *)data, size, &e, err, sizeof err))
        return 0;
    CHECK(e.description && *e.description);
    for (size_t i = 0; i < e.n; i++) {
        CHECK(e.props[i].path);
        CHECK(e.props[i].key || *e.props[i].path);
    }
    ent_queue_props q;
    if (ent_queue_props_init(&q, "q", err, sizeof err) == SB_OK)
        http_apply_queue(&q, &e, 256, err, sizeof err);
    ent_topic_props t;
    if (ent_topic_props_init(&t, "t", err, sizeof err) == SB_OK)
        http_apply_topic(&t, &e, 256, err, sizeof err);
    ent_subscription_props s;
    bool has_rule = false;
    if (ent_subscription_props_init(&s, "t", "s", err, sizeof err) == SB_OK &&
        http_apply_subscription(&s, &e, &has_rule, err, sizeof err) == SB_OK && has_rule) {
        broker_rule_def d;
        http_apply_rule(&d, &e, HTTP_APPLY_DEFAULT_RULE, NULL, err, sizeof err);
        broker_rule_def_free(&d);
    }
    broker_rule_def d;
    if (http_apply_rule(&d, &e, "", "r", err, sizeof err) == SB_OK)
        CHECK(d.row.name && d.row.filter_type);
    broker_rule_def_free(&d);
    http_xml_entry_free(&e);
    return 0;
}
