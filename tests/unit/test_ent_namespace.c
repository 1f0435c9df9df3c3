/* Namespaces (entities/ent_namespace.h): the names a namespace may have, the
 * namespace a host or an audience names, which namespace a client is in, and
 * the registry the broker keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ent_namespace.h"

static char why[512];

static void test_names(void **state)
{
    (void)state;
    const char *good[] = {"a", "ns1", "suite-a", "Suite_A", "0abc", "x-y_z-1"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(ent_namespace_name_check(good[i], why, sizeof why), SB_OK);
    char longest[ENT_NAMESPACE_NAME_MAX + 2];
    memset(longest, 'n', ENT_NAMESPACE_NAME_MAX);
    longest[ENT_NAMESPACE_NAME_MAX] = 0;
    assert_int_equal(ent_namespace_name_check(longest, why, sizeof why), SB_OK);
    longest[ENT_NAMESPACE_NAME_MAX] = 'n';
    longest[ENT_NAMESPACE_NAME_MAX + 1] = 0;
    assert_int_equal(ent_namespace_name_check(longest, why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "is 51 characters long; the most is 50"));
    assert_int_equal(ent_namespace_name_check("", why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "needs a name"));
    assert_int_equal(ent_namespace_name_check(NULL, why, sizeof why), SB_ERR_ARGUMENT);
    assert_int_equal(ent_namespace_name_check("a.b", why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "The namespace name 'a.b' holds '.' at position 2"));
    assert_int_equal(ent_namespace_name_check("my ns", why, sizeof why), SB_ERR_ARGUMENT);
    assert_int_equal(ent_namespace_name_check("x/y", why, sizeof why), SB_ERR_ARGUMENT);
    assert_int_equal(ent_namespace_name_check("-x", why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "must start with a letter or a digit"));
    assert_int_equal(ent_namespace_name_check("_x", why, sizeof why), SB_ERR_ARGUMENT);
}

static void test_default_names(void **state)
{
    (void)state;
    assert_true(ent_namespace_is_default(NULL, "orders-ns"));
    assert_true(ent_namespace_is_default("", "orders-ns"));
    assert_true(ent_namespace_is_default("default", "orders-ns"));
    assert_true(ent_namespace_is_default("DEFAULT", "orders-ns"));
    assert_true(ent_namespace_is_default("Orders-NS", "orders-ns"));
    assert_true(ent_namespace_is_default("sbemulatorns", "orders-ns"));
    assert_true(ent_namespace_is_default("SbEmulatorNs", NULL));
    assert_true(ent_namespace_is_default("sbemulatorns", ""));
    assert_false(ent_namespace_is_default("other", "orders-ns"));
    assert_false(ent_namespace_is_default("orders", "orders-ns"));
}

static void test_hosts(void **state)
{
    (void)state;
    char ns[ENT_NAMESPACE_NAME_SIZE];
    assert_int_equal(ent_namespace_of_host("ns1.localhost", ns, sizeof ns, why, sizeof why), 1);
    assert_string_equal(ns, "ns1");
    assert_int_equal(ent_namespace_of_host("Suite-A.LocalHost:5672", ns, sizeof ns, why, sizeof why), 1);
    assert_string_equal(ns, "Suite-A");
    assert_int_equal(ent_namespace_of_host("ns2.localhost.", ns, sizeof ns, why, sizeof why), 1);
    assert_string_equal(ns, "ns2");
    /* hosts that name none: the default namespace's */
    const char *none[] = {NULL, "", "localhost", "LOCALHOST:5672", "127.0.0.1", "127.0.0.1:5300", "[::1]:5672",
                          "sbemu.example.com", "mylocalhost", ".localhost", "ns1.localhost.example"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        assert_int_equal(ent_namespace_of_host(none[i], ns, sizeof ns, why, sizeof why), 0);
        assert_string_equal(ns, "");
    }
    /* a label no namespace may have */
    assert_int_equal(ent_namespace_of_host("a.b.localhost", ns, sizeof ns, why, sizeof why), -1);
    assert_non_null(strstr(why, "The host 'a.b.localhost' names no namespace"));
    assert_int_equal(ent_namespace_of_host("-x.localhost", ns, sizeof ns, why, sizeof why), -1);
    char host[128];
    snprintf(host, sizeof host, "%060d.localhost", 7);
    assert_int_equal(ent_namespace_of_host(host, ns, sizeof ns, why, sizeof why), -1);
    assert_non_null(strstr(why, "a namespace name has at most 50"));
}

static void test_audiences(void **state)
{
    (void)state;
    char ns[ENT_NAMESPACE_NAME_SIZE];
    assert_int_equal(ent_namespace_of_audience("sb://ns2.localhost:5672/orders", ns, sizeof ns, why, sizeof why), 1);
    assert_string_equal(ns, "ns2");
    assert_int_equal(ent_namespace_of_audience("https://ns2.localhost/orders?api-version=2021-05", ns, sizeof ns, why,
                                               sizeof why),
                     1);
    assert_string_equal(ns, "ns2");
    assert_int_equal(ent_namespace_of_audience("amqps://ns3.localhost", ns, sizeof ns, why, sizeof why), 1);
    assert_string_equal(ns, "ns3");
    assert_int_equal(ent_namespace_of_audience("sb://localhost:5672/orders", ns, sizeof ns, why, sizeof why), 0);
    assert_int_equal(ent_namespace_of_audience("orders", ns, sizeof ns, why, sizeof why), 0);
    assert_int_equal(ent_namespace_of_audience(NULL, ns, sizeof ns, why, sizeof why), 0);
}

static void test_choose(void **state)
{
    (void)state;
    char ns[ENT_NAMESPACE_NAME_SIZE];
    /* plain localhost, the root key name or the emulator's: the default namespace */
    assert_int_equal(ent_namespace_choose("", "RootManageSharedAccessKey", "RootManageSharedAccessKey", NULL, ns,
                                          sizeof ns, why, sizeof why),
                     SB_OK);
    assert_string_equal(ns, "");
    assert_int_equal(ent_namespace_choose(NULL, "RootManageSharedAccessKey", "Name1", NULL, ns, sizeof ns, why,
                                          sizeof why),
                     SB_OK);
    assert_string_equal(ns, "");
    assert_int_equal(ent_namespace_choose(NULL, "Name1", "Name1", NULL, ns, sizeof ns, why, sizeof why), SB_OK);
    assert_string_equal(ns, "");
    assert_int_equal(ent_namespace_choose(NULL, NULL, "Name1", NULL, ns, sizeof ns, why, sizeof why), SB_OK);
    assert_string_equal(ns, "");
    /* any other key name names a namespace */
    assert_int_equal(ent_namespace_choose("", "suite-a", "RootManageSharedAccessKey", "mine", ns, sizeof ns, why,
                                          sizeof why),
                     SB_OK);
    assert_string_equal(ns, "suite-a");
    /* ...unless it is one of the default's names */
    assert_int_equal(ent_namespace_choose("", "Mine", "RootManageSharedAccessKey", "mine", ns, sizeof ns, why,
                                          sizeof why),
                     SB_OK);
    assert_string_equal(ns, "");
    assert_int_equal(ent_namespace_choose("", "default", "RootManageSharedAccessKey", "mine", ns, sizeof ns, why,
                                          sizeof why),
                     SB_OK);
    assert_string_equal(ns, "");
    /* the host decides, whatever the key name */
    assert_int_equal(ent_namespace_choose("ns1", "RootManageSharedAccessKey", "RootManageSharedAccessKey", NULL, ns,
                                          sizeof ns, why, sizeof why),
                     SB_OK);
    assert_string_equal(ns, "ns1");
    assert_int_equal(ent_namespace_choose("ns1", "suite-a", "RootManageSharedAccessKey", NULL, ns, sizeof ns, why,
                                          sizeof why),
                     SB_OK);
    assert_string_equal(ns, "ns1");
    assert_int_equal(ent_namespace_choose("sbemulatorns", "suite-a", "RootManageSharedAccessKey", NULL, ns, sizeof ns,
                                          why, sizeof why),
                     SB_OK);
    assert_string_equal(ns, "");
    /* a key name no namespace may have is refused, saying why */
    assert_int_equal(ent_namespace_choose("", "not.a.namespace", "RootManageSharedAccessKey", NULL, ns, sizeof ns, why,
                                          sizeof why),
                     SB_ERR_UNAUTHORIZED);
    assert_non_null(strstr(why, "the SharedAccessKeyName 'not.a.namespace' names a namespace"));
    assert_non_null(strstr(why, "letters, digits, '-' and '_'"));
    /* ...but not when the host chose the namespace */
    assert_int_equal(ent_namespace_choose("ns1", "not.a.namespace", "RootManageSharedAccessKey", NULL, ns, sizeof ns,
                                          why, sizeof why),
                     SB_OK);
    assert_string_equal(ns, "ns1");
}

static void test_registry(void **state)
{
    (void)state;
    ent_namespaces *r = ent_namespaces_new();
    assert_non_null(r);
    assert_int_equal(ent_namespaces_count(r), 0);
    assert_null(ent_namespaces_get(r, 1));
    assert_null(ent_namespaces_find(r, "default", NULL));
    ent_namespace list[] = {{7, "suite-a", 0, 0}, {1, "orders-ns", 0, 0}, {3, "NS2", 0, 0}};
    assert_int_equal(ent_namespaces_replace(r, list, 3), 0);
    assert_int_equal(ent_namespaces_count(r), 3);
    assert_int_equal(ent_namespaces_at(r, 0)->id, 1); /* id order */
    assert_int_equal(ent_namespaces_at(r, 2)->id, 7);
    assert_null(ent_namespaces_at(r, 3));
    assert_string_equal(ent_namespaces_get(r, 3)->name, "NS2");
    assert_int_equal(ent_namespaces_find(r, "ns2", "orders-ns")->id, 3);
    assert_int_equal(ent_namespaces_find(r, "SUITE-A", "orders-ns")->id, 7);
    assert_int_equal(ent_namespaces_find(r, "default", "orders-ns")->id, 1);
    assert_int_equal(ent_namespaces_find(r, "sbemulatorns", "orders-ns")->id, 1);
    assert_int_equal(ent_namespaces_find(r, "Orders-NS", "orders-ns")->id, 1);
    assert_null(ent_namespaces_find(r, "other", "orders-ns"));
    /* one made a moment ago, between two refills */
    assert_int_equal(ent_namespaces_add(r, 5, "fresh"), 0);
    assert_int_equal(ent_namespaces_count(r), 4);
    assert_int_equal(ent_namespaces_at(r, 2)->id, 5);
    assert_int_equal(ent_namespaces_find(r, "Fresh", NULL)->id, 5);
    assert_int_equal(ent_namespaces_add(r, 9, "later"), 0);
    assert_int_equal(ent_namespaces_add(r, 2, "early"), 0);
    assert_int_equal(ent_namespaces_count(r), 6);
    for (size_t i = 1; i < ent_namespaces_count(r); i++)
        assert_true(ent_namespaces_at(r, i - 1)->id < ent_namespaces_at(r, i)->id);
    /* the same id again replaces it */
    assert_int_equal(ent_namespaces_add(r, 5, "renamed"), 0);
    assert_int_equal(ent_namespaces_count(r), 6);
    assert_string_equal(ent_namespaces_get(r, 5)->name, "renamed");
    assert_null(ent_namespaces_find(r, "fresh", NULL));
    /* a refill replaces everything */
    assert_int_equal(ent_namespaces_replace(r, list, 1), 0);
    assert_int_equal(ent_namespaces_count(r), 1);
    assert_null(ent_namespaces_get(r, 5));
    assert_int_equal(ent_namespaces_replace(r, NULL, 0), 0);
    assert_int_equal(ent_namespaces_count(r), 0);
    assert_int_equal(ent_namespaces_add(r, 4, "again"), 0);
    assert_int_equal(ent_namespaces_get(r, 4)->id, 4);
    ent_namespaces_free(r);
    ent_namespaces_free(NULL);
}

/* A namespace's own keys: what they may be, and which key a token must be
 * signed with. */
static void test_keys(void **state)
{
    (void)state;
    assert_int_equal(ent_namespace_key_check("sender", "c2VjcmV0+/=", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_key_check("Root.Key_2-a", "x", why, sizeof why), SB_OK);
    assert_int_equal(ent_namespace_key_check("", "x", why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "A key name is 1 to 256 characters long, not 0"));
    assert_int_equal(ent_namespace_key_check("a b", "x", why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "The key name 'a b' holds ' ' at position 2"));
    assert_int_equal(ent_namespace_key_check("k", "", why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "The key of 'k' is 1 to 256 characters long, not 0"));
    assert_int_equal(ent_namespace_key_check("k", "a;b", why, sizeof why), SB_ERR_ARGUMENT);
    assert_non_null(strstr(why, "at position 2: a key is printable ASCII without spaces or ';'"));
    assert_int_equal(ent_namespace_key_check("k", "a b", why, sizeof why), SB_ERR_ARGUMENT);
    char longest[ENT_NAMESPACE_KEY_MAX + 2];
    memset(longest, 'k', sizeof longest - 1);
    longest[sizeof longest - 1] = 0;
    assert_int_equal(ent_namespace_key_check("k", longest, why, sizeof why), SB_ERR_ARGUMENT);
    longest[ENT_NAMESPACE_KEY_MAX] = 0;
    assert_int_equal(ent_namespace_key_check("k", longest, why, sizeof why), SB_OK);

    ent_namespaces *r = ent_namespaces_new();
    ent_namespace list[] = {{1, "sbemulatorns", 0, 0}, {4, "keyed", 0, 0}, {5, "open", 0, 0}};
    assert_int_equal(ent_namespaces_replace(r, list, 3), 0);
    ent_namespace_key keys[] = {{4, "sender", "s3cret"}, {4, "listener", "l1sten"}, {9, "gone", "x"}};
    assert_int_equal(ent_namespaces_set_keys(r, keys, 3), 0);
    assert_int_equal(ent_namespaces_key_count(r, 4), 2);
    assert_int_equal(ent_namespaces_key_count(r, 5), 0);
    assert_int_equal(ent_namespaces_key_count(r, 9), 1);
    /* a namespace with keys takes its own, by name as written */
    assert_string_equal(ent_namespace_signing_key(r, 4, "keyed", "sender", "EMU", why, sizeof why), "s3cret");
    assert_string_equal(ent_namespace_signing_key(r, 4, "keyed", "listener", "EMU", why, sizeof why), "l1sten");
    assert_null(ent_namespace_signing_key(r, 4, "keyed", "Sender", "EMU", why, sizeof why));
    assert_null(ent_namespace_signing_key(r, 4, "keyed", "RootManageSharedAccessKey", "EMU", why, sizeof why));
    assert_non_null(strstr(why, "the namespace 'keyed' has keys of its own, and 'RootManageSharedAccessKey' is not "
                                "one of them"));
    /* without keys, unknown, or the default: the emulator's, whatever the key name */
    assert_string_equal(ent_namespace_signing_key(r, 5, "open", "anything", "EMU", why, sizeof why), "EMU");
    assert_string_equal(ent_namespace_signing_key(r, 0, "new-one", "sender", "EMU", why, sizeof why), "EMU");
    assert_string_equal(ent_namespace_signing_key(r, 1, "", "RootManageSharedAccessKey", "EMU", why, sizeof why),
                        "EMU");
    assert_string_equal(ent_namespace_signing_key(NULL, 4, "keyed", "x", "EMU", why, sizeof why), "EMU");
    /* keys replaced whole */
    assert_int_equal(ent_namespaces_set_keys(r, NULL, 0), 0);
    assert_int_equal(ent_namespaces_key_count(r, 4), 0);
    assert_string_equal(ent_namespace_signing_key(r, 4, "keyed", "sender", "EMU", why, sizeof why), "EMU");
    ent_namespaces_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_default_names),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_audiences),
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
