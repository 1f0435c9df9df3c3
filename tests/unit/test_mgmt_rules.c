/* The pure parts of the rule operations (amqp10/mgmt_rules.h): reading an
 * add-rule body as the SDKs and raw clients encode it (SQL, correlation and
 * absent filters, actions, @parameters, typed property values, .NET's
 * described timespan and datetime-offset), refusing what Service Bus refuses
 * (names, unparsable expressions with their column, two filters), and the
 * enumerate-rules answer: descriptor codes, field order and AMQP types, after
 * a round trip through Proton's encoder as a client would see it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <proton/codec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_props.h"
#include "mgmt_rules.h"
#include "store_rule_json.h"

/* 2024-05-01T12:00:00.250Z */
#define WHEN_MS INT64_C(1714564800250)

static const uint8_t UUID_A[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                   0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};

/* ---- building request bodies ---- */

static void str(pn_data_t *d, const char *s) { pn_data_put_string(d, pn_bytes(strlen(s), s)); }
static void sym(pn_data_t *d, const char *s) { pn_data_put_symbol(d, pn_bytes(strlen(s), s)); }

static void map_begin(pn_data_t *d)
{
    pn_data_put_map(d);
    pn_data_enter(d);
}

static void end(pn_data_t *d) { pn_data_exit(d); }

static void kv(pn_data_t *d, const char *k, const char *v)
{
    str(d, k);
    if (v)
        str(d, v);
    else
        pn_data_put_null(d);
}

/* {"rule-name": name, "rule-description": {<caller fills>... */
static pn_data_t *request(const char *name)
{
    pn_data_t *d = pn_data(0);
    map_begin(d);
    kv(d, "rule-name", name);
    str(d, "rule-description");
    map_begin(d);
    return d;
}

/* ...}} */
static void request_end(pn_data_t *d)
{
    end(d);
    end(d);
}

static void sql_filter(pn_data_t *d, const char *expr)
{
    str(d, "sql-filter");
    map_begin(d);
    kv(d, "expression", expr);
    end(d);
}

static void sql_action(pn_data_t *d, const char *expr)
{
    str(d, "sql-rule-action");
    map_begin(d);
    kv(d, "expression", expr);
    end(d);
}

/* Decodes and expects failure with st and a description containing want. */
static void expect_refused(pn_data_t *d, sb_status want_st, const char *want)
{
    broker_rule_def def;
    sb_status st = SB_OK;
    char err[1024] = "";
    assert_int_equal(mgmt_rule_def_decode(d, &def, &st, err, sizeof err), -1);
    if (st != want_st || !strstr(err, want))
        fail_msg("status %d (expected %d), description \"%s\" (expected it to contain \"%s\")", (int)st,
                 (int)want_st, err, want);
    broker_rule_def_free(&def);
    pn_data_free(d);
}

/* ---- add-rule bodies ---- */

static void test_sql_filter_and_action(void **state)
{
    (void)state;
    pn_data_t *d = request("Big-Red");
    sql_filter(d, "color = 'red' AND quantity > 3");
    sql_action(d, "SET sys.Label = 'big'");
    kv(d, "rule-name", "Big-Red"); /* .NET repeats the name inside the description */
    request_end(d);
    broker_rule_def def;
    sb_status st;
    char err[512];
    assert_int_equal(mgmt_rule_def_decode(d, &def, &st, err, sizeof err), 0);
    assert_int_equal(st, SB_OK);
    assert_string_equal(def.row.name, "Big-Red");
    assert_string_equal(def.row.filter_type, "Sql");
    assert_string_equal(def.row.sql_expression, "color = 'red' AND quantity > 3");
    assert_string_equal(def.row.action_expression, "SET sys.Label = 'big'");
    assert_null(def.row.correlation);
    assert_null(def.row.filter_parameters);
    assert_null(def.row.action_parameters);
    broker_rule_def_free(&def);
    pn_data_free(d);
}

/* .NET sends sql-rule-action: null when there is no action; TrueRuleFilter is sql "1=1", kept as sent. */
static void test_null_action_and_true_as_sql(void **state)
{
    (void)state;
    pn_data_t *d = request("t");
    sql_filter(d, "1=1");
    str(d, "sql-rule-action");
    pn_data_put_null(d);
    request_end(d);
    broker_rule_def def;
    sb_status st;
    char err[512];
    assert_int_equal(mgmt_rule_def_decode(d, &def, &st, err, sizeof err), 0);
    assert_string_equal(def.row.filter_type, "Sql");
    assert_string_equal(def.row.sql_expression, "1=1");
    assert_null(def.row.action_expression);
    broker_rule_def_free(&def);
    pn_data_free(d);
}

/* A description without a filter is RuleDescription's default: TrueFilter. */
static void test_no_filter_is_true(void **state)
{
    (void)state;
    pn_data_t *d = request("everything");
    request_end(d);
    broker_rule_def def;
    sb_status st;
    char err[512];
    assert_int_equal(mgmt_rule_def_decode(d, &def, &st, err, sizeof err), 0);
    assert_string_equal(def.row.filter_type, "True");
    assert_null(def.row.sql_expression);
    broker_rule_def_free(&def);
    pn_data_free(d);
}

static void test_parameters(void **state)
{
    (void)state;
    pn_data_t *d = request("p");
    str(d, "sql-filter");
    map_begin(d);
    kv(d, "expression", "quantity > @min AND color = @color");
    str(d, "parameters");
    map_begin(d);
    str(d, "@min");
    pn_data_put_uint(d, 5);
    sym(d, "@color"); /* keys may be symbols */
    str(d, "red");
    end(d);
    end(d);
    str(d, "sql-rule-action");
    map_begin(d);
    kv(d, "expression", "SET note = @note");
    str(d, "parameters");
    map_begin(d);
    str(d, "@note");
    pn_data_put_timestamp(d, WHEN_MS);
    end(d);
    end(d);
    request_end(d);
    broker_rule_def def;
    sb_status st;
    char err[512];
    assert_int_equal(mgmt_rule_def_decode(d, &def, &st, err, sizeof err), 0);
    assert_string_equal(def.row.filter_parameters, "{\"@color\":\"red\",\"@min\":5}");
    assert_string_equal(def.row.action_parameters,
                        "{\"@note\":{\"type\":\"timestamp\",\"value\":\"2024-05-01T12:00:00.250Z\"}}");
    broker_rule_def_free(&def);
    pn_data_free(d);
}

/* Every correlation field, and properties of each type the SDKs send:
 * int widths, ulong past int64, float, bool, timestamp, uuid, null, and
 * .NET's described timespan / datetime-offset / uri. */
static void test_correlation(void **state)
{
    (void)state;
    pn_data_t *d = request("corr");
    str(d, "correlation-filter");
    map_begin(d);
    kv(d, "correlation-id", "c");
    kv(d, "message-id", "m");
    kv(d, "to", NULL); /* JS sends every key, unset ones null */
    kv(d, "reply-to", "rt");
    kv(d, "label", "l");
    kv(d, "session-id", "s");
    kv(d, "reply-to-session-id", "rts");
    kv(d, "content-type", "ct");
    str(d, "properties");
    map_begin(d);
    str(d, "i");
    pn_data_put_int(d, -7);
    str(d, "u");
    pn_data_put_ulong(d, UINT64_MAX);
    str(d, "f");
    pn_data_put_float(d, 1.5f);
    str(d, "b");
    pn_data_put_bool(d, true);
    str(d, "t");
    pn_data_put_timestamp(d, WHEN_MS);
    str(d, "g");
    pn_uuid_t u;
    memcpy(u.bytes, UUID_A, 16);
    pn_data_put_uuid(d, u);
    str(d, "n");
    pn_data_put_null(d);
    str(d, "span");
    pn_data_put_described(d);
    pn_data_enter(d);
    sym(d, MGMT_DESC_TIMESPAN);
    pn_data_put_long(d, INT64_C(90) * 1000 * ENT_TICKS_PER_MS); /* 90 s */
    end(d);
    str(d, "offset");
    pn_data_put_described(d);
    pn_data_enter(d);
    sym(d, MGMT_DESC_DATETIME_OFFSET);
    pn_data_put_long(d, ENT_TICKS_AT_UNIX_EPOCH + WHEN_MS * ENT_TICKS_PER_MS);
    end(d);
    str(d, "uri");
    pn_data_put_described(d);
    pn_data_enter(d);
    sym(d, MGMT_DESC_URI);
    str(d, "https://example.com/x");
    end(d);
    end(d);
    end(d);
    request_end(d);

    broker_rule_def def;
    sb_status st;
    char err[512];
    assert_int_equal(mgmt_rule_def_decode(d, &def, &st, err, sizeof err), 0);
    assert_string_equal(def.row.filter_type, "Correlation");
    assert_null(def.row.sql_expression);
    /* what the cache will read back */
    ent_filter_correlation c;
    char *storage;
    store_rule_props props;
    assert_int_equal(store_rule_correlation_parse(def.row.correlation, &c, &storage, &props, err, sizeof err), 0);
    assert_string_equal(c.correlation_id, "c");
    assert_string_equal(c.message_id, "m");
    assert_null(c.to);
    assert_string_equal(c.reply_to, "rt");
    assert_string_equal(c.label, "l");
    assert_string_equal(c.session_id, "s");
    assert_string_equal(c.reply_to_session_id, "rts");
    assert_string_equal(c.content_type, "ct");
    assert_int_equal(props.n, 10);
    for (size_t i = 0; i < props.n; i++) {
        const ent_filter_prop *p = &props.props[i];
        const ent_filter_value *v = &p->value;
        if (!strcmp(p->name, "i")) {
            assert_int_equal(v->type, ENT_FV_INT);
            assert_int_equal(v->u.i, -7);
        } else if (!strcmp(p->name, "u")) {
            assert_int_equal(v->type, ENT_FV_DOUBLE);
            assert_true(v->u.d > 1.8e19);
        } else if (!strcmp(p->name, "f")) {
            assert_int_equal(v->type, ENT_FV_DOUBLE);
            assert_true(v->u.d == 1.5);
        } else if (!strcmp(p->name, "b")) {
            assert_int_equal(v->type, ENT_FV_BOOL);
        } else if (!strcmp(p->name, "t") || !strcmp(p->name, "offset")) {
            assert_int_equal(v->type, ENT_FV_TIME);
            assert_int_equal(v->u.i, WHEN_MS);
        } else if (!strcmp(p->name, "g")) {
            assert_int_equal(v->type, ENT_FV_UUID);
            assert_memory_equal(v->u.uuid, UUID_A, 16);
        } else if (!strcmp(p->name, "n")) {
            assert_int_equal(v->type, ENT_FV_NULL);
        } else if (!strcmp(p->name, "span")) {
            assert_int_equal(v->type, ENT_FV_DURATION);
            assert_int_equal(v->u.i, 90000);
        } else if (!strcmp(p->name, "uri")) {
            assert_int_equal(v->type, ENT_FV_STRING);
            assert_memory_equal(v->u.s.ptr, "https://example.com/x", v->u.s.len);
        } else {
            fail_msg("unexpected property %s", p->name);
        }
    }
    free(storage);
    store_rule_props_free(&props);
    broker_rule_def_free(&def);
    pn_data_free(d);
}

/* ---- refusals ---- */

static void test_bad_expressions_carry_their_column(void **state)
{
    (void)state;
    pn_data_t *d = request("bad");
    sql_filter(d, "color = 'red' AND (quantity > 3");
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "The SQL filter of rule 'bad' is invalid: expected ')' at column");

    d = request("bad-action");
    sql_filter(d, "1=1");
    sql_action(d, "SET = 5");
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "The SQL action of rule 'bad-action' is invalid:");

    d = request("no-param");
    sql_filter(d, "quantity > @min");
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "'@min' is not defined");

    d = request("empty-corr");
    str(d, "correlation-filter");
    map_begin(d);
    kv(d, "correlation-id", NULL);
    end(d);
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "The correlation filter of rule 'empty-corr' is invalid");
}

static void test_malformed_descriptions(void **state)
{
    (void)state;
    pn_data_t *d = request("both");
    sql_filter(d, "1=1");
    str(d, "correlation-filter");
    map_begin(d);
    kv(d, "label", "x");
    end(d);
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "both a 'sql-filter' and a 'correlation-filter'");

    d = request("no-expression");
    str(d, "sql-filter");
    map_begin(d);
    end(d);
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "'sql-filter' has no 'expression'");

    d = request("binary");
    str(d, "correlation-filter");
    map_begin(d);
    str(d, "properties");
    map_begin(d);
    str(d, "blob");
    pn_data_put_binary(d, pn_bytes(2, "ab"));
    end(d);
    end(d);
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "The value of 'blob' in the correlation-filter's 'properties' is binary");

    d = pn_data(0); /* no description at all */
    map_begin(d);
    kv(d, "rule-name", "x");
    end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "no 'rule-description'");

    d = pn_data(0);
    map_begin(d);
    str(d, "rule-description");
    map_begin(d);
    end(d);
    end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "'rule-name'");
}

static void test_rule_names(void **state)
{
    (void)state;
    sb_status st;
    char err[256];
    /* 50 characters of two bytes each fit; 51 do not */
    char name[256] = "";
    for (int i = 0; i < ENT_RULE_NAME_MAX; i++)
        strcat(name, "\xc3\xa9");
    assert_int_equal(broker_rule_name_check(name, strlen(name), &st, err, sizeof err), 0);
    strcat(name, "\xc3\xa9");
    assert_int_equal(broker_rule_name_check(name, strlen(name), &st, err, sizeof err), -1);
    assert_int_equal(st, SB_ERR_ARGUMENT_RANGE);
    assert_non_null(strstr(err, "51 characters long; the limit is 50"));
    assert_int_equal(broker_rule_name_check("$Default", 8, &st, err, sizeof err), 0);
    assert_int_equal(broker_rule_name_check("  \t", 3, &st, err, sizeof err), -1);
    assert_int_equal(st, SB_ERR_ARGUMENT);
    assert_int_equal(broker_rule_name_check("", 0, &st, err, sizeof err), -1);
    for (const char *c = ENT_CHILD_NAME_FORBIDDEN_CHARS; *c; c++) {
        char bad[8];
        snprintf(bad, sizeof bad, "a%cb", *c);
        assert_int_equal(broker_rule_name_check(bad, 3, &st, err, sizeof err), -1);
        assert_int_equal(st, SB_ERR_ARGUMENT);
    }
    assert_int_equal(broker_rule_name_check("a\xff", 2, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "UTF-8"));
    assert_int_equal(broker_rule_name_check("a\xc3", 2, &st, err, sizeof err), -1); /* cut short */

    pn_data_t *d = request("a*b");
    request_end(d);
    expect_refused(d, SB_ERR_ARGUMENT, "contains '*'");
}

/* ---- the enumerate-rules answer ---- */

/* A copy of d through Proton's encoder and decoder: what a client reads. */
static pn_data_t *roundtrip(pn_data_t *d)
{
    char buf[65536];
    pn_data_rewind(d);
    ssize_t n = pn_data_encode(d, buf, sizeof buf);
    assert_true(n > 0);
    pn_data_t *back = pn_data(0);
    assert_int_equal(pn_data_decode(back, buf, (size_t)n), n);
    pn_data_rewind(back);
    return back;
}

/* At the current node: described(ulong code, list); enters the list and
 * returns its element count. */
static size_t enter_described(pn_data_t *d, uint64_t code)
{
    assert_int_equal(pn_data_type(d), PN_DESCRIBED);
    pn_data_enter(d);
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_ULONG);
    if (pn_data_get_ulong(d) != code)
        fail_msg("descriptor 0x%llx, expected 0x%llx", (unsigned long long)pn_data_get_ulong(d),
                 (unsigned long long)code);
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_LIST);
    size_t n = pn_data_get_list(d);
    pn_data_enter(d);
    return n;
}

static void leave_described(pn_data_t *d)
{
    pn_data_exit(d);
    pn_data_exit(d);
}

static void next_string(pn_data_t *d, const char *want)
{
    assert_true(pn_data_next(d));
    if (!want) {
        assert_int_equal(pn_data_type(d), PN_NULL);
        return;
    }
    assert_int_equal(pn_data_type(d), PN_STRING);
    pn_bytes_t b = pn_data_get_string(d);
    assert_int_equal(b.size, strlen(want));
    assert_memory_equal(b.start, want, b.size);
}

/* Positions d on the next rule's description list (inside the rules list). */
static size_t next_rule(pn_data_t *d)
{
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_MAP);
    pn_data_enter(d);
    next_string(d, "rule-description");
    assert_true(pn_data_next(d));
    return enter_described(d, MGMT_DESC_RULE_DESCRIPTION);
}

/* name and created-at, then out of the rule. */
static void rule_tail(pn_data_t *d, const char *name, int64_t created_ms)
{
    next_string(d, name);
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_TIMESTAMP);
    assert_int_equal(pn_data_get_timestamp(d), created_ms);
    leave_described(d);
    pn_data_exit(d); /* the entry map */
}

static void empty_action(pn_data_t *d)
{
    assert_true(pn_data_next(d));
    assert_int_equal(enter_described(d, MGMT_DESC_EMPTY_ACTION), 0);
    leave_described(d);
}

static void test_encode_every_kind(void **state)
{
    (void)state;
    const store_rule rules[] = {
        {.name = "$Default", .filter_type = "True", .created_ms = 1000},
        {.name = "never", .filter_type = "False", .created_ms = 2000},
        {.name = "sql", .filter_type = "Sql", .sql_expression = "a > 1", .filter_parameters = "{\"@x\":1}",
         .action_expression = "SET b = 2", .created_ms = 3000},
        {.name = "corr",
         .filter_type = "Correlation",
         .correlation = "{\"CorrelationId\":\"c\",\"Label\":\"l\",\"Properties\":{\"n\":7,\"d\":1.5,\"ok\":true,"
                        "\"s\":\"x\",\"z\":null,\"t\":{\"type\":\"timestamp\",\"value\":\"2024-05-01T12:00:00.250Z\"},"
                        "\"span\":{\"type\":\"timespan\",\"value\":\"00:01:30\"},"
                        "\"g\":{\"type\":\"guid\",\"value\":\"01234567-89ab-cdef-1032-547698badcfe\"}}}",
         .action_expression = "", /* an empty action is no action */
         .created_ms = WHEN_MS},
    };
    pn_data_t *out = pn_data(0);
    char err[256];
    assert_int_equal(mgmt_rules_encode(out, rules, 4, err, sizeof err), 0);
    pn_data_t *d = roundtrip(out);

    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_MAP);
    pn_data_enter(d);
    next_string(d, "rules");
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_LIST); /* .NET: List<AmqpMap>, not an array */
    assert_int_equal(pn_data_get_list(d), 4);
    pn_data_enter(d);

    /* $Default: true-filter [], empty action */
    assert_int_equal(next_rule(d), 4);
    assert_true(pn_data_next(d));
    assert_int_equal(enter_described(d, MGMT_DESC_TRUE_FILTER), 0);
    leave_described(d);
    empty_action(d);
    rule_tail(d, "$Default", 1000);

    /* false-filter */
    assert_int_equal(next_rule(d), 4);
    assert_true(pn_data_next(d));
    assert_int_equal(enter_described(d, MGMT_DESC_FALSE_FILTER), 0);
    leave_described(d);
    empty_action(d);
    rule_tail(d, "never", 2000);

    /* sql filter [expression, int 20], sql action [expression, int 20] */
    assert_int_equal(next_rule(d), 4);
    assert_true(pn_data_next(d));
    assert_int_equal(enter_described(d, MGMT_DESC_SQL_FILTER), 2);
    next_string(d, "a > 1");
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_INT);
    assert_int_equal(pn_data_get_int(d), MGMT_RULES_COMPATIBILITY_LEVEL);
    leave_described(d);
    assert_true(pn_data_next(d));
    assert_int_equal(enter_described(d, MGMT_DESC_SQL_ACTION), 2);
    next_string(d, "SET b = 2");
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_INT);
    assert_int_equal(pn_data_get_int(d), 20);
    leave_described(d);
    rule_tail(d, "sql", 3000);

    /* correlation filter: 8 strings or nulls, then the properties map */
    assert_int_equal(next_rule(d), 4);
    assert_true(pn_data_next(d));
    assert_int_equal(enter_described(d, MGMT_DESC_CORRELATION_FILTER), 9);
    const char *fields[8] = {"c", NULL, NULL, NULL, "l", NULL, NULL, NULL};
    for (int i = 0; i < 8; i++)
        next_string(d, fields[i]);
    assert_true(pn_data_next(d));
    assert_int_equal(pn_data_type(d), PN_MAP);
    assert_int_equal(pn_data_get_map(d), 16);
    pn_data_enter(d);
    for (int i = 0; i < 8; i++) {
        assert_true(pn_data_next(d));
        assert_int_equal(pn_data_type(d), PN_STRING);
        pn_bytes_t k = pn_data_get_string(d);
        assert_true(pn_data_next(d));
        pn_type_t t = pn_data_type(d);
        if (k.size == 1 && k.start[0] == 'n') {
            assert_int_equal(t, PN_LONG);
            assert_int_equal(pn_data_get_long(d), 7);
        } else if (k.size == 1 && k.start[0] == 'd') {
            assert_int_equal(t, PN_DOUBLE);
        } else if (k.size == 2 && !memcmp(k.start, "ok", 2)) {
            assert_int_equal(t, PN_BOOL);
        } else if (k.size == 1 && k.start[0] == 's') {
            assert_int_equal(t, PN_STRING);
        } else if (k.size == 1 && k.start[0] == 'z') {
            assert_int_equal(t, PN_NULL);
        } else if (k.size == 1 && k.start[0] == 't') {
            assert_int_equal(t, PN_TIMESTAMP);
            assert_int_equal(pn_data_get_timestamp(d), WHEN_MS);
        } else if (k.size == 1 && k.start[0] == 'g') {
            assert_int_equal(t, PN_UUID);
            assert_memory_equal(pn_data_get_uuid(d).bytes, UUID_A, 16);
        } else if (k.size == 4 && !memcmp(k.start, "span", 4)) {
            /* as .NET sends a TimeSpan: described(symbol com.microsoft:timespan, long ticks) */
            assert_int_equal(t, PN_DESCRIBED);
            pn_data_enter(d);
            assert_true(pn_data_next(d));
            assert_int_equal(pn_data_type(d), PN_SYMBOL);
            assert_int_equal(pn_data_get_symbol(d).size, strlen(MGMT_DESC_TIMESPAN));
            assert_true(pn_data_next(d));
            assert_int_equal(pn_data_type(d), PN_LONG);
            assert_int_equal(pn_data_get_long(d), INT64_C(90000) * ENT_TICKS_PER_MS);
            pn_data_exit(d);
        } else {
            fail_msg("unexpected property %.*s", (int)k.size, k.start);
        }
    }
    pn_data_exit(d);
    leave_described(d);
    empty_action(d);
    rule_tail(d, "corr", WHEN_MS);
    assert_false(pn_data_next(d));
    pn_data_free(d);
    pn_data_free(out);
}

static void test_encode_refuses_unreadable_rows(void **state)
{
    (void)state;
    const store_rule odd = {.name = "odd", .filter_type = "Regex", .created_ms = 1};
    const store_rule broken = {.name = "broken", .filter_type = "Correlation", .correlation = "{not json",
                               .created_ms = 1};
    char err[256];
    pn_data_t *out = pn_data(0);
    assert_int_equal(mgmt_rules_encode(out, &odd, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "Rule 'odd' has a filter type 'Regex'"));
    pn_data_clear(out);
    assert_int_equal(mgmt_rules_encode(out, &broken, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "Rule 'broken' has a correlation filter the emulator cannot read"));
    pn_data_free(out);
}

/* What add-rule writes is what enumerate-rules reads back. */
static void test_decode_then_encode(void **state)
{
    (void)state;
    pn_data_t *d = request("round");
    str(d, "correlation-filter");
    map_begin(d);
    kv(d, "to", "dest");
    str(d, "properties");
    map_begin(d);
    str(d, "n");
    pn_data_put_ubyte(d, 200);
    end(d);
    end(d);
    request_end(d);
    broker_rule_def def;
    sb_status st;
    char err[256];
    assert_int_equal(mgmt_rule_def_decode(d, &def, &st, err, sizeof err), 0);
    store_rule row = def.row;
    row.created_ms = 5;
    pn_data_t *out = pn_data(0);
    assert_int_equal(mgmt_rules_encode(out, &row, 1, err, sizeof err), 0);
    pn_data_t *back = roundtrip(out);
    assert_true(pn_data_next(back));
    pn_data_enter(back);
    next_string(back, "rules");
    assert_true(pn_data_next(back));
    pn_data_enter(back);
    next_rule(back);
    assert_true(pn_data_next(back));
    assert_int_equal(enter_described(back, MGMT_DESC_CORRELATION_FILTER), 9);
    const char *fields[8] = {NULL, NULL, "dest", NULL, NULL, NULL, NULL, NULL};
    for (int i = 0; i < 8; i++)
        next_string(back, fields[i]);
    assert_true(pn_data_next(back));
    pn_data_enter(back);
    next_string(back, "n");
    assert_true(pn_data_next(back));
    assert_int_equal(pn_data_type(back), PN_LONG);
    assert_int_equal(pn_data_get_long(back), 200);
    pn_data_free(back);
    pn_data_free(out);
    broker_rule_def_free(&def);
    pn_data_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sql_filter_and_action),
        cmocka_unit_test(test_null_action_and_true_as_sql),
        cmocka_unit_test(test_no_filter_is_true),
        cmocka_unit_test(test_parameters),
        cmocka_unit_test(test_correlation),
        cmocka_unit_test(test_bad_expressions_carry_their_column),
        cmocka_unit_test(test_malformed_descriptions),
        cmocka_unit_test(test_rule_names),
        cmocka_unit_test(test_encode_every_kind),
        cmocka_unit_test(test_encode_refuses_unreadable_rows),
        cmocka_unit_test(test_decode_then_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
