/* Every error path of the filter language, with the exact text and
 * position a user sees: syntax errors (the rule is refused), limits, and
 * evaluation errors (Service Bus' FilterException). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ent_filter.h"
#include "filter_fixture.h"

typedef struct error_case {
    const char *expr;
    const char *message;
} error_case;

static const error_case syntax_cases[] = {
    {"", "expected an expression at column 1"},
    {"   ", "expected an expression at column 4"},
    {"(a = 1", "expected ')' at column 7"},
    {"(a = 1 AND b ", "expected ')' at column 14"},
    {"a = ", "expected an expression at column 5"},
    {"a = 1)", "unexpected ')' at column 6"},
    {"a == 1", "expected an expression, found '=' at column 4"},
    {"a = 'abc", "unterminated string constant at column 5"},
    {"a = 'it''s", "unterminated string constant at column 5"},
    {"[abc = 1", "unterminated delimited identifier at column 1"},
    {"\"abc = 1", "unterminated quoted identifier at column 1"},
    {"a = 1 AND", "expected an expression at column 10"},
    {"a = 1 OR", "expected an expression at column 9"},
    {"NOT", "expected an expression at column 4"},
    {"a = 1 b = 2", "unexpected 'b' at column 7"},
    {"a = b = c", "unexpected '=' at column 7"},
    {"a < b > c", "unexpected '>' at column 7"},
    {"sys.Foo = 1", "unknown system property 'sys.Foo' at column 1"},
    {"a = 1 OR sys.Bar IS NULL", "unknown system property 'sys.Bar' at column 10"},
    {"sys. = 1", "expected a property name, found '=' at column 6"},
    {"user.5 = 1", "unexpected '.5' at column 5"},
    {"foo(1) = 1", "unknown function 'foo' at column 1"},
    {"newid(1) IS NULL", "expected ')', found '1' at column 7"},
    {"newid()", "expected a boolean expression at column 1"},
    {"p() = 1", "expected an expression, found ')' at column 3"},
    {"p('a' = 1", "expected ')' at column 10"},
    {"p(1) = 1", "property() needs a string name, not int64 at column 3"},
    {"p('sys.Nope') = 1", "unknown system property 'sys.Nope' at column 1"},
    {"p('') = 1", "empty property name at column 3"},
    {"EXISTS(1)", "expected a property name, found '1' at column 8"},
    {"EXISTS color", "expected '(', found 'color' at column 8"},
    {"EXISTS(color", "expected ')' at column 13"},
    {"EXISTS(p('x'))", "expected ')', found '(' at column 9"},
    {"a IS 1", "expected NULL, found '1' at column 6"},
    {"a IS NOT", "expected NULL at column 9"},
    {"a IN 1", "expected '(', found '1' at column 6"},
    {"a IN ()", "expected an expression, found ')' at column 7"},
    {"a IN (1,)", "expected an expression, found ')' at column 9"},
    {"a IN (1 2)", "expected ')', found '2' at column 9"},
    {"a NOT 1", "unexpected 'NOT' at column 3"},
    {"a LIKE 5", "LIKE pattern must be a string at column 8"},
    {"a LIKE TRUE", "LIKE pattern must be a string at column 8"},
    {"a LIKE", "expected an expression at column 7"},
    {"a LIKE 'x' ESCAPE 'ab'", "ESCAPE must be a single character at column 19"},
    {"a LIKE 'x' ESCAPE ''", "ESCAPE must be a single character at column 19"},
    {"a LIKE 'x' ESCAPE 1", "ESCAPE must be a single character at column 19"},
    {"a LIKE 'x' ESCAPE", "expected an expression at column 18"},
    {"9223372036854775808 = a", "integer constant out of range at column 1"},
    {"a = 99999999999999999999", "integer constant out of range at column 5"},
    {"a = 1e999", "number out of range at column 5"},
    {"a = 1e", "malformed number at column 5"},
    {"a = 1e+", "malformed number at column 5"},
    {"a = 12abc", "malformed number at column 5"},
    {"a = @p", "parameter '@p' is not defined at column 5"},
    {"a = @", "expected a parameter name after '@' at column 5"},
    {"a ! b", "unexpected character '!' at column 3"},
    {"a = 1 # x", "unexpected character '#' at column 7"},
    {"a = 1 \x01", "unexpected character '\\x01' at column 7"},
    {"a = 1 OR 5", "expected a boolean expression at column 10"},
    {"5 AND a = 1", "expected a boolean expression at column 1"},
    {"NOT 'x'", "expected a boolean expression at column 5"},
    {"NOT -a", "expected a boolean expression at column 5"},
    {"a + 1", "expected a boolean expression at column 1"},
    {"(a + 1) * 2", "expected a boolean expression at column 1"},
    {"'abc'", "expected a boolean expression at column 1"},
    {"42", "expected a boolean expression at column 1"},
    {"[] = 1", "empty property name at column 1"},
    {"AND = 1", "expected an expression, found 'AND' at column 1"},
    {"a = 1;", "unexpected ';' at column 6"},
    {"a = 1, b = 2", "unexpected ',' at column 6"},
    {"a.b = 1", "unexpected '.' at column 2"},
    {"a = 1\nAND (b = ", "expected an expression at line 2, column 10"},
    {"'h\xc3\xa9llo' = 1 )", "unexpected ')' at column 13"}, /* columns count characters */
    {"a = 'a very long string constant indeed' 'x'",
     "unexpected ''x'' at column 42"},
    {"a = 1 unexpectedidentifierthatislongerthanthelimit",
     "unexpected 'unexpectedidentifierthat...' at column 7"},
};

static void test_syntax_errors(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof syntax_cases / sizeof syntax_cases[0]; i++) {
        const error_case *c = &syntax_cases[i];
        ent_filter *f = (ent_filter *)1;
        ent_filter_error err;
        int rc = ent_filter_parse(c->expr, strlen(c->expr), NULL, 0, &f, &err);
        if (rc != -1 || f != NULL) {
            print_error("row %zu: \"%s\" parsed\n", i, c->expr);
            failures++;
            ent_filter_free(f);
            continue;
        }
        if (strcmp(err.message, c->message) != 0) {
            print_error("row %zu: \"%s\"\n   got: %s\n  want: %s\n", i, c->expr, err.message, c->message);
            failures++;
        }
        if (err.kind != ENT_FILTER_ERR_SYNTAX || ent_filter_error_status(&err) != SB_ERR_ARGUMENT) {
            print_error("row %zu: kind %d\n", i, err.kind);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static void test_error_fields(void **state)
{
    (void)state;
    ent_filter *f;
    ent_filter_error err;
    assert_int_equal(ent_filter_parse("a = 1\nAND (b = ", 16, NULL, 0, &f, &err), -1);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 10);
    assert_int_equal(ent_filter_parse("(a = 1", 6, NULL, 0, &f, &err), -1);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 7);
}

static const error_case eval_cases[] = {
    {"sys.ExpiresAtUtc = sys.EnqueuedTimeUtc", "system property 'sys.ExpiresAtUtc' is not set at column 1"},
    {"qty = 5 AND sys.LockedUntilUtc > sys.EnqueuedTimeUtc",
     "system property 'sys.LockedUntilUtc' is not set at column 13"},
    {"sys.ExpiresAtUtc > sys.EnqueuedTimeUtc", "system property 'sys.ExpiresAtUtc' is not set at column 1"},
    {"qty / 0 = 1", "division by zero at column 5"},
    {"qty % 0 = 1", "division by zero at column 5"},
    {"-9223372036854775808 / -1 = 1", "arithmetic overflow at column 22"},
    {"-9223372036854775808 % -1 = 1", "arithmetic overflow at column 22"},
    {"color * 2 = 1", "operator '*' cannot be applied to string and int64 at column 7"},
    {"color - 'x' = 1", "operator '-' cannot be applied to string and string at column 7"},
    {"flag + 1 = 1", "operator '+' cannot be applied to bool and int64 at column 6"},
    {"-color = 1", "operator '-' cannot be applied to string at column 1"},
    {"+flag = 1", "operator '+' cannot be applied to bool at column 1"},
    {"sys.EnqueuedTimeUtc + 1 = 1", "operator '+' cannot be applied to timestamp and int64 at column 21"},
    {"sys.TimeToLive - sys.EnqueuedTimeUtc = 1",
     "operator '-' cannot be applied to timespan and timestamp at column 16"},
    {"sys.TimeToLive * 2 = 1", "operator '*' cannot be applied to timespan and int64 at column 16"},
    {"color", "filter must produce a boolean, not string at column 1"},
    {"qty", "filter must produce a boolean, not int64 at column 1"},
    {"NOT qty", "expected a boolean, found int64 at column 5"},
    {"qty AND TRUE", "expected a boolean, found int64 at column 1"},
    {"TRUE AND (color)", "expected a boolean, found string at column 10"},
    {"color LIKE p('qty')", "LIKE pattern must be a string, not int64 at column 12"},
    {"color LIKE 'x' ESCAPE p('color')", "ESCAPE must be a single character at column 23"},
    {"p(qty) = 1", "property() needs a string name, not int64 at column 3"},
    {"p('sys.X' + 'y') = 1", "unknown system property 'sys.Xy' at column 1"},
    {"p('sys.' + 'ExpiresAtUtc') = 1", "system property 'sys.ExpiresAtUtc' is not set at column 1"},
    {"long + long = 'x'", "string result longer than the 16384 bytes an evaluation may hold at column 6"},
};

static void test_eval_errors(void **state)
{
    (void)state;
    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    int failures = 0;
    for (size_t i = 0; i < sizeof eval_cases / sizeof eval_cases[0]; i++) {
        const error_case *c = &eval_cases[i];
        ent_filter *f;
        ent_filter_error err;
        if (ent_filter_parse(c->expr, strlen(c->expr), NULL, 0, &f, &err) != 0) {
            print_error("row %zu: \"%s\" did not parse: %s\n", i, c->expr, err.message);
            failures++;
            continue;
        }
        ent_filter_result r = ent_filter_eval(f, &view, &err);
        if (r != ENT_FILTER_ERROR) {
            print_error("row %zu: \"%s\" gave %d, not an error\n", i, c->expr, r);
            failures++;
        } else if (strcmp(err.message, c->message) != 0 || err.kind != ENT_FILTER_ERR_EVAL) {
            print_error("row %zu: \"%s\"\n   got: %s\n  want: %s\n", i, c->expr, err.message, c->message);
            failures++;
        }
        /* A NULL error pointer is allowed. */
        if (ent_filter_eval(f, &view, NULL) != ENT_FILTER_ERROR)
            failures++;
        ent_filter_free(f);
    }
    ent_filter_kvmsg_free(&m);
    assert_int_equal(failures, 0);
}

/* Scratch is given back once a string is no longer needed, so many
 * concatenations in one filter fit as long as each result is short-lived. */
static void test_scratch_is_reused(void **state)
{
    (void)state;
    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    const char *text = "long + 'a' <> 'x' AND long + 'b' <> 'x' AND long + 'c' <> 'x' AND long + 'd' <> 'x'";
    ent_filter *f;
    ent_filter_error err;
    assert_int_equal(ent_filter_parse(text, strlen(text), NULL, 0, &f, &err), 0);
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_TRUE);
    ent_filter_free(f);
    ent_filter_kvmsg_free(&m);
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail)
{
    size_t n = strlen(head) + strlen(unit) * times + strlen(tail) + 1;
    char *s = malloc(n);
    strcpy(s, head);
    for (size_t i = 0; i < times; i++)
        strcat(s, unit);
    strcat(s, tail);
    return s;
}

static void test_length_limit(void **state)
{
    (void)state;
    ent_filter *f;
    ent_filter_error err;
    /* "a = '" + x... + "'": exactly 1024 characters parses, 1025 does not. */
    char *ok = repeat("a = '", "x", ENT_SQL_EXPRESSION_MAX - 6, "'");
    assert_int_equal(strlen(ok), ENT_SQL_EXPRESSION_MAX);
    assert_int_equal(ent_filter_parse(ok, strlen(ok), NULL, 0, &f, &err), 0);
    ent_filter_free(f);
    char *bad = repeat("a = '", "x", ENT_SQL_EXPRESSION_MAX - 5, "'");
    assert_int_equal(ent_filter_parse(bad, strlen(bad), NULL, 0, &f, &err), -1);
    assert_string_equal(err.message, "expression is 1025 characters long; the limit is 1024");
    assert_int_equal(err.kind, ENT_FILTER_ERR_LIMIT);
    assert_int_equal(ent_filter_error_status(&err), SB_ERR_ARGUMENT);

    /* Characters, not bytes: 1024 two-byte characters are fine. */
    char *wide = repeat("a = '", "\xc3\xa9", ENT_SQL_EXPRESSION_MAX - 6, "'");
    assert_int_equal(ent_filter_parse(wide, strlen(wide), NULL, 0, &f, &err), 0);
    ent_filter_free(f);

    /* The limit can be raised at start-up (and is restored here). */
    ent_filter_limits saved = ent_filter_get_limits();
    ent_filter_limits more = {.max_expr_chars = 2048};
    ent_filter_set_limits(&more);
    assert_int_equal(ent_filter_get_limits().max_action_statements, ENT_FILTER_MAX_ACTION_STATEMENTS);
    assert_int_equal(ent_filter_parse(bad, strlen(bad), NULL, 0, &f, &err), 0);
    ent_filter_free(f);
    ent_filter_set_limits(&saved);
    assert_int_equal(ent_filter_get_limits().max_expr_chars, ENT_SQL_EXPRESSION_MAX);
    free(ok);
    free(bad);
    free(wide);
}

static void test_nesting_limit(void **state)
{
    (void)state;
    ent_filter *f;
    ent_filter_error err;
    char *deep = repeat("", "(", 300, "a = 1");
    char *closed = repeat(deep, ")", 300, "");
    assert_int_equal(ent_filter_parse(closed, strlen(closed), NULL, 0, &f, &err), -1);
    assert_non_null(strstr(err.message, "expression is nested more than 256 levels deep at column"));

    /* 300 NOTs need more than 1024 characters: raise the length limit. */
    ent_filter_limits saved = ent_filter_get_limits(), more = {.max_expr_chars = 4096};
    ent_filter_set_limits(&more);
    char *nots = repeat("", "NOT ", 300, "TRUE");
    assert_int_equal(ent_filter_parse(nots, strlen(nots), NULL, 0, &f, &err), -1);
    ent_filter_set_limits(&saved);
    assert_non_null(strstr(err.message, "nested more than 256 levels"));

    char *minus = repeat("", "-", 300, "1 = 1");
    assert_int_equal(ent_filter_parse(minus, strlen(minus), NULL, 0, &f, &err), -1);
    assert_non_null(strstr(err.message, "nested more than 256 levels"));

    /* A long flat chain is not nesting in the parser, but it is depth in the
     * tree: 120 ANDs (what fits in 1024 characters) are fine. */
    char *chain = repeat("TRUE", " AND 1=1", 120, "");
    assert_int_equal(ent_filter_parse(chain, strlen(chain), NULL, 0, &f, &err), 0);
    assert_int_equal(ent_filter_eval(f, &(ent_filter_msg){0}, NULL), ENT_FILTER_TRUE);
    ent_filter_free(f);

    /* 100 levels of parentheses are fine. */
    char *ok = repeat("", "(", 100, "TRUE");
    char *ok2 = repeat(ok, ")", 100, "");
    assert_int_equal(ent_filter_parse(ok2, strlen(ok2), NULL, 0, &f, &err), 0);
    ent_filter_free(f);
    free(deep);
    free(closed);
    free(nots);
    free(minus);
    free(chain);
    free(ok);
    free(ok2);
}

static void test_parameter_errors(void **state)
{
    (void)state;
    ent_filter *f;
    ent_filter_error err;
    ent_filter_prop noname[] = {{NULL, ent_fv_int(1)}};
    assert_int_equal(ent_filter_parse("TRUE", 4, noname, 1, &f, &err), -1);
    assert_string_equal(err.message, "parameter 1 has no name");
    ent_filter_prop at_only[] = {{"@x", ent_fv_int(1)}, {"@", ent_fv_int(1)}};
    assert_int_equal(ent_filter_parse("TRUE", 4, at_only, 2, &f, &err), -1);
    assert_string_equal(err.message, "parameter 2 has no name");
    ent_filter_prop one[] = {{"@x", ent_fv_int(1)}};
    assert_int_equal(ent_filter_parse("@y = 1", 6, one, 1, &f, &err), -1);
    assert_string_equal(err.message, "parameter '@y' is not defined at column 1");
    assert_int_equal(ent_filter_parse(NULL, 3, NULL, 0, &f, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_errors),    cmocka_unit_test(test_error_fields),
        cmocka_unit_test(test_eval_errors),      cmocka_unit_test(test_scratch_is_reused),
        cmocka_unit_test(test_length_limit),     cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_parameter_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
