/* The length limits of ent_lengths.h: each refusal names the limit (the
 * constant's value, not a number written again), and the dead-letter texts
 * are refused, not cut, one code point past the limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ent_dead_letter.h"
#include "ent_props.h"

/* n copies of unit, NUL-terminated; the caller frees. */
static char *repeat(const char *unit, size_t n)
{
    size_t u = strlen(unit);
    char *s = malloc(u * n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * u, unit, u);
    s[u * n] = 0;
    return s;
}

static void assert_names_limit(const char *err, int limit)
{
    char want[32];
    snprintf(want, sizeof want, "%d", limit);
    if (!strstr(err, want))
        fail_msg("\"%s\" does not name the limit %d", err, limit);
}

static void test_entity_path(void **state)
{
    (void)state;
    char err[512];
    char *ok = repeat("q", ENT_ENTITY_PATH_MAX), *bad = repeat("q", ENT_ENTITY_PATH_MAX + 1);
    assert_int_equal(ent_check_entity_path("queue", ok, err, sizeof err), SB_OK);
    assert_int_equal(ent_check_entity_path("queue", bad, err, sizeof err), SB_ERR_ARGUMENT_RANGE);
    assert_names_limit(err, ENT_ENTITY_PATH_MAX);
    free(ok);
    free(bad);
}

static void test_child_names(void **state)
{
    (void)state;
    char err[512];
    const struct {
        const char *kind;
        int max;
    } names[] = {{"subscription name", ENT_SUBSCRIPTION_NAME_MAX}, {"rule name", ENT_RULE_NAME_MAX}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *ok = repeat("\xc3\xa9", (size_t)names[i].max), *bad = repeat("s", (size_t)names[i].max + 1);
        assert_int_equal(ent_check_child_name(names[i].kind, ok, (size_t)names[i].max, err, sizeof err), SB_OK);
        assert_int_equal(ent_check_child_name(names[i].kind, bad, (size_t)names[i].max, err, sizeof err),
                         SB_ERR_ARGUMENT_RANGE);
        assert_names_limit(err, names[i].max);
        free(ok);
        free(bad);
    }
}

static void test_dead_letter_text(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(ent_dead_letter_text_check("dead-letter reason", NULL, err, sizeof err), SB_OK);
    /* the limit counts characters: 4096 four-byte code points are fine */
    char *ok = repeat("\xf0\x9f\x98\x80", ENT_DEAD_LETTER_TEXT_MAX);
    assert_true(strlen(ok) < ENT_DEAD_LETTER_TEXT_SIZE);
    assert_int_equal(ent_dead_letter_text_check("dead-letter reason", ok, err, sizeof err), SB_OK);
    free(ok);
    char *bad = repeat("x", ENT_DEAD_LETTER_TEXT_MAX + 1);
    assert_int_equal(ent_dead_letter_text_check("dead-letter description", bad, err, sizeof err),
                     SB_ERR_ARGUMENT_RANGE);
    assert_names_limit(err, ENT_DEAD_LETTER_TEXT_MAX);
    assert_non_null(strstr(err, "dead-letter description"));
    free(bad);
    /* a longer text cut to the buffer still reads as too long (or, cut inside
     * a code point, as not UTF-8): never as a shorter valid one */
    char *wide = repeat("\xf0\x9f\x98\x80", ENT_DEAD_LETTER_TEXT_MAX + 2);
    char buf[ENT_DEAD_LETTER_TEXT_SIZE];
    for (size_t shift = 0; shift < 4; shift++) {
        snprintf(buf, sizeof buf, "%s%s", "xyz" + 3 - shift, wide);
        assert_int_not_equal(ent_dead_letter_text_check("dead-letter reason", buf, err, sizeof err), SB_OK);
    }
    free(wide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entity_path),
        cmocka_unit_test(test_child_names),
        cmocka_unit_test(test_dead_letter_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
