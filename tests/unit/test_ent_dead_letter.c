/* The dead-letter reasons entities/ent_dead_letter.h decides: what a message
 * says when MaxDeliveryCount or its TTL dead-letters it, and what each kind of
 * settlement carries into the store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ent_dead_letter.h"

static void test_max_delivery_and_expiry_say_what_service_bus_says(void **state)
{
    (void)state;
    ent_dead_letter_reason m = ent_dead_letter_max_delivery();
    assert_string_equal(m.reason, "MaxDeliveryCountExceeded");
    assert_string_equal(m.description, "Message couldn't be consumed after maximum delivery attempts.");
    ent_dead_letter_reason e = ent_dead_letter_expired();
    assert_string_equal(e.reason, "TTLExpiredException");
    assert_string_equal(e.description, "The message expired and was dead lettered.");
}

static void test_an_abandon_carries_max_delivery_whatever_the_client_said(void **state)
{
    (void)state;
    ent_dead_letter_reason r = ent_settle_dead_letter_reason(ENT_SETTLE_ABANDON, "mine", "my words");
    assert_string_equal(r.reason, ENT_DLQ_REASON_MAX_DELIVERY);
    assert_string_equal(r.description, ENT_DLQ_DESC_MAX_DELIVERY);
    r = ent_settle_dead_letter_reason(ENT_SETTLE_ABANDON, NULL, NULL);
    assert_string_equal(r.reason, ENT_DLQ_REASON_MAX_DELIVERY);
}

static void test_a_dead_letter_carries_the_clients_reason(void **state)
{
    (void)state;
    ent_dead_letter_reason r = ent_settle_dead_letter_reason(ENT_SETTLE_DEADLETTER, "mine", "my words");
    assert_string_equal(r.reason, "mine");
    assert_string_equal(r.description, "my words");
    r = ent_settle_dead_letter_reason(ENT_SETTLE_DEADLETTER, NULL, NULL);
    assert_null(r.reason);
    assert_null(r.description);
}

static void test_the_others_carry_what_they_were_given(void **state)
{
    (void)state;
    const ent_settle_kind kinds[] = {ENT_SETTLE_COMPLETE, ENT_SETTLE_DEFER, ENT_SETTLE_RELEASE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        ent_dead_letter_reason r = ent_settle_dead_letter_reason(kinds[i], NULL, NULL);
        assert_null(r.reason);
        assert_null(r.description);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_delivery_and_expiry_say_what_service_bus_says),
        cmocka_unit_test(test_an_abandon_carries_max_delivery_whatever_the_client_said),
        cmocka_unit_test(test_a_dead_letter_carries_the_clients_reason),
        cmocka_unit_test(test_the_others_carry_what_they_were_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
