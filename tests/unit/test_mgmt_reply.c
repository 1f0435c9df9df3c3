/* The $management response bodies that several operations share (mgmt_reply.c):
 * each builder must put on the wire exactly the bytes the operations wrote
 * themselves before they shared it. Every test writes the shape by hand, call by
 * call as the wire protocol (§7.3) describes it, and compares the encoding of
 * the builder's body with it byte for byte; one also pins the bytes themselves. */
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

#include "mgmt_internal.h"

static const uint8_t UUID_A[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                   0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};

/* The encoding of d, in buf; its length. */
static size_t encode(pn_data_t *d, char *buf, size_t cap)
{
    ssize_t n = pn_data_encode(d, buf, cap);
    assert_true(n > 0);
    return (size_t)n;
}

static void assert_same_bytes(pn_data_t *got, pn_data_t *want)
{
    static char a[65536], b[65536];
    size_t na = encode(got, a, sizeof a), nb = encode(want, b, sizeof b);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
}

/* A map with one key under construction: the caller puts the value, then map_end. */
static void map_begin(pn_data_t *d, const char *key)
{
    pn_data_put_map(d);
    pn_data_enter(d);
    pn_data_put_string(d, pn_bytes(strlen(key), key));
}

static void map_end(pn_data_t *d) { pn_data_exit(d); }

/* batch-delete-messages: {"message-count": int}. */
static void test_value_int(void **state)
{
    (void)state;
    pn_data_t *got = pn_data(0), *want = pn_data(0);
    mgmt_body_value(got, "message-count", (pn_atom_t){.type = PN_INT, .u.as_int = 7});
    map_begin(want, "message-count");
    pn_data_put_int(want, 7);
    map_end(want);
    assert_same_bytes(got, want);
    /* and the bytes themselves: map32 (Proton writes compounds 32-bit), its
     * size and count, string "message-count", smallint 7 */
    static const uint8_t wire[] = {0xd1, 0, 0, 0, 0x15, 0, 0, 0, 0x02, 0xa1, 0x0d, 'm', 'e', 's', 's', 'a', 'g',
                                   'e',  '-', 'c', 'o', 'u', 'n', 't', 0x54, 0x07};
    char buf[64];
    size_t n = encode(got, buf, sizeof buf);
    assert_int_equal(n, sizeof wire);
    assert_memory_equal(buf, wire, n);
    pn_data_free(got);
    pn_data_free(want);
}

/* renew-session-lock: {"expiration": timestamp}. */
static void test_value_timestamp(void **state)
{
    (void)state;
    pn_data_t *got = pn_data(0), *want = pn_data(0);
    mgmt_body_value(got, "expiration", (pn_atom_t){.type = PN_TIMESTAMP, .u.as_timestamp = 1700000000123LL});
    map_begin(want, "expiration");
    pn_data_put_timestamp(want, 1700000000123LL);
    map_end(want);
    assert_same_bytes(got, want);
    pn_data_free(got);
    pn_data_free(want);
}

/* get-session-state: {"session-state": binary}, or null when there is none. */
static void test_value_binary_and_null(void **state)
{
    (void)state;
    pn_data_t *got = pn_data(0), *want = pn_data(0);
    mgmt_body_value(got, "session-state", (pn_atom_t){.type = PN_BINARY, .u.as_bytes = pn_bytes(3, "abc")});
    map_begin(want, "session-state");
    pn_data_put_binary(want, pn_bytes(3, "abc"));
    map_end(want);
    assert_same_bytes(got, want);
    pn_data_clear(got);
    pn_data_clear(want);
    mgmt_body_value(got, "session-state", (pn_atom_t){.type = PN_NULL});
    map_begin(want, "session-state");
    pn_data_put_null(want);
    map_end(want);
    assert_same_bytes(got, want);
    pn_data_free(got);
    pn_data_free(want);
}

/* renew-lock {"expirations": array of timestamp}; schedule-message
 * {"sequence-numbers": array of long}: arrays, not lists. */
static void test_arrays(void **state)
{
    (void)state;
    int64_t v[] = {1700000000000LL, 1700000000001LL, 3};
    pn_type_t types[] = {PN_TIMESTAMP, PN_LONG};
    const char *keys[] = {"expirations", "sequence-numbers"};
    for (size_t t = 0; t < 2; t++) {
        pn_data_t *got = pn_data(0), *want = pn_data(0);
        mgmt_body_array(got, keys[t], types[t], v, 3);
        map_begin(want, keys[t]);
        pn_data_put_array(want, false, types[t]);
        pn_data_enter(want);
        for (size_t i = 0; i < 3; i++) {
            if (types[t] == PN_TIMESTAMP)
                pn_data_put_timestamp(want, v[i]);
            else
                pn_data_put_long(want, v[i]);
        }
        pn_data_exit(want);
        map_end(want);
        assert_same_bytes(got, want);
        pn_data_free(got);
        pn_data_free(want);
    }
}

/* Stored messages as a sender put them on the wire, spelled in bytes:
 * properties {message-id: "m-1"} and a data section "hello". */
#define STORED(id)                                                                                        \
    {0x00, 0x53, 0x73, 0xc0, 0x06, 0x01, 0xa1, 0x03, id[0], id[1], id[2],                                 \
     0x00, 0x53, 0x75, 0xa0, 0x05, 'h',  'e',  'l',  'l',  'o'}
static const uint8_t STORED_1[] = STORED("m-1"), STORED_2[] = STORED("m-2"), STORED_9[] = STORED("m-9");

/* peek-message and receive-by-sequence-number: {"messages": list of entries},
 * for each flag combination the two operations use. */
static void test_messages(void **state)
{
    (void)state;
    store_mgmt_msg msgs[2] = {
        {.sequence_number = 5, .enqueued_ms = 1700000000000LL, .locked_until_ms = 1700000060000LL, .ttl_ms = -1,
         .delivery_count = 1, .state = 1, .locked = true, .message_id = "m-1"},
        {.sequence_number = 6, .enqueued_ms = 1700000000001LL, .ttl_ms = 60000, .expires_ms = 1700000060001LL,
         .delivery_count = 0, .state = 0, .message_id = "m-2", .dead_letter_reason = "r",
         .dead_letter_description = "d"},
    };
    msgs[0].bytes = STORED_1;
    msgs[0].len = sizeof STORED_1;
    msgs[1].bytes = STORED_2;
    msgs[1].len = sizeof STORED_2;
    memcpy(msgs[0].lock_token, UUID_A, 16);
    const unsigned flags[] = {MGMT_ENTRY_PEEK, MGMT_ENTRY_PEEK | MGMT_ENTRY_OMIT_BODY, MGMT_ENTRY_LOCK_TOKEN, 0};
    for (int subqueue = 0; subqueue < 2; subqueue++) {
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
            pn_data_t *got = pn_data(0), *want = pn_data(0);
            mgmt_body_messages(got, msgs, 2, subqueue, flags[f], "q");
            map_begin(want, "messages");
            pn_data_put_list(want);
            pn_data_enter(want);
            for (size_t i = 0; i < 2; i++)
                assert_int_equal(mgmt_put_message_entry(want, &msgs[i], subqueue, flags[f]), 0);
            pn_data_exit(want);
            map_end(want);
            assert_same_bytes(got, want);
            /* a list (not an array) holding both */
            assert_true(mgmt_map_find(got, "messages"));
            assert_int_equal(pn_data_type(got), PN_LIST);
            assert_int_equal(pn_data_get_list(got), 2);
            pn_data_free(got);
            pn_data_free(want);
        }
    }
}

/* A stored message that does not decode is left out, the others still go. */
static void test_messages_skip_the_unreadable(void **state)
{
    (void)state;
    static const uint8_t junk[] = {0x00, 0x53, 0x77, 0xff};
    store_mgmt_msg msgs[2] = {
        {.sequence_number = 8, .ttl_ms = -1, .message_id = "x", .bytes = junk, .len = sizeof junk},
        {.sequence_number = 9, .ttl_ms = -1, .message_id = "m-9"},
    };
    msgs[1].bytes = STORED_9;
    msgs[1].len = sizeof STORED_9;
    pn_data_t *got = pn_data(0), *want = pn_data(0);
    mgmt_body_messages(got, msgs, 2, 0, MGMT_ENTRY_PEEK, "q");
    map_begin(want, "messages");
    pn_data_put_list(want);
    pn_data_enter(want);
    assert_int_equal(mgmt_put_message_entry(want, &msgs[1], 0, MGMT_ENTRY_PEEK), 0);
    pn_data_exit(want);
    map_end(want);
    assert_same_bytes(got, want);
    pn_data_free(got);
    pn_data_free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_int),
        cmocka_unit_test(test_value_timestamp),
        cmocka_unit_test(test_value_binary_and_null),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_messages_skip_the_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
