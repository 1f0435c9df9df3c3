/* The $management node's pure parts: the response envelope (statusCode int,
 * statusDescription string, errorCondition symbol only on errors, correlation-id
 * of the request id's type), the typed body readers (missing keys, wrong types,
 * integer widths, arrays and lists), arrays vs lists in bodies, the message
 * entries of peek / receive-by-sequence-number, and the SQL array literals of
 * store_mgmt. Everything is encoded and decoded through Proton, as a client would. */
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

#include "amqp_props.h"
#include "mgmt_internal.h"
#include "store_arrays.h"

static const uint8_t UUID_A[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                   0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};

static pn_message_t *roundtrip(pn_message_t *m)
{
    char buf[65536];
    size_t len = sizeof buf;
    assert_int_equal(pn_message_encode(m, buf, &len), 0);
    pn_message_t *back = pn_message();
    assert_int_equal(pn_message_decode(back, buf, len), 0);
    return back;
}

/* Positions d (a map at the top) on the value of key; fails the test if absent. */
static void find(pn_data_t *d, const char *key)
{
    assert_true(mgmt_map_find(d, key));
}

static bool has_key(pn_data_t *d, const char *key)
{
    return mgmt_map_find(d, key);
}

static pn_message_t *request_with_uuid_id(void)
{
    pn_message_t *req = pn_message();
    pn_uuid_t u;
    memcpy(u.bytes, UUID_A, 16);
    pn_message_set_id(req, (pn_atom_t){.type = PN_UUID, .u.as_uuid = u});
    pn_message_set_reply_to(req, "reply-link-1");
    return req;
}

static void test_error_envelope(void **state)
{
    (void)state;
    pn_message_t *req = request_with_uuid_id();
    pn_message_t *resp = mgmt_build_response(req, SB_ERR_LOCK_LOST, "gone");
    pn_message_t *back = roundtrip(resp);
    pn_atom_t corr = pn_message_get_correlation_id(back);
    assert_int_equal(corr.type, PN_UUID);
    assert_memory_equal(corr.u.as_uuid.bytes, UUID_A, 16);
    assert_string_equal(pn_message_get_address(back), "reply-link-1");
    pn_data_t *p = pn_message_properties(back);
    find(p, "statusCode");
    assert_int_equal(pn_data_type(p), PN_INT);
    assert_int_equal(pn_data_get_int(p), 410);
    find(p, "statusDescription");
    assert_int_equal(pn_data_type(p), PN_STRING);
    assert_memory_equal(pn_data_get_string(p).start, "gone", 4);
    find(p, "errorCondition");
    assert_int_equal(pn_data_type(p), PN_SYMBOL);
    pn_bytes_t c = pn_data_get_symbol(p);
    assert_int_equal(c.size, strlen("com.microsoft:message-lock-lost"));
    assert_memory_equal(c.start, "com.microsoft:message-lock-lost", c.size);
    pn_message_free(back);
    pn_message_free(resp);
    pn_message_free(req);
}

static void test_success_envelope_has_no_condition(void **state)
{
    (void)state;
    pn_message_t *req = pn_message();
    pn_message_set_id(req, (pn_atom_t){.type = PN_ULONG, .u.as_ulong = 42}); /* pyamqp's counter */
    for (int i = 0; i < 2; i++) {
        sb_status st = i ? SB_NO_CONTENT : SB_OK;
        pn_message_t *resp = mgmt_build_response(req, st, i ? "No Content" : "OK");
        pn_message_t *back = roundtrip(resp);
        assert_int_equal(pn_message_get_correlation_id(back).type, PN_ULONG);
        assert_int_equal(pn_message_get_correlation_id(back).u.as_ulong, 42);
        pn_data_t *p = pn_message_properties(back);
        find(p, "statusCode");
        assert_int_equal(pn_data_get_int(p), i ? 204 : 200);
        assert_false(has_key(p, "errorCondition"));
        pn_message_free(back);
        pn_message_free(resp);
    }
    pn_message_free(req);
}

static void test_not_implemented_and_argument_codes(void **state)
{
    (void)state;
    pn_message_t *req = pn_message();
    struct {
        sb_status st;
        int code;
        const char *cond;
    } rows[] = {
        {SB_ERR_NOT_IMPLEMENTED, 501, "amqp:not-implemented"},
        {SB_ERR_ARGUMENT, 400, "com.microsoft:argument-error"},
        {SB_ERR_MESSAGE_NOT_FOUND, 404, "com.microsoft:message-not-found"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        pn_message_t *resp = mgmt_build_response(req, rows[i].st, "x");
        pn_message_t *back = roundtrip(resp);
        pn_data_t *p = pn_message_properties(back);
        find(p, "statusCode");
        assert_int_equal(pn_data_get_int(p), rows[i].code);
        find(p, "errorCondition");
        pn_bytes_t c = pn_data_get_symbol(p);
        assert_int_equal(c.size, strlen(rows[i].cond));
        assert_memory_equal(c.start, rows[i].cond, c.size);
        pn_message_free(back);
        pn_message_free(resp);
    }
    pn_message_free(req);
}

/* ---- body readers ---- */

static pn_data_t *body_map(void)
{
    pn_data_t *d = pn_data(0);
    pn_data_put_map(d);
    pn_data_enter(d);
    return d;
}

static void key(pn_data_t *d, const char *k) { pn_data_put_string(d, pn_bytes(strlen(k), k)); }

static void test_integer_readers(void **state)
{
    (void)state;
    pn_data_t *d = body_map();
    key(d, "from-sequence-number");
    pn_data_put_long(d, 1234567890123LL);
    key(d, "message-count");
    pn_data_put_int(d, 25);
    key(d, "receiver-settle-mode");
    pn_data_put_uint(d, 1);
    key(d, "as-ubyte");
    pn_data_put_ubyte(d, 0);
    key(d, "a-null");
    pn_data_put_null(d);
    key(d, "a-string");
    pn_data_put_string(d, pn_bytes(3, "one"));
    pn_data_exit(d);
    char err[256];
    int64_t v = -1;
    assert_int_equal(mgmt_arg_long(d, "from-sequence-number", true, &v, err, sizeof err), 0);
    assert_int_equal(v, 1234567890123LL);
    assert_int_equal(mgmt_arg_long(d, "message-count", true, &v, err, sizeof err), 0);
    assert_int_equal(v, 25);
    assert_int_equal(mgmt_arg_long(d, "receiver-settle-mode", true, &v, err, sizeof err), 0);
    assert_int_equal(v, 1);
    assert_int_equal(mgmt_arg_long(d, "as-ubyte", true, &v, err, sizeof err), 0);
    assert_int_equal(v, 0);
    /* absent: optional -> 1, required -> -1 naming the key and the type */
    assert_int_equal(mgmt_arg_long(d, "nope", false, &v, err, sizeof err), 1);
    assert_int_equal(mgmt_arg_long(d, "nope", true, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "'nope'"));
    assert_non_null(strstr(err, "integer"));
    /* a null value counts as absent (pyamqp sends nulls) */
    assert_int_equal(mgmt_arg_long(d, "a-null", false, &v, err, sizeof err), 1);
    /* wrong type */
    assert_int_equal(mgmt_arg_long(d, "a-string", true, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "'a-string' must be an integer, not string"));
    pn_data_free(d);
}

static void test_string_and_timestamp_readers(void **state)
{
    (void)state;
    pn_data_t *d = body_map();
    key(d, "disposition-status");
    pn_data_put_string(d, pn_bytes(9, "completed"));
    key(d, "symbolic");
    pn_data_put_symbol(d, pn_bytes(3, "sym"));
    key(d, "enqueued-time-utc");
    pn_data_put_timestamp(d, 1700000000123LL);
    key(d, "count");
    pn_data_put_int(d, 3);
    pn_data_exit(d);
    char err[256], buf[16];
    assert_int_equal(mgmt_arg_string(d, "disposition-status", true, buf, sizeof buf, err, sizeof err), 0);
    assert_string_equal(buf, "completed");
    assert_int_equal(mgmt_arg_string(d, "symbolic", true, buf, sizeof buf, err, sizeof err), 0);
    assert_string_equal(buf, "sym");
    char tiny[4];
    assert_int_equal(mgmt_arg_string(d, "disposition-status", true, tiny, sizeof tiny, err, sizeof err), -1);
    assert_non_null(strstr(err, "limit is 3"));
    assert_int_equal(mgmt_arg_string(d, "count", true, buf, sizeof buf, err, sizeof err), -1);
    assert_non_null(strstr(err, "must be a string, not int"));
    int64_t ms = 0;
    bool flag = true;
    assert_int_equal(mgmt_arg_bool(d, "absent", false, &flag, err, sizeof err), 1);
    assert_true(flag);
    assert_int_equal(mgmt_arg_bool(d, "count", false, &flag, err, sizeof err), -1);
    assert_non_null(strstr(err, "'count' must be a boolean, not int"));
    assert_int_equal(mgmt_arg_timestamp(d, "enqueued-time-utc", true, &ms, err, sizeof err), 0);
    assert_int_equal(ms, 1700000000123LL);
    assert_int_equal(mgmt_arg_timestamp(d, "disposition-status", true, &ms, err, sizeof err), -1);
    assert_non_null(strstr(err, "timestamp"));
    pn_data_free(d);
}

static void test_array_readers(void **state)
{
    (void)state;
    pn_data_t *d = body_map();
    key(d, "sequence-numbers"); /* JS: wrap_array(..., 0x81) */
    pn_data_put_array(d, false, PN_LONG);
    pn_data_enter(d);
    pn_data_put_long(d, 7);
    pn_data_put_long(d, 9);
    pn_data_exit(d);
    key(d, "as-list"); /* lenient: a list of integers */
    pn_data_put_list(d);
    pn_data_enter(d);
    pn_data_put_int(d, 5);
    pn_data_exit(d);
    key(d, "lock-tokens");
    pn_data_put_array(d, false, PN_UUID);
    pn_data_enter(d);
    pn_uuid_t u;
    memcpy(u.bytes, UUID_A, 16);
    pn_data_put_uuid(d, u);
    pn_data_exit(d);
    key(d, "empty");
    pn_data_put_array(d, false, PN_UUID);
    key(d, "mixed");
    pn_data_put_list(d);
    pn_data_enter(d);
    pn_data_put_long(d, 1);
    pn_data_put_string(d, pn_bytes(1, "x"));
    pn_data_exit(d);
    key(d, "scalar");
    pn_data_put_long(d, 1);
    pn_data_exit(d);

    char err[256];
    int64_t *v;
    size_t n;
    assert_int_equal(mgmt_arg_long_array(d, "sequence-numbers", &v, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(v[0], 7);
    assert_int_equal(v[1], 9);
    free(v);
    assert_int_equal(mgmt_arg_long_array(d, "as-list", &v, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0], 5);
    free(v);
    uint8_t (*t)[16];
    assert_int_equal(mgmt_arg_uuid_array(d, "lock-tokens", &t, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_memory_equal(t[0], UUID_A, 16); /* RFC order, no swap */
    free(t);
    assert_int_equal(mgmt_arg_uuid_array(d, "empty", &t, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "1 to"));
    assert_int_equal(mgmt_arg_long_array(d, "mixed", &v, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "item 1 is string"));
    assert_int_equal(mgmt_arg_uuid_array(d, "sequence-numbers", &t, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "array of uuid; item 0 is long"));
    assert_int_equal(mgmt_arg_long_array(d, "scalar", &v, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "'scalar' must be an array of long, not long"));
    assert_int_equal(mgmt_arg_long_array(d, "missing", &v, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "no 'missing'"));
    pn_data_free(d);
}

static void test_map_find_needs_a_map(void **state)
{
    (void)state;
    pn_data_t *d = pn_data(0);
    pn_data_put_string(d, pn_bytes(3, "abc"));
    assert_false(mgmt_map_find(d, "abc"));
    pn_data_free(d);
    d = pn_data(0);
    assert_false(mgmt_map_find(d, "x")); /* empty body */
    pn_data_free(d);
}

/* ---- response bodies: arrays where .NET wants arrays ---- */

static void test_arrays_in_bodies(void **state)
{
    (void)state;
    pn_message_t *m = pn_message();
    pn_data_t *b = pn_message_body(m);
    pn_data_put_map(b);
    pn_data_enter(b);
    int64_t seqs[] = {3, 4, 5};
    mgmt_put_array(b, "sequence-numbers", PN_LONG, seqs, 3);
    int64_t until[] = {1700000000000LL};
    mgmt_put_array(b, "expirations", PN_TIMESTAMP, until, 1);
    pn_data_exit(b);
    pn_message_t *back = roundtrip(m);
    pn_data_t *d = pn_message_body(back);
    find(d, "sequence-numbers");
    assert_int_equal(pn_data_type(d), PN_ARRAY);
    assert_int_equal(pn_data_get_array_type(d), PN_LONG);
    assert_int_equal(pn_data_get_array(d), 3);
    find(d, "expirations");
    assert_int_equal(pn_data_type(d), PN_ARRAY);
    assert_int_equal(pn_data_get_array_type(d), PN_TIMESTAMP);
    pn_data_enter(d);
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_get_timestamp(d), 1700000000000LL);
    pn_message_free(back);
    pn_message_free(m);
}

/* ---- message entries ---- */

static size_t stored_message(char *buf, size_t cap)
{
    pn_message_t *m = pn_message();
    pn_message_set_id(m, (pn_atom_t){.type = PN_STRING, .u.as_bytes = pn_bytes(4, "m-42")});
    pn_message_set_inferred(m, true);
    pn_data_put_binary(pn_message_body(m), pn_bytes(5, "hello"));
    size_t len = cap;
    assert_int_equal(pn_message_encode(m, buf, &len), 0);
    pn_message_free(m);
    return len;
}

/* Decodes the binary under the cursor as a message. */
static pn_message_t *inner_message(pn_data_t *d)
{
    assert_int_equal(pn_data_type(d), PN_BINARY);
    pn_bytes_t bin = pn_data_get_binary(d);
    pn_message_t *m = pn_message();
    assert_int_equal(pn_message_decode(m, bin.start, bin.size), 0);
    return m;
}

static pn_data_t *annotation(pn_data_t *ann, const char *name)
{
    pn_data_rewind(ann);
    assert_true(pn_data_next(ann));
    pn_data_enter(ann);
    while (pn_data_next(ann)) {
        pn_bytes_t k = pn_data_get_symbol(ann);
        pn_data_next(ann);
        if (k.size == strlen(name) && !memcmp(k.start, name, k.size))
            return ann;
    }
    fail_msg("annotation %s missing", name);
    return NULL;
}

static void test_message_entries(void **state)
{
    (void)state;
    char stored[512];
    size_t len = stored_message(stored, sizeof stored);
    store_mgmt_msg sm = {
        .sequence_number = 77,
        .enqueued_ms = 1700000000000LL,
        .locked_until_ms = 1700000060000LL,
        .ttl_ms = -1,
        .delivery_count = 2,
        .state = 1,
        .locked = true,
        .message_id = "m-42",
        .bytes = (const uint8_t *)stored,
        .len = len,
    };
    memcpy(sm.lock_token, UUID_A, 16);

    pn_message_t *resp = pn_message();
    pn_data_t *b = pn_message_body(resp);
    pn_data_put_map(b);
    pn_data_enter(b);
    mgmt_put_string(b, "messages");
    pn_data_put_list(b);
    pn_data_enter(b);
    assert_int_equal(mgmt_put_message_entry(b, &sm, 0, MGMT_ENTRY_LOCK_TOKEN), 0); /* receive, peek-lock */
    assert_int_equal(mgmt_put_message_entry(b, &sm, 0, MGMT_ENTRY_PEEK), 0); /* peek */
    assert_int_equal(mgmt_put_message_entry(b, &sm, 0, MGMT_ENTRY_PEEK | MGMT_ENTRY_OMIT_BODY), 0);
    pn_data_exit(b);
    pn_data_exit(b);
    pn_message_t *back = roundtrip(resp);
    pn_data_t *d = pn_message_body(back);
    find(d, "messages");
    assert_int_equal(pn_data_type(d), PN_LIST); /* a list, not an array (.NET casts to List<object>) */
    assert_int_equal(pn_data_get_list(d), 3);
    pn_data_enter(d);

    /* the received one: lock-token uuid in the map and in the delivery annotations */
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_MAP);
    pn_data_enter(d);
    bool saw_token = false, saw_message = false;
    pn_message_t *rec = NULL;
    while (pn_data_next(d)) {
        pn_bytes_t k = pn_data_get_string(d);
        pn_data_next(d);
        if (k.size == 10 && !memcmp(k.start, "lock-token", 10)) {
            assert_int_equal(pn_data_type(d), PN_UUID);
            assert_memory_equal(pn_data_get_uuid(d).bytes, UUID_A, 16);
            saw_token = true;
        } else if (k.size == 7 && !memcmp(k.start, "message", 7)) {
            rec = inner_message(d);
            saw_message = true;
        }
    }
    pn_data_exit(d);
    assert_true(saw_token && saw_message);
    assert_int_equal(pn_message_get_delivery_count(rec), 1); /* DeliveryCount - 1 */
    pn_data_t *a = annotation(pn_message_annotations(rec), "x-opt-sequence-number");
    assert_int_equal(pn_data_type(a), PN_LONG);
    assert_int_equal(pn_data_get_long(a), 77);
    a = annotation(pn_message_annotations(rec), "x-opt-message-state");
    assert_int_equal(pn_data_type(a), PN_INT);
    assert_int_equal(pn_data_get_int(a), 1);
    a = annotation(pn_message_annotations(rec), "x-opt-locked-until");
    assert_int_equal(pn_data_get_timestamp(a), 1700000060000LL);
    a = annotation(pn_message_instructions(rec), "x-opt-lock-token");
    assert_int_equal(pn_data_type(a), PN_UUID);
    assert_memory_equal(pn_data_get_uuid(a).bytes, UUID_A, 16);
    pn_message_free(rec);

    /* the peeked one: no lock anywhere, the delivery count as granted so far */
    assert_true(pn_data_next(d));
    pn_data_enter(d);
    pn_message_t *peeked = NULL;
    while (pn_data_next(d)) {
        pn_bytes_t k = pn_data_get_string(d);
        pn_data_next(d);
        assert_false(k.size == 10 && !memcmp(k.start, "lock-token", 10));
        if (k.size == 7 && !memcmp(k.start, "message", 7))
            peeked = inner_message(d);
    }
    assert_non_null(peeked);
    assert_int_equal(pn_message_get_delivery_count(peeked), 2);
    pn_data_t *inst = pn_message_instructions(peeked);
    pn_data_rewind(inst);
    assert_false(pn_data_next(inst) && pn_data_get_map(inst) > 0);
    pn_data_t *ann = pn_message_annotations(peeked);
    pn_data_rewind(ann);
    pn_data_next(ann);
    pn_data_enter(ann);
    while (pn_data_next(ann)) {
        pn_bytes_t k = pn_data_get_symbol(ann);
        assert_false(k.size == 18 && !memcmp(k.start, "x-opt-locked-until", 18));
        pn_data_next(ann);
    }
    pn_data_t *body = pn_message_body(peeked);
    pn_data_rewind(body);
    assert_true(pn_data_next(body));
    assert_int_equal(pn_data_type(body), PN_BINARY);
    assert_memory_equal(pn_data_get_binary(body).start, "hello", 5);
    pn_message_free(peeked);
    pn_data_exit(d);

    /* omit-message-body: the same message without its body */
    assert_true(pn_data_next(d));
    pn_data_enter(d);
    pn_message_t *bare = NULL;
    while (pn_data_next(d)) {
        pn_bytes_t k = pn_data_get_string(d);
        pn_data_next(d);
        if (k.size == 7 && !memcmp(k.start, "message", 7))
            bare = inner_message(d);
    }
    assert_non_null(bare);
    assert_int_equal(pn_message_get_id(bare).u.as_bytes.size, 4);
    assert_memory_equal(pn_message_get_id(bare).u.as_bytes.start, "m-42", 4);
    body = pn_message_body(bare);
    pn_data_rewind(body);
    assert_false(pn_data_next(body));
    pn_message_free(bare);
    pn_message_free(back);
    pn_message_free(resp);
}

/* Encodes a map {k1: v1, ...} of string keys and values as a client would. */
static size_t encode_props(char *buf, size_t cap, const char *const *kv, size_t n)
{
    pn_data_t *d = pn_data(0);
    pn_data_put_map(d);
    pn_data_enter(d);
    for (size_t i = 0; i < n; i++)
        pn_data_put_string(d, pn_bytes(strlen(kv[i]), kv[i]));
    pn_data_exit(d);
    ssize_t len = pn_data_encode(d, buf, cap);
    assert_true(len > 0);
    pn_data_free(d);
    return (size_t)len;
}

/* The application property key of message m as a C string (value string), or NULL. */
static char *app_prop(pn_message_t *m, const char *key, char *out, size_t outlen)
{
    pn_data_t *p = pn_message_properties(m);
    if (!mgmt_map_find(p, key))
        return NULL;
    pn_bytes_t v = pn_data_get_string(p);
    snprintf(out, outlen, "%.*s", (int)v.size, v.start);
    return out;
}

static void test_apply_properties(void **state)
{
    (void)state;
    /* a message with application-properties {color: red, size: L} */
    pn_message_t *m = pn_message();
    pn_message_set_id(m, (pn_atom_t){.type = PN_STRING, .u.as_bytes = pn_bytes(2, "id")});
    pn_data_t *props = pn_message_properties(m);
    pn_data_put_map(props);
    pn_data_enter(props);
    pn_data_put_string(props, pn_bytes(5, "color"));
    pn_data_put_string(props, pn_bytes(3, "red"));
    pn_data_put_string(props, pn_bytes(4, "size"));
    pn_data_put_string(props, pn_bytes(1, "L"));
    pn_data_exit(props);
    pn_message_set_inferred(m, true);
    pn_data_put_binary(pn_message_body(m), pn_bytes(4, "body"));
    char stored[512];
    size_t len = sizeof stored;
    assert_int_equal(pn_message_encode(m, stored, &len), 0);
    pn_message_free(m);

    char mods[256];
    static const char *const kv[] = {"color", "blue", "added", "yes"};
    size_t modslen = encode_props(mods, sizeof mods, kv, 4);
    amqp_buf out = {0};
    assert_int_equal(amqp_apply_properties((uint8_t *)stored, len, (uint8_t *)mods, modslen, &out), 0);
    pn_message_t *back = pn_message();
    assert_int_equal(pn_message_decode(back, (char *)out.data, out.len), 0);
    char v[32];
    assert_string_equal(app_prop(back, "color", v, sizeof v), "blue");
    assert_string_equal(app_prop(back, "size", v, sizeof v), "L");
    assert_string_equal(app_prop(back, "added", v, sizeof v), "yes");
    pn_data_t *body = pn_message_body(back);
    pn_data_rewind(body);
    assert_true(pn_data_next(body));
    assert_memory_equal(pn_data_get_binary(body).start, "body", 4);
    pn_message_free(back);
    amqp_buf_free(&out);

    /* no application-properties yet: the section is added before the body */
    m = pn_message();
    pn_message_set_inferred(m, true);
    pn_data_put_binary(pn_message_body(m), pn_bytes(4, "body"));
    len = sizeof stored;
    assert_int_equal(pn_message_encode(m, stored, &len), 0);
    pn_message_free(m);
    assert_int_equal(amqp_apply_properties((uint8_t *)stored, len, (uint8_t *)mods, modslen, &out), 0);
    amqp_msg parsed;
    assert_int_equal(amqp_msg_parse(out.data, out.len, &parsed, NULL, 0), 0);
    assert_true(parsed.application_properties.len > 0);
    back = pn_message();
    assert_int_equal(pn_message_decode(back, (char *)out.data, out.len), 0);
    assert_string_equal(app_prop(back, "added", v, sizeof v), "yes");
    pn_message_free(back);
    amqp_buf_free(&out);

    /* not a map */
    assert_int_equal(amqp_apply_properties((uint8_t *)stored, len, (const uint8_t *)"\xa1\x01x", 3, &out), -1);
    amqp_buf_free(&out);
}

static void test_sql_array_literals(void **state)
{
    (void)state;
    int64_t v[] = {1, -2, 9223372036854775807LL};
    char *s = store_int8_array_text(v, 3);
    assert_string_equal(s, "{1,-2,9223372036854775807}");
    free(s);
    s = store_int8_array_text(v, 0);
    assert_string_equal(s, "{}");
    free(s);
    const uint8_t t[2][16] = {{0}, {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98,
                                    0xba, 0xdc, 0xfe}};
    s = store_uuid_array_text(t, 2);
    assert_string_equal(s, "{00000000-0000-0000-0000-000000000000,01234567-89ab-cdef-1032-547698badcfe}");
    free(s);
    /* rule names for the story of a topic log entry: quoted, with quotes and backslashes escaped */
    const char *names[] = {"$Default", NULL, "a \"b\", {c}", "back\\slash", ""};
    s = store_text_array_text(names, 5);
    assert_string_equal(s, "{\"$Default\",NULL,\"a \\\"b\\\", {c}\",\"back\\\\slash\",\"\"}");
    free(s);
    s = store_text_array_text(names, 0);
    assert_string_equal(s, "{}");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_envelope),
        cmocka_unit_test(test_success_envelope_has_no_condition),
        cmocka_unit_test(test_not_implemented_and_argument_codes),
        cmocka_unit_test(test_integer_readers),
        cmocka_unit_test(test_string_and_timestamp_readers),
        cmocka_unit_test(test_array_readers),
        cmocka_unit_test(test_map_find_needs_a_map),
        cmocka_unit_test(test_arrays_in_bodies),
        cmocka_unit_test(test_message_entries),
        cmocka_unit_test(test_apply_properties),
        cmocka_unit_test(test_sql_array_literals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
