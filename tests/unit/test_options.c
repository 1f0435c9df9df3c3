/* emu_options: defaults, every flag, --flag=value, environment, precedence,
 * and a clear error naming the flag for each kind of bad value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu_options.h"

static const char *const env_vars[] = {
    "SBEMU_CONFIG", "SBEMU_POSTGRES", "SBEMU_DATA_DIR", "SBEMU_AMQP_PORT", "SBEMU_AMQPS_PORT",
    "SBEMU_HTTP_PORT", "SBEMU_TLS_CERT", "SBEMU_TLS_KEY", "SBEMU_SAS_KEY_NAME", "SBEMU_SAS_KEY",
    "SBEMU_MAX_MESSAGE_SIZE", "SBEMU_BIND", "SBEMU_LOG_LEVEL", "SBEMU_METRICS_TOKEN_REQUIRED",
    "SBEMU_STORY", "SBEMU_STORY_RETENTION",
};

static int clear_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0]; i++)
        unsetenv(env_vars[i]);
    return 0;
}

/* Parses a NULL-terminated list of arguments (argv[0] is added). */
#define PARSE(o, err, ...) parse_args((o), (err), sizeof(err), (const char *[]){ "sbemu", __VA_ARGS__, NULL })

static int parse_args(emu_options *o, char *err, size_t errlen, const char **args)
{
    int argc = 0;
    while (args[argc])
        argc++;
    return emu_options_parse(o, argc, (char **)args, err, errlen);
}

static int parse_none(emu_options *o, char *err, size_t errlen)
{
    char *argv[] = { "sbemu", NULL };
    return emu_options_parse(o, 1, argv, err, errlen);
}

static void test_defaults(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_null(o.config_file);
    assert_null(o.postgres);
    assert_string_equal(o.data_dir, "./.sbemu");
    assert_int_equal(o.amqp_port, 5672);
    assert_int_equal(o.amqps_port, 5671);
    assert_int_equal(o.http_port, 5300);
    assert_null(o.tls_cert);
    assert_null(o.tls_key);
    assert_string_equal(o.sas_key_name, "RootManageSharedAccessKey");
    assert_string_equal(o.sas_key, "SAS_KEY_VALUE");
    assert_int_equal(o.handshake_timeout_s, 30);
    assert_int_equal(o.max_message_size, 262144);
    assert_null(o.bind);
    assert_int_equal(o.log_level, ENT_LOG_INFO);
    assert_int_equal(o.story, 1);
    assert_int_equal(o.story_retention_s, 3600);
    emu_options_free(&o);
}

static void check_all_set(const emu_options *o)
{
    assert_string_equal(o->config_file, "/etc/sb/Config.json");
    assert_string_equal(o->postgres, "postgres://u@db:5432/sb");
    assert_string_equal(o->data_dir, "/var/lib/sbemu");
    assert_int_equal(o->amqp_port, 15672);
    assert_int_equal(o->amqps_port, 15671);
    assert_int_equal(o->http_port, 15300);
    assert_string_equal(o->tls_cert, "/c.pem");
    assert_string_equal(o->tls_key, "/k.pem");
    assert_string_equal(o->sas_key_name, "Name1");
    assert_string_equal(o->sas_key, "s3cret=");
    assert_int_equal(o->max_message_size, 1048576);
    assert_string_equal(o->bind, "127.0.0.1");
    assert_int_equal(o->log_level, ENT_LOG_DEBUG);
}

static void test_every_flag_separate_value(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--config", "/etc/sb/Config.json", "--postgres", "postgres://u@db:5432/sb",
                           "--data-dir", "/var/lib/sbemu", "--amqp-port", "15672", "--amqps-port", "15671",
                           "--http-port", "15300", "--tls-cert", "/c.pem", "--tls-key", "/k.pem",
                           "--sas-key-name", "Name1", "--sas-key", "s3cret=", "--max-message-size", "1048576",
                           "--bind", "127.0.0.1", "--log-level", "debug"),
                     0);
    check_all_set(&o);
    emu_options_free(&o);
}

static void test_every_flag_equals_form(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    /* "--sas-key=s3cret=" keeps everything after the first '='. */
    assert_int_equal(PARSE(&o, err, "--config=/etc/sb/Config.json", "--postgres=postgres://u@db:5432/sb",
                           "--data-dir=/var/lib/sbemu", "--amqp-port=15672", "--amqps-port=15671",
                           "--http-port=15300", "--tls-cert=/c.pem", "--tls-key=/k.pem", "--sas-key-name=Name1",
                           "--sas-key=s3cret=", "--max-message-size=1m", "--bind=127.0.0.1",
                           "--log-level=DEBUG"),
                     0);
    check_all_set(&o);
    emu_options_free(&o);
}

static void test_env_vars(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    setenv("SBEMU_CONFIG", "/etc/sb/Config.json", 1);
    setenv("SBEMU_POSTGRES", "postgres://u@db:5432/sb", 1);
    setenv("SBEMU_DATA_DIR", "/var/lib/sbemu", 1);
    setenv("SBEMU_AMQP_PORT", "15672", 1);
    setenv("SBEMU_AMQPS_PORT", "15671", 1);
    setenv("SBEMU_HTTP_PORT", "15300", 1);
    setenv("SBEMU_TLS_CERT", "/c.pem", 1);
    setenv("SBEMU_TLS_KEY", "/k.pem", 1);
    setenv("SBEMU_SAS_KEY_NAME", "Name1", 1);
    setenv("SBEMU_SAS_KEY", "s3cret=", 1);
    setenv("SBEMU_MAX_MESSAGE_SIZE", "1024k", 1);
    setenv("SBEMU_BIND", "127.0.0.1", 1);
    setenv("SBEMU_LOG_LEVEL", "debug", 1);
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    check_all_set(&o);
    emu_options_free(&o);
}

static void test_empty_env_is_unset(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    setenv("SBEMU_POSTGRES", "", 1);
    setenv("SBEMU_AMQP_PORT", "", 1);
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_null(o.postgres);
    assert_int_equal(o.amqp_port, 5672);
    emu_options_free(&o);
}

static void test_precedence(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    setenv("SBEMU_AMQP_PORT", "1111", 1);
    setenv("SBEMU_HTTP_PORT", "2222", 1);
    setenv("SBEMU_SAS_KEY", "fromenv", 1);
    /* flag beats env; env beats default; the last flag wins. */
    assert_int_equal(PARSE(&o, err, "--amqp-port", "3333", "--sas-key=a", "--sas-key", "b"), 0);
    assert_int_equal(o.amqp_port, 3333);
    assert_int_equal(o.http_port, 2222);
    assert_string_equal(o.sas_key, "b");
    assert_int_equal(o.amqps_port, 5671);
    emu_options_free(&o);

    /* A good flag hides a bad env value: the env is never looked at. */
    setenv("SBEMU_AMQP_PORT", "junk", 1);
    assert_int_equal(PARSE(&o, err, "--amqp-port", "4444"), 0);
    assert_int_equal(o.amqp_port, 4444);
    emu_options_free(&o);
}

static void test_amqps_zero_disables(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--amqps-port", "0"), 0);
    assert_int_equal(o.amqps_port, 0);
    emu_options_free(&o);
}

static void test_bind_all(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--bind", "*"), 0);
    assert_null(o.bind);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--bind=::1"), 0);
    assert_string_equal(o.bind, "::1");
    emu_options_free(&o);
}

static void test_log_levels(void **state)
{
    (void)state;
    static const struct { const char *s; ent_log_level l; } cases[] = {
        { "error", ENT_LOG_ERROR }, { "warn", ENT_LOG_WARN }, { "info", ENT_LOG_INFO },
        { "debug", ENT_LOG_DEBUG }, { "Warning", ENT_LOG_WARN },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        emu_options o;
        char err[256];
        assert_int_equal(PARSE(&o, err, "--log-level", cases[i].s), 0);
        assert_int_equal(o.log_level, cases[i].l);
        emu_options_free(&o);
    }
}

static void test_size_limits(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--max-message-size", "100m"), 0);
    assert_int_equal(o.max_message_size, 100u * 1024 * 1024);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--max-message-size", "1024"), 0);
    assert_int_equal(o.max_message_size, 1024);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--handshake-timeout", "0"), 0);
    assert_int_equal(o.handshake_timeout_s, 0);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--handshake-timeout", "86400"), 0);
    assert_int_equal(o.handshake_timeout_s, 86400);
    emu_options_free(&o);
}

/* Expects -1 and an error line that contains each of the given fragments. */
static void expect_error(const char **args, const char *frag1, const char *frag2)
{
    emu_options o;
    char err[256];
    int argc = 0;
    while (args[argc])
        argc++;
    int rc = emu_options_parse(&o, argc, (char **)args, err, sizeof err);
    emu_options_free(&o);
    if (rc != -1)
        fail_msg("expected an error for %s", args[1] ? args[1] : "(env)");
    if (!strstr(err, frag1) || (frag2 && !strstr(err, frag2)))
        fail_msg("error \"%s\" lacks \"%s\" / \"%s\"", err, frag1, frag2 ? frag2 : "");
    assert_null(strchr(err, '\n'));
    assert_true(strncmp(err, "sbemu: ", 7) == 0);
}

#define EXPECT_ERROR(f1, f2, ...) expect_error((const char *[]){ "sbemu", __VA_ARGS__, NULL }, (f1), (f2))

static void test_handshake_timeout_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("--handshake-timeout", "seconds (0-86400)", "--handshake-timeout", "86401");
    EXPECT_ERROR("--handshake-timeout", "\"5s\"", "--handshake-timeout", "5s");
}

static void test_bad_values(void **state)
{
    (void)state;
    EXPECT_ERROR("--amqp-port: \"abc\" is not a port number (1-65535)", NULL, "--amqp-port", "abc");
    EXPECT_ERROR("--amqp-port", "\"0\"", "--amqp-port", "0");
    EXPECT_ERROR("--amqp-port", "\"65536\"", "--amqp-port=65536");
    EXPECT_ERROR("--http-port", "\"-1\"", "--http-port=-1");
    EXPECT_ERROR("--http-port", "\"80x\"", "--http-port", "80x");
    EXPECT_ERROR("--http-port", "\" 80\"", "--http-port", " 80");
    EXPECT_ERROR("--http-port", "\"99999999999999999999999\"", "--http-port", "99999999999999999999999");
    EXPECT_ERROR("--amqps-port", "or 0 to disable", "--amqps-port", "x");
    EXPECT_ERROR("--max-message-size", "not a size in bytes", "--max-message-size", "big");
    EXPECT_ERROR("--max-message-size", "\"10\"", "--max-message-size", "10");
    EXPECT_ERROR("--max-message-size", "\"101m\"", "--max-message-size", "101m");
    EXPECT_ERROR("--max-message-size", "\"1g\"", "--max-message-size", "1g");
    EXPECT_ERROR("--max-message-size", "\"\"", "--max-message-size=");
    EXPECT_ERROR("--log-level", "\"loud\" is not a log level", "--log-level", "loud");
    EXPECT_ERROR("--data-dir", "non-empty", "--data-dir=");
    EXPECT_ERROR("--postgres", "non-empty", "--postgres", "");
}

static void test_bad_flags(void **state)
{
    (void)state;
    EXPECT_ERROR("unknown option \"--nope\"", NULL, "--nope");
    EXPECT_ERROR("unknown option \"--nope\"", NULL, "--nope=1");
    EXPECT_ERROR("unexpected argument \"stray\"", NULL, "stray");
    EXPECT_ERROR("unexpected argument \"-x\"", NULL, "-x");
    EXPECT_ERROR("--amqp-port needs a value", NULL, "--amqp-port");
    EXPECT_ERROR("--config needs a value", NULL, "--config", "--postgres", "x");
    EXPECT_ERROR("--help takes no value", NULL, "--help=yes");
    EXPECT_ERROR("--tls-cert and --tls-key", NULL, "--tls-cert", "/c.pem");
    EXPECT_ERROR("--tls-cert and --tls-key", NULL, "--tls-key", "/k.pem");
}

static void test_bad_env_names_flag_and_var(void **state)
{
    (void)state;
    setenv("SBEMU_AMQP_PORT", "abc", 1);
    EXPECT_ERROR("--amqp-port (env SBEMU_AMQP_PORT): \"abc\" is not a port number", NULL, "--log-level", "info");
    unsetenv("SBEMU_AMQP_PORT");
    setenv("SBEMU_TLS_KEY", "/k.pem", 1);
    EXPECT_ERROR("--tls-cert and --tls-key", NULL, "--log-level", "info");
}

/* A flag is on when given alone, takes =true|false (yes/no, 1/0), and reads its env variable alike. */
static void test_metrics_token_flag(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_int_equal(o.metrics_token_required, 0);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--metrics-token-required", "--amqp-port", "6000"), 0);
    assert_int_equal(o.metrics_token_required, 1);
    assert_int_equal(o.amqp_port, 6000); /* the next flag is not taken as its value */
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--metrics-token-required=NO"), 0);
    assert_int_equal(o.metrics_token_required, 0);
    emu_options_free(&o);
    setenv("SBEMU_METRICS_TOKEN_REQUIRED", "1", 1);
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_int_equal(o.metrics_token_required, 1);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--metrics-token-required=false"), 0); /* the flag wins */
    assert_int_equal(o.metrics_token_required, 0);
    emu_options_free(&o);
    unsetenv("SBEMU_METRICS_TOKEN_REQUIRED");
    EXPECT_ERROR("--metrics-token-required", "\"maybe\" is not true or false", "--metrics-token-required=maybe");
    /* a value given apart is an argument of its own, refused as such */
    EXPECT_ERROR("unexpected argument \"true\"", NULL, "--metrics-token-required", "true");
}

/* --dashboard-read-only: off by default, on alone, =true|false, its env variable, refusals. */
static void test_dashboard_read_only(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_int_equal(o.dashboard_read_only, 0);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--dashboard-read-only", "--http-port", "6001"), 0);
    assert_int_equal(o.dashboard_read_only, 1);
    assert_int_equal(o.http_port, 6001);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--dashboard-read-only=false"), 0);
    assert_int_equal(o.dashboard_read_only, 0);
    emu_options_free(&o);
    setenv("SBEMU_DASHBOARD_READ_ONLY", "true", 1);
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_int_equal(o.dashboard_read_only, 1);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--dashboard-read-only=no"), 0); /* the flag wins */
    assert_int_equal(o.dashboard_read_only, 0);
    emu_options_free(&o);
    unsetenv("SBEMU_DASHBOARD_READ_ONLY");
    EXPECT_ERROR("--dashboard-read-only", "\"sometimes\" is not true or false", "--dashboard-read-only=sometimes");
}

static void test_story_flags(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--story", "off"), 0);
    assert_int_equal(o.story, 0);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--story=ON"), 0);
    assert_int_equal(o.story, 1);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--story", "false", "--amqp-port", "6000"), 0);
    assert_int_equal(o.story, 0);
    assert_int_equal(o.amqp_port, 6000);
    emu_options_free(&o);
    setenv("SBEMU_STORY", "off", 1);
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_int_equal(o.story, 0);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--story", "on"), 0); /* the flag wins */
    assert_int_equal(o.story, 1);
    emu_options_free(&o);
    unsetenv("SBEMU_STORY");
    EXPECT_ERROR("--story: \"maybe\" is not on or off", NULL, "--story", "maybe");
    EXPECT_ERROR("--story needs a value", NULL, "--story");

    assert_int_equal(PARSE(&o, err, "--story-retention", "90"), 0);
    assert_int_equal(o.story_retention_s, 90);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--story-retention=15m"), 0);
    assert_int_equal(o.story_retention_s, 900);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--story-retention", "2h"), 0);
    assert_int_equal(o.story_retention_s, 7200);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--story-retention", "30d"), 0);
    assert_int_equal(o.story_retention_s, 30 * 86400);
    emu_options_free(&o);
    setenv("SBEMU_STORY_RETENTION", "5s", 1);
    assert_int_equal(parse_none(&o, err, sizeof err), 0);
    assert_int_equal(o.story_retention_s, 5);
    emu_options_free(&o);
    unsetenv("SBEMU_STORY_RETENTION");
    EXPECT_ERROR("--story-retention: \"0\" is not a duration from 1 second to 30 days", NULL, "--story-retention",
                 "0");
    EXPECT_ERROR("--story-retention", "\"31d\"", "--story-retention", "31d");
    EXPECT_ERROR("--story-retention", "\"1w\"", "--story-retention", "1w");
    EXPECT_ERROR("--story-retention", "\"-5\"", "--story-retention=-5");
    EXPECT_ERROR("--story-retention", "\"99999999999999999999h\"", "--story-retention", "99999999999999999999h");
}

static void test_help(void **state)
{
    (void)state;
    emu_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--help"), 1);
    emu_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--amqp-port", "1", "-h"), 1);
    emu_options_free(&o);
    /* --help wins over bad values: they are never parsed. */
    assert_int_equal(PARSE(&o, err, "--amqp-port", "abc", "--help"), 1);
    emu_options_free(&o);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    emu_options_usage(f);
    fclose(f);
    static const char *const must[] = {
        "--config FILE", "--postgres URL", "--data-dir DIR", "--amqp-port PORT", "--amqps-port PORT",
        "--http-port PORT", "--tls-cert FILE", "--tls-key FILE", "--sas-key-name NAME", "--sas-key KEY",
        "--max-message-size BYTES", "--bind ADDR", "--log-level LEVEL", "--help",
        "SBEMU_CONFIG", "SBEMU_DATA_DIR", "SBEMU_AMQPS_PORT", "SBEMU_MAX_MESSAGE_SIZE", "SBEMU_LOG_LEVEL",
        "[default: 5672]", "[default: RootManageSharedAccessKey]",
    };
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        if (!strstr(text, must[i]))
            fail_msg("usage lacks \"%s\"", must[i]);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, clear_env),
        cmocka_unit_test_setup(test_every_flag_separate_value, clear_env),
        cmocka_unit_test_setup(test_every_flag_equals_form, clear_env),
        cmocka_unit_test_setup(test_env_vars, clear_env),
        cmocka_unit_test_setup(test_empty_env_is_unset, clear_env),
        cmocka_unit_test_setup(test_precedence, clear_env),
        cmocka_unit_test_setup(test_amqps_zero_disables, clear_env),
        cmocka_unit_test_setup(test_bind_all, clear_env),
        cmocka_unit_test_setup(test_log_levels, clear_env),
        cmocka_unit_test_setup(test_size_limits, clear_env),
        cmocka_unit_test_setup(test_handshake_timeout_errors, clear_env),
        cmocka_unit_test_setup(test_bad_values, clear_env),
        cmocka_unit_test_setup(test_bad_flags, clear_env),
        cmocka_unit_test_setup(test_bad_env_names_flag_and_var, clear_env),
        cmocka_unit_test_setup(test_metrics_token_flag, clear_env),
        cmocka_unit_test_setup(test_dashboard_read_only, clear_env),
        cmocka_unit_test_setup(test_story_flags, clear_env),
        cmocka_unit_test_setup(test_help, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
