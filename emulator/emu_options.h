/* Command-line and environment options.
 *
 * One table in emu_options.c drives everything (Redis config.c style): each row
 * names the long flag, its type, its default and its help line; the environment
 * variable is derived from the flag (--amqp-port -> SBEMU_AMQP_PORT). Adding an
 * option means adding a field here and a row there; usage and env handling
 * follow by themselves.
 *
 * Precedence: flag > environment > default. The last occurrence of a flag wins.
 * Flags take "--flag value" or "--flag=value". An environment variable set to
 * the empty string counts as unset (container setups often export empty vars).
 *
 * Ownership: every string field is heap-allocated by emu_options_parse and freed
 * by emu_options_free. Call emu_options_free after any return of
 * emu_options_parse (it zeroes the struct first, so that is always safe). */
#ifndef EMU_OPTIONS_H
#define EMU_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "ent_log.h"

/* Service Bus Standard tier: 256 KiB per message. Premium allows up to 100 MiB,
 * which is the ceiling of --max-message-size. */
#define EMU_MAX_MESSAGE_SIZE_DEFAULT 262144
#define EMU_MAX_MESSAGE_SIZE_MIN 1024
#define EMU_MAX_MESSAGE_SIZE_MAX_MIB 100
#define EMU_MAX_MESSAGE_SIZE_MAX (EMU_MAX_MESSAGE_SIZE_MAX_MIB * 1024u * 1024u)

/* The longest time option (a day): --handshake-timeout. */
#define EMU_SECONDS_MAX 86400

typedef struct emu_options {
    char *config_file;       /* --config: the emulator's Config.json; NULL = none */
    char *postgres;          /* --postgres: PostgreSQL conninfo or postgres:// URL; NULL = embedded */
    int postgres_wait_s;     /* --postgres-wait: how long to retry the first connection */
    char *data_dir;          /* --data-dir: as given (relative paths stay relative) */
    int amqp_port;           /* --amqp-port: 1-65535 */
    int amqps_port;          /* --amqps-port: 0 = AMQP over TLS disabled */
    int http_port;           /* --http-port: HTTP, WebSocket, /health, ATOM management */
    char *tls_cert;          /* --tls-cert: PEM; NULL = generated under data_dir/tls */
    char *tls_key;           /* --tls-key: PEM; set exactly when tls_cert is set */
    char *sas_key_name;      /* --sas-key-name */
    char *sas_key;           /* --sas-key */
    size_t max_message_size; /* --max-message-size, bytes */
    int handshake_timeout_s; /* --handshake-timeout: 0 = never */
    char *bind;              /* --bind: address or interface; NULL = all interfaces (IPv4 and IPv6) */
    ent_log_level log_level; /* --log-level */
    int metrics_token_required; /* --metrics-token-required: GET /metrics asks for a SAS token (0/1) */
    int dashboard_read_only;    /* --dashboard-read-only: the dashboard's actions are refused (0/1) */
    int story;               /* --story on|off: each message's story is recorded (1) or not (0) */
    int story_retention_s;   /* --story-retention: how long its events are kept, emulator-clock seconds */
} emu_options;

/* Fills o from argv (argv[0] is skipped) and the environment.
 * Returns 0 when o is ready, 1 when --help (or -h) was given (print usage, exit 0),
 * -1 on a bad flag or value, with one line in err such as
 *   sbemu: --amqp-port: "abc" is not a port number (1-65535)
 * (no trailing newline; print it and exit 2). */
int emu_options_parse(emu_options *o, int argc, char **argv, char *err, size_t errlen);

/* The --help text: every option with its argument, default and env variable. */
void emu_options_usage(FILE *out);

void emu_options_free(emu_options *o);

#endif
