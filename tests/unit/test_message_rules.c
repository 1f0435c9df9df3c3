/* Lifecycle rules and addresses: TTL caps, expiry, lock and delivery-count
 * arithmetic, lock-token byte order, address normalisation, SAS tokens. */
#include <setjmp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "amqp_sas.h"
#include "ent_address.h"
#include "ent_message_rules.h"
#include "ent_props.h"

static void test_ttl_cap(void **state)
{
    (void)state;
    assert_int_equal(ent_effective_ttl_ms(-1, -1), -1);
    assert_int_equal(ent_effective_ttl_ms(-1, 5000), 5000);     /* default applies */
    assert_int_equal(ent_effective_ttl_ms(9000, 5000), 5000);   /* longer is capped */
    assert_int_equal(ent_effective_ttl_ms(3000, 5000), 3000);   /* shorter is kept */
    assert_int_equal(ent_effective_ttl_ms(3000, -1), 3000);
    assert_int_equal(ent_expires_at_ms(1000, 500), 1500);
    assert_int_equal(ent_expires_at_ms(1000, -1), 0);
    assert_int_equal(ent_expires_at_ms(INT64_MAX - 10, 100), 0); /* overflow means never */
}

static void test_lock_rules(void **state)
{
    (void)state;
    assert_int_equal(ent_lock_until_ms(1000, 60000), 61000);
    assert_int_equal(ent_available_at_ms(1000, 0), 1000);
    assert_int_equal(ent_available_at_ms(1000, 5000), 5000);
    assert_int_equal(ent_available_at_ms(1000, 500), 1000);
}

static void test_addresses(void **state)
{
    (void)state;
    ent_address a;
    assert_int_equal(ent_address_parse("orders", &a), 0);
    assert_int_equal(a.kind, ENT_NODE_ENTITY);
    assert_string_equal(a.entity, "orders");
    assert_int_equal(ent_address_parse("/orders", &a), 0);
    assert_string_equal(a.entity, "orders");
    assert_int_equal(ent_address_parse("amqps://localhost:5671/Orders", &a), 0);
    assert_string_equal(a.entity, "Orders");
    assert_int_equal(ent_address_parse("orders/$DeadLetterQueue", &a), 0);
    assert_true(a.dead_letter);
    assert_string_equal(a.entity, "orders");
    assert_int_equal(ent_address_parse("orders/$deadletterqueue/$management", &a), 0);
    assert_int_equal(a.kind, ENT_NODE_MANAGEMENT);
    assert_true(a.dead_letter);
    assert_int_equal(ent_address_parse("$cbs", &a), 0);
    assert_int_equal(a.kind, ENT_NODE_CBS);
    assert_int_equal(ent_address_parse("site1%2Fq", &a), 0);
    assert_string_equal(a.entity, "site1/q");
    assert_int_equal(ent_address_parse("", &a), -1);
    assert_int_equal(ent_address_parse(NULL, &a), -1);
    assert_int_equal(ent_address_parse("amqps://host", &a), -1);

    char path[300];
    assert_int_equal(ent_audience_path("sb://localhost:5672/orders/$management", path, sizeof path), 0);
    assert_string_equal(path, "orders");
    assert_int_equal(ent_audience_path("sb://localhost/", path, sizeof path), 0);
    assert_string_equal(path, "");
    assert_true(ent_path_authorized("", "anything"));
    assert_true(ent_path_authorized("orders", "Orders"));
    assert_true(ent_path_authorized("t1", "t1/Subscriptions/s1"));
    assert_false(ent_path_authorized("orders", "orders2"));
}

/* Builds a token the way the JS SDK does (encodeURIComponent, sr,sig,se,skn). */
static void make_token(char *out, size_t outlen, const char *sr_enc, const char *key, long long se, const char *skn)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s\n%lld", sr_enc, se);
    unsigned char mac[32];
    unsigned int maclen;
    HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)msg, strlen(msg), mac, &maclen);
    unsigned char b64[64];
    EVP_EncodeBlock(b64, mac, (int)maclen);
    char sig[128];
    size_t o = 0;
    for (const unsigned char *p = b64; *p; p++)
        o += (size_t)(*p == '+' || *p == '/' || *p == '=' ? snprintf(sig + o, sizeof sig - o, "%%%02X", *p)
                                                         : snprintf(sig + o, sizeof sig - o, "%c", *p));
    snprintf(out, outlen, "SharedAccessSignature sr=%s&sig=%s&se=%lld&skn=%s", sr_enc, sig, se, skn);
}

static void test_sas(void **state)
{
    (void)state;
    char tok[512], why[256];
    amqp_sas_result r;
    long long now_s = 1800000000;
    make_token(tok, sizeof tok, "sb%3A%2F%2Flocalhost%2Forders", "SAS_KEY_VALUE", now_s + 3600, "RootManageSharedAccessKey");
    assert_int_equal(amqp_sas_verify(tok, "RootManageSharedAccessKey", "SAS_KEY_VALUE", now_s * 1000, &r, why, sizeof why), SB_OK);
    assert_string_equal(r.audience, "sb://localhost/orders");
    assert_int_equal(r.expires_ms, (now_s + 3600) * 1000);
    /* wrong key */
    assert_int_equal(amqp_sas_verify(tok, "RootManageSharedAccessKey", "other", now_s * 1000, &r, why, sizeof why),
                     SB_ERR_UNAUTHORIZED);
    assert_non_null(strstr(why, "signature"));
    /* expired */
    assert_int_equal(amqp_sas_verify(tok, "RootManageSharedAccessKey", "SAS_KEY_VALUE", (now_s + 4000) * 1000, &r, why,
                                     sizeof why),
                     SB_ERR_UNAUTHORIZED);
    assert_non_null(strstr(why, "expired"));
    /* unknown key name */
    make_token(tok, sizeof tok, "sb%3A%2F%2Flocalhost%2Forders", "SAS_KEY_VALUE", now_s + 3600, "Other");
    assert_int_equal(amqp_sas_verify(tok, "RootManageSharedAccessKey", "SAS_KEY_VALUE", now_s * 1000, &r, why, sizeof why),
                     SB_ERR_UNAUTHORIZED);
    /* garbage */
    assert_int_equal(amqp_sas_verify("Bearer x", "k", "v", 0, &r, why, sizeof why), SB_ERR_UNAUTHORIZED);
    assert_int_equal(amqp_sas_verify("SharedAccessSignature sr=a&sig=b", "k", "v", 0, &r, why, sizeof why),
                     SB_ERR_UNAUTHORIZED);
    /* an expiry too far off for milliseconds (the fuzzer's: se=9223372036854775807) is as good as
     * never, not a signed overflow */
    make_token(tok, sizeof tok, "sb%3A%2F%2Flocalhost%2Forders", "SAS_KEY_VALUE", LLONG_MAX, "RootManageSharedAccessKey");
    assert_int_equal(amqp_sas_verify(tok, "RootManageSharedAccessKey", "SAS_KEY_VALUE", now_s * 1000, &r, why, sizeof why), SB_OK);
    assert_true(r.expires_ms >= LLONG_MAX / 1000 * 1000);
    assert_int_equal(amqp_sas_read(tok, &r, why, sizeof why), SB_OK);
    assert_true(r.expires_ms >= LLONG_MAX / 1000 * 1000);
}

static void test_status_directions(void **state)
{
    (void)state;
    assert_true(ent_entity_status_allows_send("Active"));
    assert_true(ent_entity_status_allows_receive("Active"));
    assert_false(ent_entity_status_allows_send("Disabled"));
    assert_false(ent_entity_status_allows_receive("Disabled"));
    assert_false(ent_entity_status_allows_send("SendDisabled"));
    assert_true(ent_entity_status_allows_receive("SendDisabled"));
    assert_true(ent_entity_status_allows_send("ReceiveDisabled"));
    assert_false(ent_entity_status_allows_receive("ReceiveDisabled"));
    assert_false(ent_entity_status_allows_send("Bogus"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ttl_cap),   cmocka_unit_test(test_lock_rules),
        cmocka_unit_test(test_addresses), cmocka_unit_test(test_sas),
        cmocka_unit_test(test_status_directions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
