/* Evaluating a filter and running an action's expressions must not touch
 * the heap: this test replaces malloc and friends (glibc lets an executable
 * interpose them and forward to __libc_*) and counts calls while filters run.
 * Under AddressSanitizer the allocator is ASan's, so the test skips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ent_filter.h"
#include "filter_fixture.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

#define ROUNDS 100

static int counting;
static size_t allocations;

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

static const char *const filters[] = {
    "color = 'red' AND qty > 4 OR sys.Label LIKE '%Bus%'",
    "color + 'dish' = 'reddish' AND '' + price = '2.5' AND 'n' + sys.EnqueuedTimeUtc <> ''",
    "p('col' + 'or') IN ('blue', 'red') AND NOT EXISTS(missing) AND nothing IS NULL",
    "sys.EnqueuedTimeUtc + sys.TimeToLive > sys.EnqueuedTimeUtc AND newid() <> sys.LockToken",
    "long + 'x' LIKE 'L%x' AND uni LIKE 'h_llo' ESCAPE '!'",
    "missing = 1 OR qty / 2.0 * 4 % 3 = 1",
};

static void test_eval_does_not_allocate(void **state)
{
    (void)state;
#ifdef SANITIZED
    skip();
#endif
    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    /* The counter sees our allocations: kvmsg copies a new property. */
    allocations = 0;
    counting = 1;
    fix_user(&m, "counted", ent_fv_cstr("x"));
    counting = 0;
    assert_true(allocations > 0);
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        ent_filter *f;
        ent_filter_error err;
        assert_int_equal(ent_filter_parse(filters[i], strlen(filters[i]), NULL, 0, &f, &err), 0);
        ent_filter_result first = ent_filter_eval(f, &view, &err);
        assert_int_not_equal(first, ENT_FILTER_ERROR);
        allocations = 0;
        counting = 1;
        for (int r = 0; r < ROUNDS; r++)
            ent_filter_eval(f, &view, &err);
        counting = 0;
        if (allocations)
            fail_msg("\"%s\" allocated %zu times in %d evaluations", filters[i], allocations, ROUNDS);
        ent_filter_free(f);
    }
    ent_filter_kvmsg_free(&m);
}

/* Counting messages (callbacks that never allocate) isolate the action's own
 * behaviour from kvmsg, which copies on purpose. */
static int count_get_sys(const void *self, ent_filter_sys id, ent_filter_value *out)
{
    (void)self;
    if (id != ENT_SYS_LABEL)
        return 0;
    *out = ent_fv_cstr("lbl");
    return 1;
}

static int count_get_user(const void *self, const char *name, size_t len, ent_filter_value *out)
{
    (void)self, (void)name, (void)len;
    *out = ent_fv_int(5);
    return 1;
}

static int count_set_sys(void *self, ent_filter_sys id, const ent_filter_value *v)
{
    (void)id, (void)v;
    (*(int *)self)++;
    return 0;
}

static int count_set_user(void *self, const char *name, size_t len, const ent_filter_value *v)
{
    (void)name, (void)len, (void)v;
    (*(int *)self)++;
    return 0;
}

static void test_action_does_not_allocate(void **state)
{
    (void)state;
#ifdef SANITIZED
    skip();
#endif
    static const ent_filter_mut_ops ops = {{count_get_sys, count_get_user}, count_set_sys, count_set_user};
    int sets = 0;
    ent_filter_mut_msg mut = {&ops, &sets};
    const char *text = "SET a = qty * 2; SET sys.Label = sys.Label + qty, REMOVE b; SET sys.To = 2.5";
    ent_filter_action *a;
    ent_filter_error err;
    assert_int_equal(ent_filter_action_parse(text, strlen(text), NULL, 0, &a, &err), 0);
    allocations = 0;
    counting = 1;
    for (int r = 0; r < ROUNDS; r++)
        assert_int_equal(ent_filter_action_exec(a, &mut, &err), 0);
    counting = 0;
    assert_int_equal(allocations, 0);
    assert_int_equal(sets, 4 * ROUNDS);
    ent_filter_action_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_does_not_allocate),
        cmocka_unit_test(test_action_does_not_allocate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
