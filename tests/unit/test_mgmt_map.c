/* mgmt_arg_sequence (mgmt_map.c): the list or array a request names, with the
 * descriptions schedule-message has always answered for a bad `messages`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <proton/codec.h>
#include <string.h>

#include "mgmt_map.h"

/* A body {"messages": <n maps>}, as a list or an array of maps; n < 0: a string instead. */
static pn_data_t *body_with(int n, bool array)
{
    pn_data_t *d = pn_data(0);
    pn_data_put_map(d);
    pn_data_enter(d);
    pn_data_put_string(d, pn_bytes(8, "messages"));
    if (n < 0) {
        pn_data_put_string(d, pn_bytes(1, "x"));
    } else {
        if (array)
            pn_data_put_array(d, false, PN_MAP);
        else
            pn_data_put_list(d);
        pn_data_enter(d);
        for (int i = 0; i < n; i++) {
            pn_data_put_map(d);
            pn_data_enter(d);
            pn_data_put_string(d, pn_bytes(7, "message"));
            pn_data_put_binary(d, pn_bytes(1, "m"));
            pn_data_exit(d);
        }
        pn_data_exit(d);
    }
    pn_data_exit(d);
    return d;
}

static int read_messages(pn_data_t *d, size_t *count, char *err, size_t errlen)
{
    return mgmt_arg_sequence(d, "messages", "a list of maps", "messages", count, err, errlen);
}

static void test_sequence_entered(void **state)
{
    (void)state;
    for (int array = 0; array < 2; array++) {
        pn_data_t *d = body_with(3, array);
        size_t count = 0;
        char err[256];
        assert_int_equal(read_messages(d, &count, err, sizeof err), 0);
        assert_int_equal(count, 3);
        assert_true(pn_data_next(d)); /* on the first item */
        assert_int_equal(pn_data_type(d), PN_MAP);
        pn_data_free(d);
    }
}

static void test_sequence_refusals(void **state)
{
    (void)state;
    char err[256];
    size_t count;
    pn_data_t *d = pn_data(0);
    pn_data_put_map(d);
    assert_int_equal(read_messages(d, &count, err, sizeof err), -1);
    assert_string_equal(err, "The request body has no 'messages' (expected a list of maps).");
    pn_data_free(d);
    d = body_with(-1, false);
    assert_int_equal(read_messages(d, &count, err, sizeof err), -1);
    assert_string_equal(err, "The request body's 'messages' must be a list of maps, not string.");
    pn_data_free(d);
    d = body_with(0, false);
    assert_int_equal(read_messages(d, &count, err, sizeof err), -1);
    assert_string_equal(err, "The request body's 'messages' must hold 1 to 5000 messages, not 0.");
    pn_data_free(d);
    d = body_with(MGMT_ITEMS_MAX + 1, false);
    assert_int_equal(read_messages(d, &count, err, sizeof err), -1);
    assert_string_equal(err, "The request body's 'messages' must hold 1 to 5000 messages, not 5001.");
    pn_data_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequence_entered),
        cmocka_unit_test(test_sequence_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
