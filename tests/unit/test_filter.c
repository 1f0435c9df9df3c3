/* SQL filter evaluation, table-driven: every operator, three-valued logic,
 * numeric promotion, LIKE/IN/EXISTS/IS NULL, functions, identifiers,
 * system properties and parameters. Each row is one expression against the
 * fixture message (filter_fixture.h) and its expected outcome:
 * T (match), F (false), U (unknown: no match), E (evaluation error). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "ent_filter.h"
#include "filter_fixture.h"

#define T ENT_FILTER_TRUE
#define F ENT_FILTER_FALSE
#define U ENT_FILTER_UNKNOWN
#define E ENT_FILTER_ERROR

typedef struct eval_case {
    const char *expr;
    ent_filter_result want;
} eval_case;

static const char *result_name(ent_filter_result r)
{
    switch (r) {
    case T: return "TRUE";
    case F: return "FALSE";
    case U: return "UNKNOWN";
    default: return "ERROR";
    }
}

static int run_table(const eval_case *cases, size_t n, const ent_filter_prop *params, size_t nparams)
{
    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        ent_filter *f = NULL;
        ent_filter_error err;
        if (ent_filter_parse(cases[i].expr, strlen(cases[i].expr), params, nparams, &f, &err) != 0) {
            print_error("row %zu: \"%s\" did not parse: %s\n", i, cases[i].expr, err.message);
            failures++;
            continue;
        }
        ent_filter_result r = ent_filter_eval(f, &view, &err);
        if (r != cases[i].want) {
            print_error("row %zu: \"%s\" gave %s, want %s%s%s\n", i, cases[i].expr, result_name(r),
                        result_name(cases[i].want), r == E ? ": " : "", r == E ? err.message : "");
            failures++;
        }
        /* Evaluating again gives the same answer: the program is not consumed. */
        if (!strstr(cases[i].expr, "newid") && ent_filter_eval(f, &view, &err) != r) {
            print_error("row %zu: \"%s\" changed on re-evaluation\n", i, cases[i].expr);
            failures++;
        }
        ent_filter_free(f);
    }
    ent_filter_kvmsg_free(&m);
    return failures;
}

#define RUN(table, params, nparams) \
    assert_int_equal(run_table(table, sizeof table / sizeof table[0], params, nparams), 0)

/* ---- comparison and arithmetic --------------------------------------------------- */

static const eval_case comparison_cases[] = {
    {"qty = 5", T},
    {"qty <> 5", F},
    {"qty != 4", T},
    {"qty > 4", T},
    {"qty >= 5", T},
    {"qty < 5", F},
    {"qty <= 5", T},
    {"qty > 5", F},
    {"color = 'red'", T},
    {"color = 'RED'", F},
    {"COLOR = 'red'", T},
    {"user.color = 'red'", T},
    {"USER.Color = 'red'", T},
    {"color <> 'blue'", T},
    {"color < 's'", T},
    {"color > 'reda'", F},
    {"'abc' < 'abd'", T},
    {"'' = empty", T},
    {"flag = TRUE", T},
    {"flag <> FALSE", T},
    {"TRUE = TRUE", T},
    {"(qty = 5) = TRUE", T},
    {"nan = nan", F},
    {"nan <> nan", T},
    {"nan < 1", F},
    {"  qty\t=\n5  ", T},
};

static const eval_case promotion_cases[] = {
    {"qty = 5.0", T},
    {"price = 2.5", T},
    {"price > qty", F},
    {"qty / 2 = 2", T},
    {"qty / 2.0 = 2.5", T},
    {"qty % 3 = 2", T},
    {"price * 2 = 5", T},
    {"qty + price = 7.5", T},
    {"big = 9007199254740993", T},
    {"big = 9007199254740992.0", T}, /* int64 -> double rounds, as in C# */
    {"big > 9007199254740992", T},   /* int64 against int64 stays exact */
    {"-qty = -5", T},
    {"+qty = 5", T},
    {"- -qty = 5", T},
    {"neg * -1 = 3", T},
    {"qty - 10 = -5", T},
    {"1.5E3 = 1500", T},
    {"0.5E-2 = 0.005", T},
    {"101.5e5 = 10150000", T},
    {".5 = 0.5", T},
    {"1. = 1", T},
    {"7 % -3 = 1", T},
    {"-7 % 3 = -1", T},
    {"-7 / 2 = -3", T},
    {"5.5 % 2 = 1.5", T},
    {"1 / 0.0 > 1E308", T},
    {"9223372036854775807 + 1 = -9223372036854775808", T}, /* unchecked, like C# */
    {"-9223372036854775808 = -9223372036854775807 - 1", T},
    {"2 + 3 * 4 = 14", T},
    {"(2 + 3) * 4 = 20", T},
    {"10 - 2 - 3 = 5", T},
    {"100 / 10 / 5 = 2", T},
    {"2 * -3 = -6", T},
    {"--1 = 1", T},
};

static const eval_case mismatch_cases[] = {
    {"flag = 1", U},
    {"flag > FALSE", U},
    {"color = 5", U},
    {"NOT (color = 5)", U},
    {"qty = '5'", U},
    {"sys.EnqueuedTimeUtc > 5", U},
    {"sys.LockToken = 'nope'", U},
};

static void test_comparison(void **state)
{
    (void)state;
    RUN(comparison_cases, NULL, 0);
}

static void test_promotion(void **state)
{
    (void)state;
    RUN(promotion_cases, NULL, 0);
}

static void test_type_mismatch(void **state)
{
    (void)state;
    RUN(mismatch_cases, NULL, 0);
}

/* ---- three-valued logic (the documentation's truth tables) --------------------------- */

/* U is written as a comparison on a missing user property. */
static const eval_case logic_cases[] = {
    {"TRUE AND TRUE", T},
    {"TRUE AND FALSE", F},
    {"TRUE AND (missing = 1)", U},
    {"FALSE AND TRUE", F},
    {"FALSE AND FALSE", F},
    {"FALSE AND (missing = 1)", F},
    {"(missing = 1) AND TRUE", U},
    {"(missing = 1) AND FALSE", F},
    {"(missing = 1) AND (missing = 1)", U},
    {"TRUE OR TRUE", T},
    {"TRUE OR FALSE", T},
    {"TRUE OR (missing = 1)", T},
    {"FALSE OR TRUE", T},
    {"FALSE OR FALSE", F},
    {"FALSE OR (missing = 1)", U},
    {"(missing = 1) OR TRUE", T},
    {"(missing = 1) OR FALSE", U},
    {"(missing = 1) OR (missing = 1)", U},
    {"NOT TRUE", F},
    {"NOT FALSE", T},
    {"NOT (missing = 1)", U},
    {"NULL", U},
    {"NOT NULL", U},
    {"NULL AND FALSE", F},
    {"NULL OR TRUE", T},
    {"TRUE", T},
    {"FALSE", F},
    {"flag", T},
    {"flag AND TRUE", T},
    {"nothing", U},
    {"color = 'red' and qty = 5", T},
    {"NoT (qty = 4)", T},
    {"qty = 4 OR qty = 5 AND color = 'red'", T}, /* AND binds tighter */
    {"(qty = 4 OR qty = 5) AND color = 'blue'", F},
    {"NOT qty = 4 AND color = 'red'", T},        /* NOT binds tighter than AND */
    {"NOT NOT flag", T},
    /* short-circuit: the right side is not evaluated, so no error */
    {"TRUE OR sys.ExpiresAtUtc = sys.EnqueuedTimeUtc", T},
    {"FALSE AND sys.ExpiresAtUtc = sys.EnqueuedTimeUtc", F},
    {"sys.ExpiresAtUtc = sys.EnqueuedTimeUtc OR TRUE", E},
    {"(missing = 1) AND sys.ExpiresAtUtc = sys.EnqueuedTimeUtc", E},
    /* an unset string system property is NULL, not an error */
    {"sys.ReplyTo = 'x' OR TRUE", T},
    {"(missing = 1) AND sys.ReplyTo = 'x'", U},
};

static void test_three_valued_logic(void **state)
{
    (void)state;
    RUN(logic_cases, NULL, 0);
}

/* ---- null, missing, EXISTS ------------------------------------------------------------- */

static const eval_case null_cases[] = {
    {"nothing = 1", U},
    {"nothing IS NULL", T},
    {"nothing IS NOT NULL", F},
    {"missing IS NULL", T},
    {"missing IS NOT NULL", F},
    {"qty IS NULL", F},
    {"qty iS nOt NuLl", T},
    {"NULL = NULL", U},
    {"NULL IS NULL", T},
    {"qty + 1 IS NOT NULL", T},
    {"missing + 1 IS NULL", T},
    {"missing + 1 = 1", U},
    {"-missing = 1", U},
    {"missing * 0 = 0", U},
    {"EXISTS(nothing)", T},
    {"EXISTS(missing)", F},
    {"EXISTS(Color)", T},
    {"EXISTS([Property With Space])", T},
    {"NOT EXISTS(missing)", T},
    {"exists(qty) and not exists(missing)", T},
};

static void test_null_and_exists(void **state)
{
    (void)state;
    RUN(null_cases, NULL, 0);
}

/* ---- system properties, timestamps, guids ----------------------------------------------- */

static const eval_case sys_cases[] = {
    {"sys.MessageId = 'm1'", T},
    {"sys.messageid = 'm1'", T},
    {"SYS.MESSAGEID = 'm1'", T},
    {"sys.Label = 'Bus Label'", T},
    {"sys.Subject = 'Bus Label'", T},
    {"sys.Label LIKE '%Bus%'", T},
    {"sys.To IN ('store5', 'store6')", T},
    {"sys.CorrelationId = 'corr-1'", T},
    {"sys.ContentType = 'application/json'", T},
    {"sys.SessionId = 's1'", T},
    {"sys.SequenceNumber = 42", T},
    {"sys.SequenceNumber > 41.5", T},
    {"sys.DeliveryCount = 1", T},
    {"sys.[MessageId] = 'm1'", T},
    /* unset string system properties read as NULL (filter_eval.c) */
    {"sys.ReplyTo = 'x'", U},
    {"NOT sys.ReplyTo = 'x'", U},
    {"sys.ReplyTo IS NULL", T},
    {"sys.ReplyTo IS NOT NULL", F},
    {"EXISTS(sys.ReplyTo)", F},
    {"EXISTS(sys.MessageId)", T},
    {"sys.PartitionKey <> 'x'", U},
    {"sys.ViaPartitionKey IN ('x')", U},
    {"sys.ReplyToSessionId LIKE '%'", U},
    {"sys.DeadLetterSource IS NULL", T},
    {"sys.ReplyTo + 'x' = 'x'", U},
    /* unset value-typed ones read as the broker's defaults */
    {"sys.ScheduledEnqueueTimeUtc IS NULL", F},
    {"EXISTS(sys.ScheduledEnqueueTimeUtc)", F},
    {"sys.ScheduledEnqueueTimeUtc < sys.EnqueuedTimeUtc", T},
    {"'' + sys.ScheduledEnqueueTimeUtc = '0001-01-01T00:00:00.000Z'", T},
    /* broker-owned ones the message lacks are errors */
    {"sys.ExpiresAtUtc > sys.EnqueuedTimeUtc", E},
    {"sys.LockedUntilUtc IS NULL", T},
    {"sys.EnqueuedSequenceNumber = 1", E},
    {"sys.EnqueuedTimeUtc + sys.TimeToLive > sys.EnqueuedTimeUtc", T},
    {"sys.EnqueuedTimeUtc - sys.EnqueuedTimeUtc = sys.TimeToLive - sys.TimeToLive", T},
    {"sys.EnqueuedTimeUtc = sys.EnqueuedTimeUtc", T},
    {"sys.EnqueuedTimeUtc + 5 = 1", E},
    {"sys.EnqueuedTimeUtc + sys.EnqueuedTimeUtc = 1", E},
    {"sys.TimeToLive + sys.EnqueuedTimeUtc > sys.EnqueuedTimeUtc", T},
    {"-sys.TimeToLive < sys.TimeToLive", T},
    {"sys.EnqueuedTimeUtc - sys.TimeToLive < sys.EnqueuedTimeUtc", T},
    {"'t' + sys.TimeToLive = 't00:01:00'", T},
    {"'' + sys.EnqueuedTimeUtc = '2024-01-01T00:00:00.000Z'", T},
    {"sys.LockToken = 'a1b2c3d4-0000-4000-8000-000000000001'", T},
    {"sys.LockToken = 'A1B2C3D4-0000-4000-8000-000000000001'", T},
    {"sys.LockToken = guidstr", T},
    {"newid() = newid()", F},
    {"newid() <> sys.LockToken", T},
    {"newid() IS NOT NULL", T},
    {"NEWID() IS NOT NULL", T},
    {"'' + newid() LIKE '________-____-4___-____-____________'", T},
};

static void test_system_properties(void **state)
{
    (void)state;
    RUN(sys_cases, NULL, 0);
}

/* ---- strings, identifiers, functions ------------------------------------------------------ */

static const eval_case string_cases[] = {
    {"color + 'dish' = 'reddish'", T},
    {"'n' + qty = 'n5'", T},
    {"'p' + price = 'p2.5'", T},
    {"'b' + flag = 'bTrue'", T},
    {"qty + 'x' = '5x'", T},
    {"'x' + missing = 'x'", U},
    {"'a' + 'b' + 'c' = 'abc'", T},
    {"'1E+20' = '' + 1E20", T},
    {"'' + 0.1 = '0.1'", T},
    {"'' + 1E-5 = '1E-05'", T},
    {"'' + 100.0 = '100'", T},
    {"'' + 123456789012345.0 = '123456789012345'", T},
    {"'' + 1E15 = '1E+15'", T},
    {"'' + -0.5 = '-0.5'", T},
    {"name = 'O''Brien'", T},
    {"'it''s' = 'it' + '''' + 's'", T},
    {"'' = ''", T},
    {"[Property With Space] = 'x'", T},
    {"\"Property With Space\" = 'x'", T},
    {"[HR-EmployeeID] = 7", T},
    {"[a]]b] = 1", T},
    {"\"q\"\"x\" = 2", T},
    {"[and] IS NULL", T},
    {"user.[Property With Space] = 'x'", T},
    {"p = 1 OR p IS NULL", T}, /* p is a property when not called */
    {"property('color') = 'red'", T},
    {"p('color') = 'red'", T},
    {"P('COLOR') = 'red'", T},
    {"p('sys.MessageId') = 'm1'", T},
    {"p('user.color') = 'red'", T},
    {"p('col' + 'or') = 'red'", T},
    {"p(missing) IS NULL", T},
    {"p('sys.ReplyTo') IS NULL", T},
    {"p('sys.Re' + 'plyTo') IS NULL", T},
    {"EXISTS(color) AND p('qty') = 5", T},
    {"p('sys.Re' + 'plyTo') = 'x'", U},
    {"p('sys.Expires' + 'AtUtc') = 1", E},
    {"p('sys.No' + 'pe') = 1", E},
    {"p(qty) = 1", E},
    {"LEN(long) = 1 OR TRUE", E}, /* not a function: parse error, counted as E below */
};

static void test_strings_and_functions(void **state)
{
    (void)state;
    /* The last row is a parse error; check it apart. */
    size_t n = sizeof string_cases / sizeof string_cases[0] - 1;
    assert_int_equal(run_table(string_cases, n, NULL, 0), 0);
    ent_filter *f;
    ent_filter_error err;
    const char *bad = string_cases[n].expr;
    assert_int_equal(ent_filter_parse(bad, strlen(bad), NULL, 0, &f, &err), -1);
    assert_string_equal(err.message, "unknown function 'LEN' at column 1");
}

/* ---- IN and LIKE ------------------------------------------------------------------------------ */

static const eval_case in_cases[] = {
    {"color IN ('red', 'blue')", T},
    {"color IN ('blue')", F},
    {"color NOT IN ('blue', 'green')", T},
    {"color NOT IN ('red')", F},
    {"qty IN (1, 5.0, 'x')", T},
    {"missing IN (1, 2)", U},
    {"missing NOT IN (1, 2)", U},
    {"qty IN (missing, 5)", T},
    {"qty IN (missing, 6)", F},
    {"qty IN (qty)", T},
    {"qty IN (2 + 3)", T},
    {"color IN ('RED')", F},
    {"NOT color IN ('red')", F},
    {"color in ('a','b','c','d','e','f','g','h','red')", T},
};

static const eval_case like_cases[] = {
    {"color LIKE 'r%'", T},
    {"color LIKE 'R%'", F},
    {"color LIKE '%e%'", T},
    {"color LIKE 'r_d'", T},
    {"color LIKE 'r_'", F},
    {"color LIKE '___'", T},
    {"color LIKE '%'", T},
    {"empty LIKE '%'", T},
    {"empty LIKE '_'", F},
    {"color NOT LIKE 'b%'", T},
    {"color NOT LIKE 'r%'", F},
    {"pct LIKE '50\\%' ESCAPE '\\'", T},
    {"pct LIKE '5!%' ESCAPE '!'", F},
    {"pct LIKE '50!%' ESCAPE '!'", T},
    {"pct LIKE '%!%' ESCAPE '!'", T},
    {"color LIKE '%!%' ESCAPE '!'", F},
    {"path LIKE 'a!_b' ESCAPE '!'", T},
    {"'axb' LIKE 'a!_b' ESCAPE '!'", F},
    {"'axb' LIKE 'a_b'", T},
    {"'a!b' LIKE 'a!!b' ESCAPE '!'", T},
    {"uni LIKE 'h_llo'", T}, /* _ is one character, not one byte */
    {"uni LIKE 'h__llo'", F},
    {"missing LIKE 'a%'", U},
    {"missing NOT LIKE 'a%'", U},
    {"qty LIKE '5'", U},
    {"color LIKE missing", U},
    {"color LIKE 'r%' ESCAPE missing", U},
    {"'abcabc' LIKE '%abc'", T},
    {"'ababc' LIKE '%abc'", T},
    {"'abcab' LIKE '%abc'", F},
    {"'aaa' LIKE '%%a%%'", T},
    {"'a%' LIKE 'a%%'", T},
    {"'xyz' LIKE 'x%z%'", T},
    {"'mississippi' LIKE '%iss%ppi'", T},
    {"'mississippi' LIKE 'm%ss%ss%'", T},
    {"'abc' LIKE 'abc!' ESCAPE '!'", F}, /* a trailing escape is literal */
    {"'abc!' LIKE 'abc!' ESCAPE '!'", T},
    {"color LIKE p('color')", T},
    {"color LIKE 'r' + '%'", T},
    {"color LIKE p('qty')", E},
    {"color LIKE 'x' ESCAPE p('color')", E},
};

static void test_in(void **state)
{
    (void)state;
    RUN(in_cases, NULL, 0);
}

static void test_like(void **state)
{
    (void)state;
    RUN(like_cases, NULL, 0);
}

/* ---- parameters --------------------------------------------------------------------------------- */

static const eval_case param_cases[] = {
    {"color = @c", T},
    {"qty = @I", T}, /* parameter names are case-insensitive */
    {"price = @d", T},
    {"flag = @b", T},
    {"@n IS NULL", T},
    {"@c + @c = 'redred'", T},
    {"qty IN (@i, 6)", T},
    {"color LIKE @pat", T},
    {"@b", T},
    {"@b AND color = @c", T},
    {"qty > @i", F},
    {"@n = 1", U},
};

static void test_parameters(void **state)
{
    (void)state;
    /* The strings live only for the parse: the filter must copy them. */
    char red[] = "red", pat[] = "r%";
    ent_filter_prop params[] = {
        {"@c", ent_fv_cstr(red)}, {"@i", ent_fv_int(5)}, {"d", ent_fv_double(2.5)},
        {"@b", ent_fv_bool(1)},   {"@n", ent_fv_null()}, {"@pat", ent_fv_cstr(pat)},
    };
    size_t n = sizeof params / sizeof params[0];

    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    ent_filter *f;
    ent_filter_error err;
    assert_int_equal(ent_filter_parse("color = @c", 10, params, n, &f, &err), 0);
    memcpy(red, "xxx", 3);
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_TRUE);
    ent_filter_free(f);
    ent_filter_kvmsg_free(&m);
    memcpy(red, "red", 3);

    RUN(param_cases, params, n);
}

/* ---- filter objects -------------------------------------------------------------------------------- */

static void test_true_false_filters(void **state)
{
    (void)state;
    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    ent_filter *t = ent_filter_new_true(), *f = ent_filter_new_false(), *s;
    ent_filter_error err;
    assert_int_equal(ent_filter_eval(t, &view, NULL), ENT_FILTER_TRUE);
    assert_int_equal(ent_filter_eval(f, &view, NULL), ENT_FILTER_FALSE);
    assert_string_equal(ent_filter_text(t), "1=1");
    assert_string_equal(ent_filter_text(f), "1=0");
    assert_int_equal(ent_filter_get_kind(t), ENT_FILTER_KIND_TRUE);
    assert_int_equal(ent_filter_get_kind(f), ENT_FILTER_KIND_FALSE);
    assert_null(ent_filter_get_correlation(t));

    /* The SQL spellings behave the same, and keep their text. */
    assert_int_equal(ent_filter_parse("1=1", 3, NULL, 0, &s, &err), 0);
    assert_int_equal(ent_filter_eval(s, &view, NULL), ENT_FILTER_TRUE);
    assert_int_equal(ent_filter_get_kind(s), ENT_FILTER_KIND_SQL);
    assert_string_equal(ent_filter_text(s), "1=1");
    ent_filter_free(s);
    assert_int_equal(ent_filter_parse("1=0", 3, NULL, 0, &s, &err), 0);
    assert_int_equal(ent_filter_eval(s, &view, NULL), ENT_FILTER_FALSE);
    ent_filter_free(s);

    /* Text need not be NUL-terminated. */
    assert_int_equal(ent_filter_parse("qty = 5 garbage", 7, NULL, 0, &s, &err), 0);
    assert_string_equal(ent_filter_text(s), "qty = 5");
    assert_int_equal(ent_filter_eval(s, &view, NULL), ENT_FILTER_TRUE);
    ent_filter_free(s);

    ent_filter_free(t);
    ent_filter_free(f);
    ent_filter_free(NULL);
    ent_filter_kvmsg_free(&m);
}

/* A message view over the caller's own structure, as the AMQP layer will
 * write one: no kvmsg, no copies. */
typedef struct app_msg {
    const char *label;
    int64_t priority;
} app_msg;

static int app_get_sys(const void *self, ent_filter_sys id, ent_filter_value *out)
{
    const app_msg *m = self;
    if (id != ENT_SYS_LABEL || !m->label)
        return 0;
    *out = ent_fv_cstr(m->label);
    return 1;
}

static int app_get_user(const void *self, const char *name, size_t len, ent_filter_value *out)
{
    const app_msg *m = self;
    if (len != 8 || strncasecmp(name, "priority", 8))
        return 0;
    *out = ent_fv_int(m->priority);
    return 1;
}

static void test_custom_view(void **state)
{
    (void)state;
    static const ent_filter_msg_ops ops = {app_get_sys, app_get_user};
    app_msg a = {"urgent", 7};
    ent_filter_msg view = {&ops, &a};
    ent_filter *f;
    ent_filter_error err;
    const char *text = "sys.Label = 'urgent' AND Priority > 5";
    assert_int_equal(ent_filter_parse(text, strlen(text), NULL, 0, &f, &err), 0);
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_TRUE);
    a.priority = 1;
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_FALSE);
    a.label = NULL; /* no Label: unknown, as on the broker (FALSE AND unknown is FALSE) */
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_FALSE);
    a.priority = 7;
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_UNKNOWN);
    a.priority = 1;
    ent_filter_free(f);
    text = "Priority > 5 OR sys.LockToken = newid()";
    assert_int_equal(ent_filter_parse(text, strlen(text), NULL, 0, &f, &err), 0);
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_ERROR);
    assert_string_equal(err.message, "system property 'sys.LockToken' is not set at column 17");
    assert_int_equal(err.kind, ENT_FILTER_ERR_EVAL);
    assert_int_equal(err.column, 17);
    ent_filter_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comparison),
        cmocka_unit_test(test_promotion),
        cmocka_unit_test(test_type_mismatch),
        cmocka_unit_test(test_three_valued_logic),
        cmocka_unit_test(test_null_and_exists),
        cmocka_unit_test(test_system_properties),
        cmocka_unit_test(test_strings_and_functions),
        cmocka_unit_test(test_in),
        cmocka_unit_test(test_like),
        cmocka_unit_test(test_parameters),
        cmocka_unit_test(test_true_false_filters),
        cmocka_unit_test(test_custom_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
