/* Options: one table, flags > environment > defaults (see emu_options.h). */
#include "emu_options.h"

#include "emu_default_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "emu_log.h"
#include "ent_alloc.h"
#include "ent_status.h"
#include "ent_story.h"

typedef enum opt_type {
    OPT_STRING,     /* non-empty string; absent default = NULL */
    OPT_PORT,       /* 1-65535 */
    OPT_PORT_OFF,   /* 0-65535, 0 = disabled */
    OPT_SIZE,       /* bytes, with k/m suffixes, EMU_MAX_MESSAGE_SIZE_MIN..MAX */
    OPT_SECONDS,    /* 0..EMU_SECONDS_MAX, 0 = never */
    OPT_LOG_LEVEL,  /* error|warn|info|debug */
    OPT_BIND,       /* "*" or "" = all interfaces (NULL), else an address or interface */
    OPT_FLAG,       /* on when given alone; --flag=true|false (yes|no, 1|0) and the env likewise */
    OPT_ON_OFF,     /* a value: on|off (true|false, yes|no, 1|0 too) */
    OPT_RETENTION,  /* a duration: seconds, or a number with s, m, h or d; ENT_STORY_RETENTION_MIN_S..MAX_S */
    OPT_HELP,       /* no value, no env */
} opt_type;

typedef struct opt_def {
    const char *name;    /* the flag without "--"; the env var is derived from it */
    opt_type type;
    size_t offset;       /* of the field in emu_options */
    const char *metavar; /* shown in usage */
    const char *def;     /* parsed like any value; NULL = unset */
    const char *help;
    const char *alt_env; /* also read from this variable (Microsoft's image's name for it), after SBEMU_* */
} opt_def;

#define F(field) offsetof(emu_options, field)
/* A limit's number as the text default of its option, so that it is written once. */
#define TEXT_OF_(x) #x
#define TEXT_OF(x) TEXT_OF_(x)

static const opt_def opt_table[] = {
    { "config", OPT_STRING, F(config_file), "FILE", NULL,
      "the emulator's Config.json: entities to create at start (see below)", NULL },
    { "postgres", OPT_STRING, F(postgres), "URL", NULL,
      "PostgreSQL: conninfo or postgres:// URL (default: embedded cluster in DATA-DIR/pg)", NULL },
    { "postgres-wait", OPT_SECONDS, F(postgres_wait_s), "SECONDS", "60",
      "with --postgres, keep trying to connect at start this long (a database starting beside it)", NULL },
    { "data-dir", OPT_STRING, F(data_dir), "DIR", "./.sbemu",
      "state directory: embedded PostgreSQL, generated TLS certificate", NULL },
    { "amqp-port", OPT_PORT, F(amqp_port), "PORT", "5672",
      "AMQP 1.0 without TLS", NULL },
    { "amqps-port", OPT_PORT_OFF, F(amqps_port), "PORT", "5671",
      "AMQP 1.0 over TLS; 0 disables it", NULL },
    { "http-port", OPT_PORT, F(http_port), "PORT", "5300",
      "HTTP: /health, ATOM management API, AMQP over WebSocket", "EMULATOR_HTTP_PORT" },
    { "tls-cert", OPT_STRING, F(tls_cert), "FILE", NULL,
      "TLS certificate chain, PEM (default: self-signed, made in DATA-DIR/tls)", NULL },
    { "tls-key", OPT_STRING, F(tls_key), "FILE", NULL,
      "TLS private key, PEM; give it together with --tls-cert", NULL },
    { "sas-key-name", OPT_STRING, F(sas_key_name), "NAME", "RootManageSharedAccessKey",
      "shared access key name accepted in tokens", NULL },
    { "sas-key", OPT_STRING, F(sas_key), "KEY", "SAS_KEY_VALUE",
      "shared access key that signs tokens", NULL },
    { "max-message-size", OPT_SIZE, F(max_message_size), "BYTES", TEXT_OF(EMU_MAX_MESSAGE_SIZE_DEFAULT),
      "largest accepted message (k and m suffixes allowed; at most " TEXT_OF(EMU_MAX_MESSAGE_SIZE_MAX_MIB) "m)", NULL },
    { "handshake-timeout", OPT_SECONDS, F(handshake_timeout_s), "SECONDS", "30",
      "close a connection that has not sent its AMQP open by then; 0 = never", NULL },
    { "bind", OPT_BIND, F(bind), "ADDR", "*",
      "listen address or interface; * = all interfaces, IPv4 and IPv6", NULL },
    { "log-level", OPT_LOG_LEVEL, F(log_level), "LEVEL", "info",
      "error, warn, info or debug", NULL },
    { "metrics-token-required", OPT_FLAG, F(metrics_token_required), NULL, "false",
      "GET /metrics asks for a SAS token, as the management API does (default: none, as /health)", NULL },
    { "dashboard-read-only", OPT_FLAG, F(dashboard_read_only), NULL, "false",
      "the dashboard (http://HOST:HTTP-PORT/) only shows: sending, resubmitting, deleting, purging, status changes "
      "and clock moves from it are refused (403)", NULL },
    { "story", OPT_ON_OFF, F(story), "on|off", "on",
      "record each message's story (GET /$sbemu/story); off records nothing and costs nothing", NULL },
    { "story-retention", OPT_RETENTION, F(story_retention_s), "DURATION", TEXT_OF(ENT_STORY_RETENTION_DEFAULT_S),
      "keep story events this long on the emulator's clock: seconds, or with s, m, h or d (at most 30d)", NULL },
    { "help", OPT_HELP, 0, NULL, NULL, "print this help and exit", NULL },
};

#undef F
#undef TEXT_OF
#undef TEXT_OF_

#define OPT_COUNT (sizeof opt_table / sizeof opt_table[0])
#define ENV_PREFIX "SBEMU_"

static void env_name(const opt_def *d, char *buf, size_t len)
{
    size_t n = snprintf(buf, len, ENV_PREFIX "%s", d->name);
    for (size_t i = strlen(ENV_PREFIX); i < n && i < len; i++)
        buf[i] = buf[i] == '-' ? '_' : (char)toupper((unsigned char)buf[i]);
}

static const opt_def *find_opt(const char *name, size_t len)
{
    for (size_t i = 0; i < OPT_COUNT; i++)
        if (strlen(opt_table[i].name) == len && strncmp(opt_table[i].name, name, len) == 0)
            return &opt_table[i];
    return NULL;
}

/* Strict unsigned decimal: digits only, no sign, no spaces, no overflow. Sets
 * *end to the first non-digit. */
static int parse_digits(const char *s, unsigned long long *out, const char **end)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno == ERANGE)
        return -1;
    *out = v;
    *end = e;
    return 0;
}

static int parse_port(const char *s, int min, int *out)
{
    unsigned long long v;
    const char *end;
    if (parse_digits(s, &v, &end) < 0 || *end || v < (unsigned long long)min || v > 65535)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_size(const char *s, size_t *out)
{
    unsigned long long v, mul = 1;
    const char *end;
    if (parse_digits(s, &v, &end) < 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        mul = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1024 * 1024, end++;
    if (*end || v > UINT64_MAX / mul)
        return -1;
    v *= mul;
    if (v < EMU_MAX_MESSAGE_SIZE_MIN || v > EMU_MAX_MESSAGE_SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* "90", "90s", "15m", "2h", "7d" into seconds, within the story's bounds. */
static int parse_retention(const char *s, int *out)
{
    unsigned long long v, mul = 1;
    const char *end;
    if (parse_digits(s, &v, &end) < 0)
        return -1;
    switch (*end) {
    case 's': mul = 1, end++; break;
    case 'm': mul = 60, end++; break;
    case 'h': mul = 3600, end++; break;
    case 'd': mul = 86400, end++; break;
    default: break;
    }
    if (*end || v > (unsigned long long)ENT_STORY_RETENTION_MAX_S || v * mul < ENT_STORY_RETENTION_MIN_S ||
        v * mul > ENT_STORY_RETENTION_MAX_S)
        return -1;
    *out = (int)(v * mul);
    return 0;
}

/* Parses one value into its field. `from` says where it came from, for errors:
 * "--amqp-port" or "--amqp-port (env SBEMU_AMQP_PORT)". */
static int apply(emu_options *o, const opt_def *d, const char *value, const char *from,
                 char *err, size_t errlen)
{
    void *field = (char *)o + d->offset;
    char **sp = field;

    switch (d->type) {
    case OPT_STRING:
        if (!*value)
            return ent_fail(err, errlen, "sbemu: %s: needs a non-empty value", from);
        ent_free(*sp);
        if (!(*sp = ent_strdup(value)))
            return ent_fail(err, errlen, "sbemu: %s: out of memory", from);
        return 0;
    case OPT_BIND:
        ent_free(*sp);
        *sp = NULL;
        if (!*value || strcmp(value, "*") == 0)
            return 0;
        if (!(*sp = ent_strdup(value)))
            return ent_fail(err, errlen, "sbemu: %s: out of memory", from);
        return 0;
    case OPT_PORT:
        if (parse_port(value, 1, field) < 0)
            return ent_fail(err, errlen, "sbemu: %s: \"%s\" is not a port number (1-65535)", from, value);
        return 0;
    case OPT_PORT_OFF:
        if (parse_port(value, 0, field) < 0)
            return ent_fail(err, errlen, "sbemu: %s: \"%s\" is not a port number (1-65535, or 0 to disable)",
                        from, value);
        return 0;
    case OPT_SECONDS: {
        unsigned long long v;
        const char *end;
        if (parse_digits(value, &v, &end) < 0 || *end || v > EMU_SECONDS_MAX)
            return ent_fail(err, errlen, "sbemu: %s: \"%s\" is not a number of seconds (0-%u)", from, value,
                        (unsigned)EMU_SECONDS_MAX);
        *(int *)field = (int)v;
        return 0;
    }
    case OPT_SIZE:
        if (parse_size(value, field) < 0)
            return ent_fail(err, errlen,
                        "sbemu: %s: \"%s\" is not a size in bytes (%u-%u; k and m suffixes allowed)",
                        from, value, (unsigned)EMU_MAX_MESSAGE_SIZE_MIN, (unsigned)EMU_MAX_MESSAGE_SIZE_MAX);
        return 0;
    case OPT_LOG_LEVEL:
        if (emu_log_parse_level(value, field) < 0)
            return ent_fail(err, errlen, "sbemu: %s: \"%s\" is not a log level (error, warn, info, debug)",
                        from, value);
        return 0;
    case OPT_ON_OFF:
        if (!strcasecmp(value, "on") || !strcasecmp(value, "true") || !strcasecmp(value, "yes") || !strcmp(value, "1"))
            *(int *)field = 1;
        else if (!strcasecmp(value, "off") || !strcasecmp(value, "false") || !strcasecmp(value, "no") ||
                 !strcmp(value, "0"))
            *(int *)field = 0;
        else
            return ent_fail(err, errlen, "sbemu: %s: \"%s\" is not on or off", from, value);
        return 0;
    case OPT_RETENTION:
        if (parse_retention(value, field) < 0)
            return ent_fail(err, errlen,
                            "sbemu: %s: \"%s\" is not a duration from %d second to 30 days (seconds, or a number"
                            " with s, m, h or d)",
                            from, value, ENT_STORY_RETENTION_MIN_S);
        return 0;
    case OPT_FLAG:
        if (!strcasecmp(value, "true") || !strcasecmp(value, "yes") || !strcmp(value, "1"))
            *(int *)field = 1;
        else if (!strcasecmp(value, "false") || !strcasecmp(value, "no") || !strcmp(value, "0"))
            *(int *)field = 0;
        else
            return ent_fail(err, errlen, "sbemu: %s: \"%s\" is not true or false (yes/no, 1/0)", from, value);
        return 0;
    case OPT_HELP:
        break;
    }
    return 0;
}

int emu_options_parse(emu_options *o, int argc, char **argv, char *err, size_t errlen)
{
    const char *given[OPT_COUNT] = { 0 }; /* flag values, pointing into argv */
    int help = 0;

    memset(o, 0, sizeof *o);
    if (err && errlen)
        err[0] = '\0';

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0) {
            help = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
            return ent_fail(err, errlen, "sbemu: unexpected argument \"%s\" (try --help)", a);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const opt_def *d = find_opt(name, nlen);
        if (!d)
            return ent_fail(err, errlen, "sbemu: unknown option \"--%.*s\" (try --help)", (int)nlen, name);
        if (d->type == OPT_HELP) {
            if (eq)
                return ent_fail(err, errlen, "sbemu: --help takes no value");
            help = 1;
            continue;
        }
        const char *value;
        if (eq) {
            value = eq + 1;
        } else if (d->type == OPT_FLAG) {
            value = "true"; /* a flag alone turns it on; it takes no separate value */
        } else {
            /* "--config --postgres x" is a missing value, not a file named
             * "--postgres"; a value that starts with "--" needs --flag=value. */
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
                return ent_fail(err, errlen, "sbemu: --%s needs a value (%s)", d->name, d->metavar);
            value = argv[++i];
        }
        given[d - opt_table] = value;
    }
    if (help)
        return 1;

    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_def *d = &opt_table[i];
        if (d->type == OPT_HELP)
            continue;
        char env[64], from[128];
        env_name(d, env, sizeof env);
        const char *value = given[i];
        if (value) {
            snprintf(from, sizeof from, "--%s", d->name);
        } else {
            const char *ev = getenv(env);
            if ((!ev || !*ev) && d->alt_env && (ev = getenv(d->alt_env)) && *ev)
                snprintf(env, sizeof env, "%s", d->alt_env);
            if (ev && *ev) {
                value = ev;
                snprintf(from, sizeof from, "--%s (env %s)", d->name, env);
            } else {
                value = d->def;
                snprintf(from, sizeof from, "--%s (default)", d->name);
            }
        }
        if (value && apply(o, d, value, from, err, errlen) < 0)
            return -1;
    }

    if (!o->tls_cert != !o->tls_key)
        return ent_fail(err, errlen, "sbemu: --tls-cert and --tls-key go together: give both or neither");
    return 0;
}

void emu_options_usage(FILE *out)
{
    fprintf(out,
            "Usage: sbemu [OPTION]...\n"
            "An Azure Service Bus emulator: AMQP 1.0 with every entity and message in PostgreSQL.\n"
            "\n"
            "Each option can also be set by an environment variable (shown below);\n"
            "a flag wins over the environment, which wins over the default.\n"
            "Flags take \"--flag VALUE\" or \"--flag=VALUE\".\n"
            "\n");
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_def *d = &opt_table[i];
        char lhs[64], env[64];
        if (d->metavar)
            snprintf(lhs, sizeof lhs, "--%s %s", d->name, d->metavar);
        else if (d->type == OPT_FLAG)
            snprintf(lhs, sizeof lhs, "--%s", d->name);
        else
            snprintf(lhs, sizeof lhs, "--%s, -h", d->name);
        fprintf(out, "  %-26s %s\n", lhs, d->help);
        if (d->type == OPT_HELP)
            continue;
        env_name(d, env, sizeof env);
        if (d->alt_env) /* appended: "env SBEMU_HTTP_PORT or EMULATOR_HTTP_PORT" */
            snprintf(env + strlen(env), sizeof env - strlen(env), " or %s", d->alt_env);
        if (d->def)
            fprintf(out, "  %-26s [default: %s]  env %s\n", "", d->def, env);
        else
            fprintf(out, "  %-26s env %s\n", "", env);
    }
    fprintf(out,
            "\n"
            "Without --config, sbemu reads " EMU_OFFICIAL_CONFIG_PATH " when it exists (where\n"
            "Microsoft's emulator image reads it), else creates that image's default entities\n"
            "(queue.1; topic.1 with subscription.1 to .4). --config " EMU_CONFIG_NONE " creates none.\n"
            "ACCEPT_EULA, SQL_SERVER, MSSQL_SA_PASSWORD and SQL_WAIT_INTERVAL (the image's) are ignored.\n");
}

void emu_options_free(emu_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_def *d = &opt_table[i];
        if (d->type == OPT_STRING || d->type == OPT_BIND) {
            char **sp = (char **)((char *)o + d->offset);
            ent_free(*sp);
            *sp = NULL;
        }
    }
}
