/* The message codec: section walking, batch detection and splitting, the
 * delivery rewrite (header, broker annotations, dead-letter properties), and
 * malformed input. Messages are built with Proton, as an SDK would send them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <proton/codec.h>
#include <proton/message.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_codec.h"
#include "amqp_message.h"
#include "ent_message_rules.h"

static size_t encode(pn_message_t *m, char *buf, size_t cap)
{
    size_t len = cap;
    assert_int_equal(pn_message_encode(m, buf, &len), 0);
    return len;
}

static pn_message_t *sample(const char *id, const char *body)
{
    pn_message_t *m = pn_message();
    pn_message_set_id(m, (pn_atom_t){.type = PN_STRING, .u.as_bytes = pn_bytes(strlen(id), id)});
    pn_message_set_group_id(m, "session-7");
    pn_message_set_ttl(m, 30000);
    pn_data_t *ann = pn_message_annotations(m);
    pn_data_put_map(ann);
    pn_data_enter(ann);
    pn_data_put_symbol(ann, pn_bytes(28, "x-opt-scheduled-enqueue-time"));
    pn_data_put_timestamp(ann, 1900000000000);
    pn_data_put_symbol(ann, pn_bytes(21, "x-opt-sequence-number"));
    pn_data_put_long(ann, 999); /* a client's value must be replaced */
    pn_data_exit(ann);
    pn_data_t *props = pn_message_properties(m);
    pn_data_put_map(props);
    pn_data_enter(props);
    pn_data_put_string(props, pn_bytes(5, "color"));
    pn_data_put_string(props, pn_bytes(3, "red"));
    pn_data_exit(props);
    pn_message_set_inferred(m, true); /* a binary body becomes a data section, as the SDKs send it */
    pn_data_t *b = pn_message_body(m);
    pn_data_put_binary(b, pn_bytes(strlen(body), body));
    return m;
}

static void test_parse_extracts_fields(void **state)
{
    (void)state;
    char buf[1024];
    pn_message_t *m = sample("m-1", "hello");
    size_t len = encode(m, buf, sizeof buf);
    amqp_msg v;
    char err[128];
    assert_int_equal(amqp_msg_parse((uint8_t *)buf, len, &v, err, sizeof err), 0);
    assert_true(v.has_message_id);
    assert_string_equal(v.message_id, "m-1");
    assert_string_equal(v.session_id, "session-7");
    assert_int_equal(v.ttl_ms, 30000);
    assert_int_equal(v.scheduled_enqueue_ms, 1900000000000LL);
    assert_int_equal(v.body_sections, 1);
    assert_true(v.body_is_only_data);
    assert_false(amqp_msg_is_batch(&v)); /* "hello" is not an AMQP message */
    pn_message_free(m);
}

static void test_numeric_message_id(void **state)
{
    (void)state;
    char buf[256];
    pn_message_t *m = pn_message();
    pn_message_set_id(m, (pn_atom_t){.type = PN_ULONG, .u.as_ulong = 42});
    size_t len = encode(m, buf, sizeof buf);
    amqp_msg v;
    assert_int_equal(amqp_msg_parse((uint8_t *)buf, len, &v, NULL, 0), 0);
    assert_string_equal(v.message_id, "42");
    assert_int_equal(v.ttl_ms, -1);
    assert_false(v.has_session_id);
    pn_message_free(m);
}

/* Builds a batch envelope as the JS SDK does: one data section per encoded message. */
static size_t batch_of(char *out, size_t cap, int n)
{
    char inner[8][512];
    size_t lens[8];
    for (int i = 0; i < n; i++) {
        char id[16], body[16];
        snprintf(id, sizeof id, "b-%d", i);
        snprintf(body, sizeof body, "body-%d", i);
        pn_message_t *m = sample(id, body);
        lens[i] = encode(m, inner[i], sizeof inner[i]);
        pn_message_free(m);
    }
    amqp_buf b = {0};
    for (int i = 0; i < n; i++) {
        amqp_buf_descriptor(&b, AMQP_SEC_DATA);
        amqp_buf_binary(&b, inner[i], lens[i]);
    }
    assert_true(b.len <= cap);
    memcpy(out, b.data, b.len);
    size_t len = b.len;
    amqp_buf_free(&b);
    return len;
}

static void test_batch_split(void **state)
{
    (void)state;
    char buf[4096];
    size_t len = batch_of(buf, sizeof buf, 3);
    amqp_msg v;
    assert_int_equal(amqp_msg_parse((uint8_t *)buf, len, &v, NULL, 0), 0);
    assert_true(amqp_msg_is_batch(&v));
    const uint8_t *cur = NULL;
    amqp_span inner;
    int n = 0;
    while (amqp_msg_batch_next(&v, &cur, &inner)) {
        amqp_msg im;
        char want[16];
        assert_int_equal(amqp_msg_parse(inner.p, inner.len, &im, NULL, 0), 0);
        snprintf(want, sizeof want, "b-%d", n);
        assert_string_equal(im.message_id, want);
        n++;
    }
    assert_int_equal(n, 3);
}

static void test_batch_of_one(void **state)
{
    (void)state;
    char buf[4096];
    size_t len = batch_of(buf, sizeof buf, 1); /* JS sends arrays of one as a batch too */
    amqp_msg v;
    assert_int_equal(amqp_msg_parse((uint8_t *)buf, len, &v, NULL, 0), 0);
    assert_true(amqp_msg_is_batch(&v));
}

static void test_delivery_rewrite(void **state)
{
    (void)state;
    char buf[1024];
    pn_message_t *m = sample("m-2", "payload");
    size_t len = encode(m, buf, sizeof buf);
    pn_message_free(m);
    amqp_delivery_info info = {
        .sequence_number = 17, .enqueued_ms = 1700000000123, .locked_until_ms = 1700000060123, .ttl_ms = 1000,
        .header_delivery_count = 2, .message_state = -1, .dead_letter_reason = "Because",
        .dead_letter_description = "It had to",
    };
    amqp_buf out = {0};
    assert_int_equal(amqp_msg_encode_delivery((uint8_t *)buf, len, &info, &out), 0);
    pn_message_t *d = pn_message();
    assert_int_equal(pn_message_decode(d, (char *)out.data, out.len), 0);
    assert_int_equal(pn_message_get_delivery_count(d), 2);
    assert_int_equal(pn_message_get_ttl(d), 1000);
    assert_string_equal(pn_message_get_group_id(d), "session-7");
    pn_data_t *ann = pn_message_annotations(d);
    pn_data_rewind(ann);
    assert_true(pn_data_next(ann));
    pn_data_enter(ann);
    int seen = 0;
    while (pn_data_next(ann)) {
        pn_bytes_t k = pn_data_get_symbol(ann);
        pn_data_next(ann);
        if (k.size == 21 && !memcmp(k.start, "x-opt-sequence-number", 21)) {
            assert_int_equal(pn_data_type(ann), PN_LONG);
            assert_int_equal(pn_data_get_long(ann), 17);
            seen |= 1;
        } else if (k.size == 19 && !memcmp(k.start, "x-opt-enqueued-time", 19)) {
            assert_int_equal(pn_data_type(ann), PN_TIMESTAMP);
            assert_int_equal(pn_data_get_timestamp(ann), 1700000000123LL);
            seen |= 2;
        } else if (k.size == 18 && !memcmp(k.start, "x-opt-locked-until", 18)) {
            assert_int_equal(pn_data_get_timestamp(ann), 1700000060123LL);
            seen |= 4;
        } else if (k.size == 28) {
            seen |= 8; /* the client's own annotation survives */
        }
    }
    assert_int_equal(seen, 15);
    pn_data_t *props = pn_message_properties(d);
    pn_data_rewind(props);
    pn_data_next(props);
    assert_int_equal(pn_data_get_map(props), 6); /* color + reason + description */
    pn_message_free(d);
    amqp_buf_free(&out);
}

/* Every section of a delivery starts 0x00 0x53 CODE (a smallulong descriptor), as Service Bus writes
 * them: azure-servicebus >= 7.12 (_pyamqp decode_payload) reads the section code at byte 2 and the
 * value's constructor at byte 3, and failed on 0x00 0x80 + 8 bytes. */
static void test_delivery_sections_small_descriptors(void **state)
{
    (void)state;
    char buf[1024];
    pn_message_t *m = sample("m-3", "payload");
    size_t len = encode(m, buf, sizeof buf);
    pn_message_free(m);
    amqp_delivery_info info = {
        .sequence_number = 5, .enqueued_ms = 1700000000123, .locked_until_ms = 1700000060123, .ttl_ms = 1000,
        .header_delivery_count = 1, .message_state = -1, .dead_letter_reason = "r", .dead_letter_description = "d",
    };
    amqp_buf out = {0};
    assert_int_equal(amqp_msg_encode_delivery((uint8_t *)buf, len, &info, &out), 0);
    const uint8_t *p = out.data, *end = out.data + out.len;
    int sections = 0;
    while (p < end) {
        assert_true(end - p >= 3);
        assert_int_equal(p[0], 0x00);
        assert_int_equal(p[1], 0x53);
        assert_in_range(p[2], AMQP_SEC_HEADER, AMQP_SEC_FOOTER);
        amqp_val v;
        assert_int_equal(amqp_read(&p, end, &v), 0);
        sections++;
    }
    assert_int_equal(sections, 5); /* header, message annotations, properties, application properties, data */
    amqp_buf_free(&out);
}

static void test_malformed_inputs(void **state)
{
    (void)state;
    static const uint8_t cases[][8] = {
        {0x00, 0x53, 0x75, 0xa0, 0x09, 'x'},   /* binary longer than the buffer */
        {0x00, 0x53, 0x99, 0x40},              /* unknown section descriptor */
        {0xa1, 0x01, 'x'},                     /* a value that is not a section */
        {0x00, 0x53, 0x77, 0xd0, 0xff, 0xff},  /* truncated list32 */
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00},  /* descriptors all the way down */
    };
    static const size_t lens[] = {6, 4, 3, 6, 6};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        amqp_msg v;
        char err[128] = "";
        assert_int_equal(amqp_msg_parse(cases[i], lens[i], &v, err, sizeof err), -1);
        assert_true(strlen(err) > 0);
    }
    /* sections out of order: properties after the body */
    amqp_buf b = {0};
    amqp_buf_descriptor(&b, AMQP_SEC_AMQP_VALUE);
    amqp_buf_null(&b);
    amqp_buf_descriptor(&b, AMQP_SEC_PROPERTIES);
    size_t mark = amqp_buf_list_begin(&b);
    amqp_buf_compound_end(&b, mark, 0);
    amqp_msg v;
    assert_int_equal(amqp_msg_parse(b.data, b.len, &v, NULL, 0), -1);
    amqp_buf_free(&b);
}

/* Ids up to their limit in characters are kept whole, whatever their bytes;
 * one character more is refused by ent_message_ids_check with the limit named,
 * and the parse itself still succeeds (a batch stays a batch). */
static void test_id_limits(void **state)
{
    (void)state;
    char id[ENT_MESSAGE_ID_MAX * 2 + 8], buf[4096], desc[256];
    amqp_msg v;
    /* 128 two-byte characters: 256 bytes, kept whole */
    id[0] = 0;
    for (int i = 0; i < ENT_MESSAGE_ID_MAX; i++)
        strcat(id, "\xc3\xa9");
    pn_message_t *m = sample(id, "x");
    assert_int_equal(amqp_msg_parse((uint8_t *)buf, encode(m, buf, sizeof buf), &v, NULL, 0), 0);
    assert_string_equal(v.message_id, id);
    assert_int_equal(v.message_id_chars, ENT_MESSAGE_ID_MAX);
    assert_int_equal(ent_message_ids_check(v.message_id_chars, v.session_id_chars, desc, sizeof desc), SB_OK);
    pn_message_free(m);
    /* 129 characters: refused, naming the limit */
    strcat(id, "a");
    m = sample(id, "x");
    assert_int_equal(amqp_msg_parse((uint8_t *)buf, encode(m, buf, sizeof buf), &v, NULL, 0), 0);
    assert_int_equal(ent_message_ids_check(v.message_id_chars, v.session_id_chars, desc, sizeof desc), SB_ERR_ARGUMENT);
    assert_non_null(strstr(desc, "MessageId is 129 characters"));
    assert_non_null(strstr(desc, "limit is 128"));
    pn_message_free(m);
    /* a SessionId of 129 characters, with a short MessageId */
    char group[ENT_SESSION_ID_MAX + 2];
    memset(group, 's', ENT_SESSION_ID_MAX + 1);
    group[ENT_SESSION_ID_MAX + 1] = 0;
    m = sample("short", "x");
    pn_message_set_group_id(m, group);
    assert_int_equal(amqp_msg_parse((uint8_t *)buf, encode(m, buf, sizeof buf), &v, NULL, 0), 0);
    assert_int_equal(ent_message_ids_check(v.message_id_chars, v.session_id_chars, desc, sizeof desc), SB_ERR_ARGUMENT);
    assert_non_null(strstr(desc, "SessionId is 129 characters"));
    pn_message_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_extracts_fields), cmocka_unit_test(test_numeric_message_id),
        cmocka_unit_test(test_batch_split),           cmocka_unit_test(test_batch_of_one),
        cmocka_unit_test(test_delivery_rewrite),      cmocka_unit_test(test_malformed_inputs),
        cmocka_unit_test(test_id_limits),             cmocka_unit_test(test_delivery_sections_small_descriptors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
