/* The fate of a sent message (entities/ent_send.h): TTL capped by the
 * target's default, a schedule hides it and starts its TTL when it shows, a
 * chain too long or whose end refuses it makes it a dead letter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_dead_letter.h"
#include "ent_message_rules.h"
#include "ent_send.h"

static ent_route route_to(int64_t target, int64_t default_ttl_ms, const char *status)
{
    ent_route r;
    memset(&r, 0, sizeof r);
    r.send_target_id = target;
    r.send_target_default_ttl_ms = default_ttl_ms;
    snprintf(r.send_target_status, sizeof r.send_target_status, "%s", status);
    return r;
}

static void test_ttl_is_capped_by_the_default(void **state)
{
    (void)state;
    ent_route r = route_to(1, 60000, "Active");
    ent_send_fate f = ent_send_decide(&r, ENT_TTL_NONE, 0, 1000);
    assert_int_equal(f.ttl_ms, 60000); /* none given: the default */
    assert_int_equal(f.expires_ms, 61000);
    f = ent_send_decide(&r, 120000, 0, 1000);
    assert_int_equal(f.ttl_ms, 60000); /* longer: silently capped */
    f = ent_send_decide(&r, 5000, 0, 1000);
    assert_int_equal(f.ttl_ms, 5000); /* shorter: its own */
    assert_false(f.scheduled);
    assert_false(f.dead_letter);
    r = route_to(1, ENT_TTL_NONE, "Active");
    f = ent_send_decide(&r, ENT_TTL_NONE, 0, 1000);
    assert_int_equal(f.expires_ms, 0); /* never */
}

static void test_a_schedule_hides_it_and_starts_its_ttl_later(void **state)
{
    (void)state;
    ent_route r = route_to(1, ENT_TTL_NONE, "Active");
    ent_send_fate f = ent_send_decide(&r, 5000, 10000, 1000);
    assert_true(f.scheduled);
    assert_int_equal(f.available_ms, 10000);
    assert_int_equal(f.expires_ms, 15000);
    f = ent_send_decide(&r, 5000, 500, 1000); /* a time already past: visible now */
    assert_false(f.scheduled);
    assert_int_equal(f.available_ms, 1000);
}

static void test_a_chain_too_long_is_a_dead_letter(void **state)
{
    (void)state;
    ent_route r = route_to(2, ENT_TTL_NONE, "Active");
    r.forward_hops_exceeded = true;
    ent_send_fate f = ent_send_decide(&r, ENT_TTL_NONE, 0, 1000);
    assert_true(f.dead_letter);
    assert_string_equal(f.dead_letter_reason, ENT_DLQ_REASON_HOPS);
    ent_send_forward_failed(&f); /* keeps the first reason */
    assert_string_equal(f.dead_letter_reason, ENT_DLQ_REASON_HOPS);
}

static void test_a_refusing_end_diverts_into_the_source(void **state)
{
    (void)state;
    ent_route r = route_to(2, ENT_TTL_NONE, "SendDisabled");
    assert_true(ent_send_diverts(&r, 1));
    assert_false(ent_send_diverts(&r, 2)); /* sent to the end itself: its status refuses it, no divert */
    r = route_to(2, ENT_TTL_NONE, "Active");
    assert_false(ent_send_diverts(&r, 1));
    ent_send_fate f = ent_send_decide(&r, ENT_TTL_NONE, 5000, 1000);
    assert_true(f.scheduled);
    ent_send_forward_failed(&f);
    assert_true(f.dead_letter);
    assert_false(f.scheduled);
    assert_string_equal(f.dead_letter_reason, ENT_DLQ_REASON_FORWARD);
    assert_string_equal(f.dead_letter_description, ENT_DLQ_DESC_FORWARD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ttl_is_capped_by_the_default),
        cmocka_unit_test(test_a_schedule_hides_it_and_starts_its_ttl_later),
        cmocka_unit_test(test_a_chain_too_long_is_a_dead_letter),
        cmocka_unit_test(test_a_refusing_end_diverts_into_the_source),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
