/* Topic rules over AMQP messages: the read-only view (system and user
 * properties as Service Bus maps them, SQL and correlation filters, missing
 * properties, no heap use per evaluation) and amqp_rule_apply (the copy a
 * subscription keeps, decoded back with Proton). Messages are built with
 * Proton, as an SDK would send them; a footer is appended by hand because
 * pn_message has none. */
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

#include "amqp_filter_msg.h"
#include "amqp_message.h"
#include "amqp_rule_action.h"
#include "ent_filter.h"
#include "filter_fixture.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

#define MSG_CAP 8192
#define ENQ_MS INT64_C(1704067200000) /* 2024-01-01T00:00:00Z */
#define SCHEDULED_MS INT64_C(1900000000000)
#define TICKS_AT_UNIX_EPOCH INT64_C(621355968000000000)
#define GUID_TEXT "a1b2c3d4-0000-4000-8000-000000000001"
#define NOALLOC_ROUNDS 100

/* ---- counting allocations (as test_filter_noalloc.c) ---- */

static int counting __attribute__((unused));
static size_t allocations __attribute__((unused));

#ifndef SANITIZED
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n)
{
    allocations += counting;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    allocations += counting;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    allocations += counting;
    return __libc_realloc(p, n);
}
#endif

/* ---- building messages ---- */

/* A footer section: an empty annotations map (00 53 78 c1 01 00). */
static const uint8_t footer[] = {0x00, 0x53, 0x78, 0xc1, 0x01, 0x00};

typedef struct sample {
    uint8_t buf[MSG_CAP];
    size_t len;
    amqp_msg parsed;
    amqp_filter_view view;
    ent_filter_msg msg;
} sample;

static pn_bytes_t b(const char *s) { return pn_bytes(strlen(s), s); }

static void guid(pn_uuid_t *u)
{
    unsigned char g[16];
    assert_int_equal(ent_fv_parse_uuid(GUID_TEXT, strlen(GUID_TEXT), g), 0);
    memcpy(u->bytes, g, 16);
}

static void put_described(pn_data_t *d, const char *desc)
{
    pn_data_put_described(d);
    pn_data_enter(d);
    pn_data_put_symbol(d, b(desc));
}

static void put_user_properties(pn_data_t *d)
{
    pn_uuid_t u;
    guid(&u);
    pn_data_put_map(d);
    pn_data_enter(d);
    pn_data_put_string(d, b("Color"));
    pn_data_put_string(d, b("red"));
    pn_data_put_string(d, b("qty"));
    pn_data_put_int(d, 5);
    pn_data_put_string(d, b("big"));
    pn_data_put_ulong(d, UINT64_MAX);
    pn_data_put_string(d, b("ub"));
    pn_data_put_ubyte(d, 200);
    pn_data_put_string(d, b("sh"));
    pn_data_put_short(d, -7);
    pn_data_put_string(d, b("by"));
    pn_data_put_byte(d, -1);
    pn_data_put_string(d, b("ui"));
    pn_data_put_uint(d, 4000000000u);
    pn_data_put_string(d, b("lg"));
    pn_data_put_long(d, -9000000000LL);
    pn_data_put_string(d, b("price"));
    pn_data_put_float(d, 2.5f);
    pn_data_put_string(d, b("dbl"));
    pn_data_put_double(d, 1.25);
    pn_data_put_string(d, b("flag"));
    pn_data_put_bool(d, true);
    pn_data_put_string(d, b("when"));
    pn_data_put_timestamp(d, ENQ_MS);
    pn_data_put_string(d, b("guid"));
    pn_data_put_uuid(d, u);
    pn_data_put_string(d, b("sym"));
    pn_data_put_symbol(d, b("abc"));
    pn_data_put_string(d, b("nothing"));
    pn_data_put_null(d);
    pn_data_put_string(d, b("bin"));
    pn_data_put_binary(d, b("xyz"));
    pn_data_put_string(d, b("lst"));
    pn_data_put_list(d);
    pn_data_enter(d);
    pn_data_put_int(d, 1);
    pn_data_exit(d);
    pn_data_put_string(d, b("ch"));
    pn_data_put_char(d, 'x');
    pn_data_put_string(d, b("span")); /* TimeSpan 30 s, as the .NET SDK sends it */
    put_described(d, "com.microsoft:timespan");
    pn_data_put_long(d, 300000000);
    pn_data_exit(d);
    pn_data_put_string(d, b("dto")); /* DateTimeOffset 2024-01-01 */
    put_described(d, "com.microsoft:datetime-offset");
    pn_data_put_long(d, TICKS_AT_UNIX_EPOCH + ENQ_MS * 10000);
    pn_data_exit(d);
    pn_data_put_string(d, b("uri"));
    put_described(d, "com.microsoft:uri");
    pn_data_put_string(d, b("http://x/"));
    pn_data_exit(d);
    pn_data_exit(d);
}

/* Every system property a sender can set, annotations of three kinds, a
 * delivery annotation, user properties of every type, a data body. */
static pn_message_t *full_message(void)
{
    pn_message_t *m = pn_message();
    pn_message_set_id(m, (pn_atom_t){.type = PN_STRING, .u.as_bytes = b("m-1")});
    pn_message_set_correlation_id(m, (pn_atom_t){.type = PN_STRING, .u.as_bytes = b("corr-1")});
    pn_message_set_address(m, "dest");
    pn_message_set_subject(m, "urgent");
    pn_message_set_reply_to(m, "replies");
    pn_message_set_content_type(m, "application/json");
    pn_message_set_group_id(m, "s1");
    pn_message_set_reply_to_group_id(m, "rs1");
    pn_message_set_ttl(m, 30000);
    pn_data_t *ann = pn_message_annotations(m);
    pn_data_put_map(ann);
    pn_data_enter(ann);
    pn_data_put_symbol(ann, b("x-opt-partition-key"));
    pn_data_put_string(ann, b("pk"));
    pn_data_put_symbol(ann, b("x-opt-via-partition-key"));
    pn_data_put_string(ann, b("vpk"));
    pn_data_put_symbol(ann, b("x-opt-scheduled-enqueue-time"));
    pn_data_put_timestamp(ann, SCHEDULED_MS);
    pn_data_put_symbol(ann, b("x-custom"));
    pn_data_put_int(ann, 7);
    pn_data_exit(ann);
    pn_data_t *da = pn_message_instructions(m);
    pn_data_put_map(da);
    pn_data_enter(da);
    pn_data_put_symbol(da, b("x-hop"));
    pn_data_put_string(da, b("one"));
    pn_data_exit(da);
    put_user_properties(pn_message_properties(m));
    pn_message_set_inferred(m, true);
    pn_data_put_binary(pn_message_body(m), b("hello"));
    return m;
}

static pn_message_t *bare_message(void)
{
    pn_message_t *m = pn_message();
    pn_message_set_inferred(m, true);
    pn_data_put_binary(pn_message_body(m), b("body"));
    return m;
}

/* Encodes m (freeing it), appends the footer, parses and views the result. */
static void load(sample *s, pn_message_t *m)
{
    size_t len = sizeof s->buf - sizeof footer;
    assert_int_equal(pn_message_encode(m, (char *)s->buf, &len), 0);
    pn_message_free(m);
    memcpy(s->buf + len, footer, sizeof footer);
    s->len = len + sizeof footer;
    char err[128];
    assert_int_equal(amqp_msg_parse(s->buf, s->len, &s->parsed, err, sizeof err), 0);
    amqp_filter_view_init(&s->view, s->buf, s->len, &s->parsed, ENQ_MS);
    assert_false(s->view.malformed);
    s->msg = amqp_filter_view_msg(&s->view);
}

static void load_bytes(sample *s, const uint8_t *bytes, size_t len)
{
    assert_true(len <= sizeof s->buf);
    memcpy(s->buf, bytes, len);
    s->len = len;
    assert_int_equal(amqp_msg_parse(s->buf, s->len, &s->parsed, NULL, 0), 0);
    amqp_filter_view_init(&s->view, s->buf, s->len, &s->parsed, ENQ_MS);
    s->msg = amqp_filter_view_msg(&s->view);
}

/* ---- filters ---- */

#define T ENT_FILTER_TRUE
#define F ENT_FILTER_FALSE
#define U ENT_FILTER_UNKNOWN
#define E ENT_FILTER_ERROR

typedef struct eval_case {
    const char *expr;
    ent_filter_result want;
} eval_case;

static int run_cases(const ent_filter_msg *msg, const eval_case *cases, size_t n, const ent_filter_prop *params,
                     size_t nparams)
{
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        ent_filter *f;
        ent_filter_error err;
        if (ent_filter_parse(cases[i].expr, strlen(cases[i].expr), params, nparams, &f, &err) != 0) {
            print_error("row %zu: \"%s\" does not parse: %s\n", i, cases[i].expr, err.message);
            failures++;
            continue;
        }
        ent_filter_result r = ent_filter_eval(f, msg, &err);
        if (r != cases[i].want) {
            print_error("row %zu: \"%s\" gave %d, want %d (%s)\n", i, cases[i].expr, r, cases[i].want,
                        r == E ? err.message : "");
            failures++;
        }
        ent_filter_free(f);
    }
    return failures;
}

static const eval_case sys_cases[] = {
    {"sys.MessageId = 'm-1'", T},
    {"sys.CorrelationId = 'corr-1'", T},
    {"sys.To = 'dest'", T},
    {"sys.ReplyTo = 'replies'", T},
    {"sys.Label = 'urgent'", T},
    {"sys.subject = 'urgent'", T},
    {"sys.Label = 'URGENT'", F},
    {"sys.SessionId = 's1'", T},
    {"sys.ReplyToSessionId = 'rs1'", T},
    {"sys.ContentType = 'application/json'", T},
    {"sys.PartitionKey = 'pk'", T},
    {"sys.ViaPartitionKey = 'vpk'", T},
    {"'' + sys.ScheduledEnqueueTimeUtc = '2030-03-17T17:46:40.000Z'", T},
    {"'' + sys.TimeToLive = '00:00:30'", T},
    {"sys.EnqueuedTimeUtc = when", T},
    {"sys.EnqueuedTimeUtc + sys.TimeToLive > sys.EnqueuedTimeUtc", T},
    {"sys.Size = @size", T},
    {"sys.SequenceNumber = 1", E},
    {"sys.LockToken IS NULL", T},
    {"EXISTS(sys.DeliveryCount)", F},
    {"sys.ExpiresAtUtc > sys.EnqueuedTimeUtc", E},
    {"sys.DeadLetterSource IS NULL", T},
};

static void test_system_properties(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    ent_filter_prop size = {"@size", ent_fv_int((int64_t)s.len)};
    assert_int_equal(run_cases(&s.msg, sys_cases, sizeof sys_cases / sizeof sys_cases[0], &size, 1), 0);
}

/* message-id and correlation-id of each AMQP id type, shown as text. */
static void test_id_types(void **state)
{
    (void)state;
    pn_uuid_t u;
    guid(&u);
    const pn_atom_t ids[] = {
        {.type = PN_ULONG, .u.as_ulong = 42},
        {.type = PN_UUID, .u.as_uuid = u},
        {.type = PN_BINARY, .u.as_bytes = {2, "\x01\xab"}},
    };
    const char *texts[] = {"42", GUID_TEXT, "01ab"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        pn_message_t *m = bare_message();
        pn_message_set_id(m, ids[i]);
        pn_message_set_correlation_id(m, ids[i]);
        sample s;
        load(&s, m);
        ent_filter_value v;
        assert_int_equal(amqp_filter_view_get_sys(&s.view, ENT_SYS_MESSAGE_ID, &v), 1);
        assert_int_equal(v.type, ENT_FV_STRING);
        assert_int_equal(v.u.s.len, strlen(texts[i]));
        assert_memory_equal(v.u.s.ptr, texts[i], v.u.s.len);
        assert_int_equal(amqp_filter_view_get_sys(&s.view, ENT_SYS_CORRELATION_ID, &v), 1);
        assert_int_equal(v.u.s.len, strlen(texts[i]));
        assert_memory_equal(v.u.s.ptr, texts[i], v.u.s.len);
    }
}

typedef struct user_case {
    const char *name;
    const char *want; /* fix_value_text(), or NULL: absent */
} user_case;

static const user_case user_cases[] = {
    {"Color", "s:'red'"},
    {"color", "s:'red'"},
    {"COLOR", "s:'red'"},
    {"qty", "i:5"},
    {"big", "d:1.84467e+19"}, /* uint64 above INT64_MAX */
    {"ub", "i:200"},
    {"sh", "i:-7"},
    {"by", "i:-1"},
    {"ui", "i:4000000000"},
    {"lg", "i:-9000000000"},
    {"price", "d:2.5"},
    {"dbl", "d:1.25"},
    {"flag", "b:true"},
    {"when", "t:2024-01-01T00:00:00.000Z"},
    {"guid", "g:" GUID_TEXT},
    {"sym", "s:'abc'"},
    {"nothing", "n:null"},
    {"bin", "n:null"}, /* no rule-language type: present, NULL */
    {"lst", "n:null"},
    {"ch", "n:null"},
    {"span", "ts:30000"},
    {"dto", "t:2024-01-01T00:00:00.000Z"},
    {"uri", "s:'http://x/'"},
    {"missing", NULL},
    {"colo", NULL},
};

static void test_user_property_types(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    int failures = 0;
    for (size_t i = 0; i < sizeof user_cases / sizeof user_cases[0]; i++) {
        const user_case *c = &user_cases[i];
        ent_filter_value v;
        char got[128] = "absent";
        if (s.msg.ops->get_user(s.msg.self, c->name, strlen(c->name), &v))
            fix_value_text(&v, got, sizeof got);
        if (strcmp(got, c->want ? c->want : "absent") != 0) {
            print_error("%s: got %s, want %s\n", c->name, got, c->want ? c->want : "absent");
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static const eval_case user_cases_sql[] = {
    {"color = 'red' AND qty > 4", T},
    {"COLOR = 'red'", T},
    {"user.Color LIKE 'r%'", T},
    {"big > 9.2E18", T},
    {"price + dbl = 3.75", T},
    {"flag AND ub = 200", T},
    {"guid = '" GUID_TEXT "'", T},
    {"when = dto", T},
    {"span = sys.TimeToLive", T},
    {"nothing IS NULL AND EXISTS(nothing)", T},
    {"bin = 'xyz'", U},
    {"EXISTS(bin)", T},
    {"missing = 1", U},
    {"EXISTS(missing)", F},
    {"sym IN ('abc', 'def')", T},
};

static void test_user_property_filters(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    assert_int_equal(run_cases(&s.msg, user_cases_sql, sizeof user_cases_sql / sizeof user_cases_sql[0], NULL, 0), 0);
}

/* An unlabelled message with no properties at all: string system properties
 * are NULL (no match, no error); the broker's defaults stand in for the rest. */
static const eval_case missing_cases[] = {
    {"sys.Label = 'x'", U},
    {"sys.Label IS NULL", T},
    {"sys.MessageId IS NULL", T},
    {"sys.CorrelationId = 'c' OR sys.To = 't' OR sys.ReplyTo = 'r'", U},
    {"sys.SessionId IS NULL AND sys.ReplyToSessionId IS NULL AND sys.ContentType IS NULL", T},
    {"sys.PartitionKey IS NULL AND sys.ViaPartitionKey IS NULL", T},
    {"sys.ScheduledEnqueueTimeUtc < sys.EnqueuedTimeUtc", T},
    {"'' + sys.TimeToLive = '10675199.02:48:05.4770000'", T}, /* TimeSpan.MaxValue */
    {"EXISTS(sys.TimeToLive)", F},
    {"color = 'red'", U},
    {"NOT color = 'red'", U},
    {"sys.Size > 0", T},
};

static void test_missing_properties(void **state)
{
    (void)state;
    sample s;
    load(&s, bare_message());
    assert_int_equal(run_cases(&s.msg, missing_cases, sizeof missing_cases / sizeof missing_cases[0], NULL, 0), 0);
}

static void test_correlation_filter(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    ent_filter_prop props[] = {{"qty", ent_fv_int(5)}, {"color", ent_fv_cstr("red")}};
    ent_filter_correlation spec = {.label = "urgent", .session_id = "s1", .properties = props, .nproperties = 2};
    ent_filter *f;
    ent_filter_error err;
    assert_int_equal(ent_filter_new_correlation(&spec, &f, &err), 0);
    assert_int_equal(ent_filter_eval(f, &s.msg, &err), T);
    ent_filter_free(f);
    spec.content_type = "text/plain";
    assert_int_equal(ent_filter_new_correlation(&spec, &f, &err), 0);
    assert_int_equal(ent_filter_eval(f, &s.msg, &err), F);
    ent_filter_free(f);

    sample bare;
    load(&bare, bare_message());
    ent_filter_correlation only_label = {.label = "urgent"};
    assert_int_equal(ent_filter_new_correlation(&only_label, &f, &err), 0);
    assert_int_equal(ent_filter_eval(f, &bare.msg, &err), F);
    ent_filter_free(f);
}

static void test_view_does_not_allocate(void **state)
{
    (void)state;
#ifdef SANITIZED
    skip();
#else
    sample s;
    load(&s, full_message());
    const char *text = "color = 'red' AND sys.Label LIKE 'urg%' AND span = sys.TimeToLive AND sys.PartitionKey = 'pk' "
                       "AND sys.CorrelationId IS NOT NULL AND missing IS NULL";
    ent_filter *f;
    ent_filter_error err;
    assert_int_equal(ent_filter_parse(text, strlen(text), NULL, 0, &f, &err), 0);
    allocations = 0;
    counting = 1;
    for (int i = 0; i < NOALLOC_ROUNDS; i++) {
        amqp_filter_view_init(&s.view, s.buf, s.len, &s.parsed, ENQ_MS);
        ent_filter_msg msg = amqp_filter_view_msg(&s.view);
        assert_int_equal(ent_filter_eval(f, &msg, &err), T);
    }
    counting = 0;
    assert_int_equal(allocations, 0);
    ent_filter_free(f);
#endif
}

/* ---- actions ---- */

static bool map_find(pn_data_t *d, const char *key)
{
    pn_data_rewind(d);
    if (!pn_data_next(d) || pn_data_type(d) != PN_MAP)
        return false;
    pn_data_enter(d);
    while (pn_data_next(d)) {
        pn_bytes_t k = pn_data_type(d) == PN_STRING ? pn_data_get_string(d) : pn_data_get_symbol(d);
        bool hit = k.size == strlen(key) && memcmp(k.start, key, k.size) == 0;
        if (!pn_data_next(d))
            return false;
        if (hit)
            return true;
    }
    return false;
}

static size_t map_count(pn_data_t *d)
{
    pn_data_rewind(d);
    if (!pn_data_next(d) || pn_data_type(d) != PN_MAP)
        return 0;
    return pn_data_get_map(d) / 2;
}

static void assert_string_prop(pn_data_t *d, const char *key, const char *want)
{
    assert_true(map_find(d, key));
    assert_int_equal(pn_data_type(d), PN_STRING);
    pn_bytes_t v = pn_data_get_string(d);
    assert_int_equal(v.size, strlen(want));
    assert_memory_equal(v.start, want, v.size);
}

typedef struct applied {
    uint8_t *bytes;
    size_t len;
    amqp_msg parsed;
    pn_message_t *m;
} applied;

static int apply(const sample *s, const char *action_text, const char *rule, applied *a, ent_filter_error *err)
{
    ent_filter_action *action = NULL;
    if (action_text)
        assert_int_equal(ent_filter_action_parse(action_text, strlen(action_text), NULL, 0, &action, err), 0);
    memset(a, 0, sizeof *a);
    int rc = amqp_rule_apply(s->buf, s->len, &s->parsed, ENQ_MS, action, rule, &a->bytes, &a->len, err);
    ent_filter_action_free(action);
    if (rc != 0) {
        assert_null(a->bytes);
        return rc;
    }
    char why[128];
    assert_int_equal(amqp_msg_parse(a->bytes, a->len, &a->parsed, why, sizeof why), 0);
    /* Proton 0.37 has no footer: decode what precedes it */
    a->m = pn_message();
    assert_int_equal(pn_message_decode(a->m, (const char *)a->bytes, a->len - a->parsed.footer.len), 0);
    return 0;
}

static void applied_free(applied *a)
{
    pn_message_free(a->m);
    free(a->bytes);
}

static void assert_same_span(amqp_span x, amqp_span y)
{
    assert_int_equal(x.len, y.len);
    if (x.len)
        assert_memory_equal(x.p, y.p, x.len);
}

static void test_apply_user_properties(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    applied a;
    ent_filter_error err;
    assert_int_equal(apply(&s, "SET qty = qty + 1; SET newp = 'x'; SET COLOR2 = color; REMOVE color", "r1", &a, &err),
                     0);
    /* only application-properties changed; everything else byte for byte */
    assert_same_span(a.parsed.header, s.parsed.header);
    assert_same_span(a.parsed.delivery_annotations, s.parsed.delivery_annotations);
    assert_same_span(a.parsed.message_annotations, s.parsed.message_annotations);
    assert_same_span(a.parsed.properties, s.parsed.properties);
    assert_same_span(a.parsed.body, s.parsed.body);
    assert_same_span(a.parsed.footer, s.parsed.footer);

    pn_data_t *p = pn_message_properties(a.m);
    assert_false(map_find(p, "Color"));
    assert_true(map_find(p, "qty"));
    assert_int_equal(pn_data_type(p), PN_LONG);
    assert_int_equal(pn_data_get_long(p), 6);
    assert_string_prop(p, "newp", "x");
    assert_string_prop(p, "COLOR2", "red");
    assert_string_prop(p, "RuleName", "r1");
    /* untouched entries keep their AMQP types */
    assert_true(map_find(p, "ub"));
    assert_int_equal(pn_data_type(p), PN_UBYTE);
    assert_true(map_find(p, "price"));
    assert_int_equal(pn_data_type(p), PN_FLOAT);
    assert_true(map_find(p, "span"));
    assert_int_equal(pn_data_type(p), PN_DESCRIBED);
    assert_true(map_find(p, "bin"));
    assert_int_equal(pn_data_type(p), PN_BINARY);
    assert_int_equal(map_count(p), 21 - 1 + 3); /* 21 sent, color gone, newp, COLOR2, RuleName */
    applied_free(&a);
}

static void test_apply_value_types(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    applied a;
    ent_filter_error err;
    const char *action = "SET i = 1, SET d = 2.5, SET s = 'x', SET b = TRUE, SET t = sys.EnqueuedTimeUtc, "
                         "SET g = newid(), SET ts = sys.TimeToLive, SET n = NULL, SET sh = 1";
    assert_int_equal(apply(&s, action, "r", &a, &err), 0);
    pn_data_t *p = pn_message_properties(a.m);
    static const struct {
        const char *key;
        pn_type_t type;
    } want[] = {{"i", PN_LONG},      {"d", PN_DOUBLE}, {"s", PN_STRING},    {"b", PN_BOOL}, {"t", PN_TIMESTAMP},
                {"g", PN_UUID},      {"n", PN_NULL},   {"ts", PN_DESCRIBED}, {"sh", PN_LONG}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_true(map_find(p, want[i].key));
        if (pn_data_type(p) != want[i].type)
            fail_msg("%s: type %d, want %d", want[i].key, pn_data_type(p), want[i].type);
    }
    assert_true(map_find(p, "d"));
    assert_true(pn_data_get_double(p) == 2.5);
    assert_true(map_find(p, "t"));
    assert_int_equal(pn_data_get_timestamp(p), ENQ_MS);
    assert_true(map_find(p, "ts")); /* TimeSpan as .NET sends it: com.microsoft:timespan, long ticks */
    pn_data_enter(p);
    assert_true(pn_data_next(p));
    pn_bytes_t desc = pn_data_get_symbol(p);
    assert_int_equal(desc.size, strlen("com.microsoft:timespan"));
    assert_memory_equal(desc.start, "com.microsoft:timespan", desc.size);
    assert_true(pn_data_next(p));
    assert_int_equal(pn_data_get_long(p), 300000000);

    /* and the rules read them back as they were written */
    sample again;
    load_bytes(&again, a.bytes, a.len);
    static const eval_case back[] = {
        {"i = 1 AND d = 2.5 AND s = 'x' AND b AND t = sys.EnqueuedTimeUtc AND ts = sys.TimeToLive", T},
        {"n IS NULL AND EXISTS(n) AND g IS NOT NULL AND sh = 1", T},
        {"RuleName = 'r'", T},
    };
    assert_int_equal(run_cases(&again.msg, back, sizeof back / sizeof back[0], NULL, 0), 0);
    applied_free(&a);
}

static void test_apply_system_properties(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    applied a;
    ent_filter_error err;
    const char *action = "SET sys.Label = 'routed', SET sys.ContentType = 'text/plain', REMOVE sys.CorrelationId, "
                         "SET sys.ReplyToSessionId = sys.SessionId + '-r'";
    assert_int_equal(apply(&s, action, "r", &a, &err), 0);
    assert_string_equal(pn_message_get_subject(a.m), "routed");
    assert_string_equal(pn_message_get_content_type(a.m), "text/plain");
    assert_int_equal(pn_message_get_correlation_id(a.m).type, PN_NULL);
    assert_string_equal(pn_message_get_reply_to_group_id(a.m), "s1-r");
    /* the fields the action left alone */
    pn_atom_t id = pn_message_get_id(a.m);
    assert_int_equal(id.type, PN_STRING);
    assert_memory_equal(id.u.as_bytes.start, "m-1", 3);
    assert_string_equal(pn_message_get_address(a.m), "dest");
    assert_string_equal(pn_message_get_reply_to(a.m), "replies");
    assert_string_equal(pn_message_get_group_id(a.m), "s1");
    assert_same_span(a.parsed.header, s.parsed.header);
    assert_same_span(a.parsed.message_annotations, s.parsed.message_annotations);
    assert_same_span(a.parsed.body, s.parsed.body);
    assert_same_span(a.parsed.footer, s.parsed.footer);
    applied_free(&a);

    /* header and message-annotations change only when the action says so */
    action = "SET sys.TimeToLive = sys.TimeToLive + sys.TimeToLive, SET sys.PartitionKey = 'pk2', "
             "REMOVE sys.ScheduledEnqueueTimeUtc";
    assert_int_equal(apply(&s, action, NULL, &a, &err), 0);
    assert_int_equal(pn_message_get_ttl(a.m), 60000);
    pn_data_t *ann = pn_message_annotations(a.m);
    assert_false(map_find(ann, "x-opt-scheduled-enqueue-time"));
    assert_string_prop(ann, "x-opt-partition-key", "pk2");
    assert_string_prop(ann, "x-opt-via-partition-key", "vpk");
    assert_true(map_find(ann, "x-custom"));
    assert_int_equal(pn_data_get_int(ann), 7);
    assert_same_span(a.parsed.properties, s.parsed.properties);
    assert_same_span(a.parsed.application_properties, s.parsed.application_properties); /* no RuleName asked */
    assert_same_span(a.parsed.delivery_annotations, s.parsed.delivery_annotations);
    assert_same_span(a.parsed.body, s.parsed.body);
    assert_int_equal(a.parsed.ttl_ms, 60000);
    assert_int_equal(a.parsed.scheduled_enqueue_ms, 0);
    applied_free(&a);
}

/* A message without application-properties (or properties, or header) gets
 * them, in the right place. */
static void test_apply_to_bare_message(void **state)
{
    (void)state;
    sample s;
    load(&s, bare_message());
    assert_int_equal(s.parsed.application_properties.len, 0);
    applied a;
    ent_filter_error err;
    assert_int_equal(apply(&s, "SET a = 1, SET sys.Label = 'l', SET sys.TimeToLive = sys.TimeToLive", "$Default",
                           &a, &err),
                     0);
    pn_data_t *p = pn_message_properties(a.m);
    assert_int_equal(map_count(p), 2);
    assert_true(map_find(p, "a"));
    assert_int_equal(pn_data_get_long(p), 1);
    assert_string_prop(p, "RuleName", "$Default");
    assert_string_equal(pn_message_get_subject(a.m), "l");
    /* the unset TimeToLive read as TimeSpan.MaxValue: capped to the header's uint */
    assert_int_equal(pn_message_get_ttl(a.m), UINT32_MAX);
    assert_same_span(a.parsed.body, s.parsed.body);
    assert_same_span(a.parsed.footer, s.parsed.footer);
    applied_free(&a);

    /* no action: RuleName only */
    assert_int_equal(apply(&s, NULL, "r0", &a, &err), 0);
    p = pn_message_properties(a.m);
    assert_int_equal(map_count(p), 1);
    assert_string_prop(p, "RuleName", "r0");
    assert_same_span(a.parsed.properties, s.parsed.properties);
    assert_same_span(a.parsed.header, s.parsed.header);
    applied_free(&a);
}

static void test_apply_rule_name_overwritten(void **state)
{
    (void)state;
    pn_message_t *m = bare_message();
    pn_data_t *d = pn_message_properties(m);
    pn_data_put_map(d);
    pn_data_enter(d);
    pn_data_put_string(d, b("rulename"));
    pn_data_put_string(d, b("old"));
    pn_data_put_string(d, b("keep"));
    pn_data_put_int(d, 1);
    pn_data_exit(d);
    sample s;
    load(&s, m);
    applied a;
    ent_filter_error err;
    assert_int_equal(apply(&s, "SET was = RuleName, SET RuleName = 'from action'", "r2", &a, &err), 0);
    pn_data_t *p = pn_message_properties(a.m);
    assert_false(map_find(p, "rulename"));
    assert_string_prop(p, "RuleName", "r2");
    assert_string_prop(p, "was", "old");
    assert_true(map_find(p, "keep"));
    assert_int_equal(pn_data_type(p), PN_INT);
    assert_int_equal(map_count(p), 3);
    applied_free(&a);
}

static void test_apply_errors(void **state)
{
    (void)state;
    sample s;
    load(&s, full_message());
    applied a;
    ent_filter_error err;
    /* a TimeToLive of zero is refused, as ServiceBusMessage refuses it */
    assert_int_equal(apply(&s, "SET sys.TimeToLive = sys.TimeToLive - sys.TimeToLive", "r", &a, &err), -1);
    assert_int_equal(err.kind, ENT_FILTER_ERR_MESSAGE);
    assert_string_equal(err.message, "the message refused the change to 'sys.TimeToLive' at column 1");
    /* an evaluation error */
    assert_int_equal(apply(&s, "SET x = sys.SequenceNumber", "r", &a, &err), -1);
    assert_int_equal(err.kind, ENT_FILTER_ERR_EVAL);
    assert_string_equal(err.message, "system property 'sys.SequenceNumber' is not set at column 9");
    /* a MessageId over 128 characters */
    char text[400];
    snprintf(text, sizeof text, "SET sys.MessageId = '%0129d'", 0);
    assert_int_equal(apply(&s, text, "r", &a, &err), -1);
    assert_int_equal(err.kind, ENT_FILTER_ERR_MESSAGE);

    /* application-properties that is not a map: refused, not dropped */
    amqp_buf m = {0};
    amqp_buf_descriptor(&m, AMQP_SEC_APPLICATION_PROPERTIES);
    size_t mark = amqp_buf_list_begin(&m);
    amqp_buf_compound_end(&m, mark, 0);
    amqp_buf_descriptor(&m, AMQP_SEC_AMQP_VALUE);
    amqp_buf_null(&m);
    sample bad;
    load_bytes(&bad, m.data, m.len);
    amqp_buf_free(&m);
    assert_true(bad.view.malformed);
    ent_filter_value v;
    assert_int_equal(amqp_filter_view_get_user(&bad.view, "x", 1, &v), 0);
    uint8_t *out = (uint8_t *)1;
    size_t outlen = 1;
    assert_int_equal(amqp_rule_apply(bad.buf, bad.len, &bad.parsed, ENQ_MS, NULL, "r", &out, &outlen, &err), -1);
    assert_null(out);
    assert_int_equal(err.kind, ENT_FILTER_ERR_MESSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_system_properties),
        cmocka_unit_test(test_id_types),
        cmocka_unit_test(test_user_property_types),
        cmocka_unit_test(test_user_property_filters),
        cmocka_unit_test(test_missing_properties),
        cmocka_unit_test(test_correlation_filter),
        cmocka_unit_test(test_view_does_not_allocate),
        cmocka_unit_test(test_apply_user_properties),
        cmocka_unit_test(test_apply_value_types),
        cmocka_unit_test(test_apply_system_properties),
        cmocka_unit_test(test_apply_to_bare_message),
        cmocka_unit_test(test_apply_rule_name_overwritten),
        cmocka_unit_test(test_apply_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
