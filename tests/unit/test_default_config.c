/* Where the entities to create at start come from (emulator/emu_default_config.h):
 * --config wins, "none" means none, then the official image's path, then the
 * official image's default entities, which must parse into queue.1 and topic.1
 * with its four subscriptions and three rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "emu_config_json.h"
#include "emu_default_config.h"

static void test_choice(void **state)
{
    (void)state;
    const char *path;
    assert_int_equal(emu_config_choose("my.json", true, &path), EMU_CONFIG_FROM_FILE);
    assert_string_equal(path, "my.json");
    assert_int_equal(emu_config_choose("none", true, &path), EMU_CONFIG_FROM_NOTHING);
    assert_null(path);
    assert_int_equal(emu_config_choose(NULL, true, &path), EMU_CONFIG_FROM_FILE);
    assert_string_equal(path, EMU_OFFICIAL_CONFIG_PATH);
    assert_int_equal(emu_config_choose(NULL, false, &path), EMU_CONFIG_FROM_DEFAULTS);
    assert_null(path);
}

static void test_defaults_parse(void **state)
{
    (void)state;
    ent_config cfg;
    char err[512] = "";
    const char *text = emu_default_config_json();
    assert_int_equal(emu_config_parse(text, strlen(text), "defaults", &cfg, err, sizeof err), 0);
    assert_int_equal(cfg.nqueues, 1);
    assert_string_equal(cfg.queues[0].name, "queue.1");
    assert_int_equal(cfg.queues[0].max_delivery_count, 3);
    assert_int_equal(cfg.ntopics, 1);
    assert_string_equal(cfg.topics[0].props.name, "topic.1");
    assert_int_equal(cfg.topics[0].nsubscriptions, 4);
    size_t rules = 0;
    for (size_t i = 0; i < 4; i++)
        rules += cfg.topics[0].subscriptions[i].nrules;
    assert_int_equal(rules, 3);
    assert_string_equal(cfg.topics[0].subscriptions[3].props.name, "subscription.4");
    ent_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choice),
        cmocka_unit_test(test_defaults_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
