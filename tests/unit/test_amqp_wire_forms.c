/* The forms values take on the wire (amqp10/codec/amqp_wire_forms.h): the lock token
 * as a delivery tag, header.delivery-count, .NET ticks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "amqp_wire_forms.h"
#include "ent_duration.h"

static void test_lock_token_order(void **state)
{
    (void)state;
    /* RFC 00112233-4455-6677-8899-aabbccddeeff -> .NET bytes 33 22 11 00 55 44 77 66 88 .. ff */
    const uint8_t rfc[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                             0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    const uint8_t net[16] = {0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66,
                             0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    uint8_t out[16], back[16];
    amqp_lock_token_swap(rfc, out);
    assert_memory_equal(out, net, 16);
    amqp_lock_token_swap(out, back);
    assert_memory_equal(back, rfc, 16);
}

static void test_header_delivery_count(void **state)
{
    (void)state;
    assert_int_equal(amqp_header_delivery_count(1), 0);
    assert_int_equal(amqp_header_delivery_count(3), 2);
    assert_int_equal(amqp_header_delivery_count(0), 0);
}

static void test_ticks(void **state)
{
    (void)state;
    assert_int_equal(ENT_TICKS_AT_UNIX_EPOCH, INT64_C(621355968000000000));
    assert_int_equal(amqp_ticks_from_unix_ms(0), INT64_C(621355968000000000));
    /* 1 ms = 10000 ticks */
    assert_int_equal(amqp_ticks_from_unix_ms(1), INT64_C(621355968000010000));
    /* 2026-01-01T00:00:00Z = 1767225600000 ms; .NET new DateTime(2026,1,1).Ticks */
    assert_int_equal(amqp_ticks_from_unix_ms(INT64_C(1767225600000)), INT64_C(639028224000000000));
    /* 2026-01-01T00:00:00.123Z */
    assert_int_equal(amqp_ticks_from_unix_ms(INT64_C(1767225600123)), INT64_C(639028224001230000));
    /* before the epoch: 0001-01-01T00:00:00Z is tick 0 */
    assert_int_equal(amqp_ticks_from_unix_ms(INT64_C(-62135596800000)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_token_order),
        cmocka_unit_test(test_header_delivery_count),
        cmocka_unit_test(test_ticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
