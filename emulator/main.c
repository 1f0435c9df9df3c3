/* sbemu: start-up and shutdown, in the order they must happen.
 *
 *   options -> logging -> PostgreSQL (embedded or --postgres) -> migrations ->
 *   Config.json -> TLS certificate -> store -> AMQP server -> listeners -> loop
 *
 * and on SIGINT/SIGTERM: close client connections, let in-flight commits
 * finish, close the store, stop the embedded PostgreSQL, exit 0. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amqp_server.h"
#if __has_include("cmd_filter.h")
#include "cmd_filter.h"
#define HAVE_CMD_FILTER 1
#endif
#include "emu_config_json.h"
#include "emu_default_config.h"
#include "emu_fs.h"
#include "emu_log.h"
#include "emu_loop.h"
#include "emu_options.h"
#include "emu_pgembed.h"
#include "emu_ready.h"
#include "emu_recover.h"
#include "emu_tlscert.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "store_story.h"
#include "store.h"
#include "store_config.h"
#include "store_setup.h"

/* How long shutdown waits for in-flight commits and goodbyes. */
#define EMU_SHUTDOWN_GRACE_MS 3000
#define EMU_ERR_MAX 1024
#define EMU_CONNINFO_MAX 1024

static volatile int stop_requested;
static emu_loop loop;
static emu_recover recover;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
    emu_loop_wake(&loop);
}

/* Migrations and Config.json run once, on a plain blocking connection
 * (sql/store_setup.h), waiting up to wait_s for the server. */
static int prepare_database(const char *conninfo, int wait_s, const char *config_file, char *err, size_t errlen)
{
    struct pg_conn *conn = store_setup_connect(conninfo, wait_s, &stop_requested, err, errlen);
    if (!conn)
        return -1;
    /* the namespace clock: start where the other emulators on this database are */
    int64_t clock_offset_ms = ent_clock_offset_ms();
    int rc = store_setup_migrate(conn, &clock_offset_ms, err, errlen);
    if (!rc)
        ent_clock_advance(clock_offset_ms - ent_clock_offset_ms());
    const char *path;
    struct stat sb;
    bool official = stat(EMU_OFFICIAL_CONFIG_PATH, &sb) == 0 && S_ISREG(sb.st_mode);
    /* docker makes a directory where a bind mount's source file is missing */
    if (!config_file && !official && stat(EMU_OFFICIAL_CONFIG_PATH, &sb) == 0)
        LOG_WARN("%s is not a file (a bind mount of a missing file?): the default entities are created instead",
                 EMU_OFFICIAL_CONFIG_PATH);
    switch (rc ? EMU_CONFIG_FROM_NOTHING : emu_config_choose(config_file, official, &path)) {
    case EMU_CONFIG_FROM_FILE: rc = emu_config_load_and_apply(conn, path, err, errlen); break;
    case EMU_CONFIG_FROM_DEFAULTS:
        rc = emu_config_parse_and_apply(conn, emu_default_config_json(), "the official default entities", err,
                                        errlen);
        break;
    case EMU_CONFIG_FROM_NOTHING:
        if (!rc) { /* --config none declares nothing: a reset then leaves no entity */
            ent_config none;
            ent_config_init(&none);
            rc = store_config_apply(conn, &none, err, errlen);
            ent_config_free(&none);
        }
        break;
    }
    store_setup_close(conn);
    return rc;
}

static bool shutdown_done(void *arg)
{
    amqp_server *srv = arg;
    return store_idle(loop.store) && amqp_server_connection_count(srv) == 0;
}

static void print_connection_string(const emu_options *o, const char *cert)
{
    char port[16] = "";
    if (o->amqp_port != 5672)
        snprintf(port, sizeof port, ":%d", o->amqp_port);
    printf("sbemu is ready.\n"
           "  Connection string: Endpoint=sb://localhost%s;SharedAccessKeyName=%s;SharedAccessKey=%s;"
           "UseDevelopmentEmulator=true;\n"
           "  AMQP: %d   AMQPS: %d   HTTP (/health): %d\n",
           port, o->sas_key_name, o->sas_key, o->amqp_port, o->amqps_port, o->http_port);
    if (cert)
        printf("  TLS certificate (trust it as a CA): %s\n", cert);
    fflush(stdout);
}

/* The lines a user (or Testcontainers) waits for: printed once every
 * listener answers (emu_ready.c). */
static emu_ready ready;
static struct ready_args {
    const emu_options *o;
    const char *cert;
} ready_args;

static void on_ready(void *arg)
{
    struct ready_args *a = arg;
    print_connection_string(a->o, a->cert[0] ? a->cert : NULL);
    LOG_INFO("Emulator Service is Successfully Up!");
}

static int run(emu_options *o)
{
    char err[EMU_ERR_MAX] = "", conninfo[EMU_CONNINFO_MAX];
    char cert[4096] = "", key[4096] = "";
    emu_pgembed pg;
    memset(&pg, 0, sizeof pg);
    int rc = 1;
    store *st = NULL;
    broker *b = NULL;
    amqp_server *srv = NULL;

    if (emu_mkdir_p(o->data_dir, 0755)) {
        LOG_ERROR("cannot create --data-dir '%s': %s", o->data_dir, strerror(errno));
        return 1;
    }
    if (o->postgres) {
        snprintf(conninfo, sizeof conninfo, "%s", o->postgres);
    } else if (emu_pgembed_start(&pg, o->data_dir, conninfo, sizeof conninfo, err, sizeof err)) {
        LOG_ERROR("embedded PostgreSQL: %s", err);
        return 1;
    }
    if (prepare_database(conninfo, o->postgres ? o->postgres_wait_s : 0, o->config_file, err, sizeof err)) {
        LOG_ERROR("%s", err);
        goto out;
    }
    /* TLS is offered on the AMQP port as well as the TLS port (the SDKs' admin
     * clients dial https to the Endpoint's port), so there is always a certificate */
    if (o->tls_cert) {
        snprintf(cert, sizeof cert, "%s", o->tls_cert);
        snprintf(key, sizeof key, "%s", o->tls_key);
    } else if (emu_tlscert_ensure(o->data_dir, cert, sizeof cert, key, sizeof key, err, sizeof err)) {
        LOG_ERROR("TLS certificate: %s", err);
        goto out;
    }
    emu_recover_init(&recover, conninfo, o->postgres ? NULL : &pg);
    loop.recover = &recover;
    store_hooks hooks = emu_loop_store_hooks(&loop);
    store_story_configure(o->story); /* before the first op: which statements the store runs */
    if (!(st = store_open(conninfo, &hooks, err, sizeof err))) {
        LOG_ERROR("%s", err);
        goto out;
    }
    broker_settings shared = {o->sas_key_name, o->sas_key, (uint32_t)o->max_message_size, emu_config_namespace_name(),
                              (int64_t)o->story_retention_s * 1000};
    amqp_settings wire = {o->handshake_timeout_s};
    if (!(b = broker_new(st, &shared)) || !(srv = amqp_server_new(b, &wire))) {
        LOG_ERROR("out of memory");
        goto out;
    }
    if (emu_loop_start(&loop, o, cert[0] ? cert : NULL, key[0] ? key : NULL, b, srv, st, err, sizeof err)) {
        LOG_ERROR("%s", err);
        goto out;
    }
    ready_args = (struct ready_args){o, cert};
    emu_ready_start(&ready, loop.ctx, o->bind, o->amqp_port, o->amqps_port, o->http_port, on_ready, &ready_args);
    emu_loop_run(&loop, &stop_requested);

    LOG_INFO("stopping: closing connections and finishing in-flight commits");
    amqp_server_close_all(srv);
    emu_loop_drain(&loop, EMU_SHUTDOWN_GRACE_MS, shutdown_done, srv);
    rc = 0;
out:
    emu_ready_stop(&ready);
    amqp_server_detach_loop(srv);
    broker_detach_loop(b);
    emu_loop_destroy(&loop);
    emu_recover_stop(&recover); /* before the cluster stops: it may be starting it */
    /* the store first: what it fails calls back into the server's links and
     * the broker's look-ups and pumps; then the server, which unhooks itself
     * from the broker */
    store_close(st);
    amqp_server_free(srv);
    broker_free(b);
    if (!o->postgres)
        emu_pgembed_stop(&pg);
    return rc;
}

int main(int argc, char **argv)
{
#ifdef HAVE_CMD_FILTER
    if (argc > 1 && !strcmp(argv[1], "filter"))
        return emu_cmd_filter(argc - 1, argv + 1);
#endif
    emu_options o;
    char err[EMU_ERR_MAX];
    int rc = emu_options_parse(&o, argc, argv, err, sizeof err);
    if (rc == 1) {
        emu_options_usage(stdout);
        emu_options_free(&o);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "%s\n", err);
        emu_options_free(&o);
        return 2;
    }
    emu_log_init(o.log_level);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    rc = run(&o);
    emu_options_free(&o);
    return rc;
}
