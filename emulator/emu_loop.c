/* See emu_loop.h. */
#include "emu_loop.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu_config_json.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_namespace.h"
#include "store_faults.h"

/* Bytes lws reads from a socket at a time (its one service buffer): its
 * default of 4 KiB took sixteen reads and polls for each 64 KiB message sent. */
#define EMU_READ_BUFFER (64 * 1024)

/* The group-commit flush runs on the next loop turn, so that everything that
 * arrived in this turn joins the same transaction. */
static lws_sorted_usec_list_t flush_sul;
static emu_loop *flush_loop;

static void flush_now(lws_sorted_usec_list_t *sul)
{
    (void)sul;
    flush_loop->flush_scheduled = false;
    store_flush(flush_loop->store);
}

static void hook_want_flush(void *ud)
{
    emu_loop *L = ud;
    if (L->flush_scheduled || !L->ctx)
        return;
    L->flush_scheduled = true;
    flush_loop = L;
    lws_sul_schedule(L->ctx, 0, &flush_sul, flush_now, 1);
}

/* lws clears POLLOUT on a raw file after its WRITEABLE callback returns, so a
 * request made from inside that callback (the store could not write everything)
 * would be lost and the rest of the query never sent: ask again on the next
 * loop turn instead. */
static lws_sorted_usec_list_t write_sul;

static void want_write_now(lws_sorted_usec_list_t *sul)
{
    (void)sul;
    if (flush_loop && flush_loop->pg_wsi)
        lws_callback_on_writable(flush_loop->pg_wsi);
}

static void hook_want_write(void *ud)
{
    emu_loop *L = ud;
    if (!L->pg_wsi || !L->ctx)
        return;
    if (!L->in_pg_writeable) {
        lws_callback_on_writable(L->pg_wsi);
        return;
    }
    flush_loop = L;
    lws_sul_schedule(L->ctx, 0, &write_sul, want_write_now, 1);
}

/* Commits (ours or another replica's) announced messages for these queues. */
static void hook_on_messages(void *ud, const int64_t *entity_ids, size_t n)
{
    emu_loop *L = ud;
    for (size_t i = 0; L->broker && i < n; i++)
        broker_wake(L->broker, entity_ids[i]);
}

/* Another emulator moved namespace ns's clock: follow it (it only moves forward). */
static void hook_on_clock(void *ud, int32_t ns, int64_t offset_ms)
{
    emu_loop *L = ud;
    if (offset_ms <= ent_clock_offset_ms_in(ns))
        return;
    ent_clock_set_offset_in(ns, offset_ms);
    if (L->broker) {
        broker_sweep_now(L->broker);
        broker_wake(L->broker, 0);
    }
}

/* Entities changed somewhere: links already attached look theirs up again.
 * The fault rules' table shares the channel (its name is the payload). */
static void hook_on_entities(void *ud, const char *table)
{
    emu_loop *L = ud;
    if (L->broker && table && !strcmp(table, STORE_FAULTS_TABLE))
        broker_faults_reload(L->broker, NULL, NULL);
    else if (L->broker)
        broker_refresh_entities(L->broker);
}

/* The namespace was reset or a snapshot restored (by any emulator): what
 * this one holds in memory follows (broker_replaced; once per generation). */
static void hook_on_reset(void *ud, int64_t generation, int64_t offset_ms, int32_t ns)
{
    emu_loop *L = ud;
    if (L->broker)
        broker_replaced(L->broker, generation, offset_ms, ns);
}

/* ---- losing PostgreSQL and finding it again ---- */

static lws_sorted_usec_list_t recover_sul;
static emu_loop *recover_loop;

static struct lws *adopt_socket(emu_loop *L, int pg_fd)
{
    struct lws_vhost *internal = lws_get_vhost_by_name(L->ctx, "internal");
    /* lws closes what it adopts; the connection keeps its own descriptor */
    int fd = pg_fd >= 0 ? dup(pg_fd) : -1;
    lws_sock_file_fd_type desc = {.filefd = fd};
    struct lws *wsi = internal && fd >= 0 ? lws_adopt_descriptor_vhost(internal, LWS_ADOPT_RAW_FILE_DESC, desc,
                                                                 "sbemu-pg", NULL)
                                    : NULL;
    if (!wsi && fd >= 0)
        close(fd);
    return wsi;
}

static void unwatch(struct lws **wsi)
{
    if (*wsi)
        lws_set_timeout(*wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
    *wsi = NULL;
}

/* The store's socket and its flusher's (a store without one has -1). */
static int adopt_pg_sockets(emu_loop *L, int pg_fd, int flush_fd)
{
    L->pg_wsi = adopt_socket(L, pg_fd);
    L->flush_wsi = flush_fd >= 0 ? adopt_socket(L, flush_fd) : NULL;
    if (L->pg_wsi && (flush_fd < 0 || L->flush_wsi))
        return 0;
    unwatch(&L->pg_wsi);
    unwatch(&L->flush_wsi);
    return -1;
}

static void recover_poll(lws_sorted_usec_list_t *sul)
{
    (void)sul;
    emu_loop *L = recover_loop;
    int64_t offset = 0;
    int attempts = 0;
    char why[EMU_RECOVER_WHY_MAX] = "no thread could be started to look for it";
    /* (begin is a no-op while the thread runs; it starts one again if none could be) */
    struct pg_conn *flusher = NULL;
    struct pg_conn *conn = emu_recover_begin(L->recover) == 0
                               ? emu_recover_take(L->recover, &flusher, &offset, &attempts, why, sizeof why)
                               : NULL;
    if (!conn) {
        /* the first failure seen, then once per EMU_LOOP_RECOVER_LOG_EVERY (a poll may see several at once) */
        if (attempts > 0 && (L->recover_logged == 0 || attempts / EMU_LOOP_RECOVER_LOG_EVERY >
                                                           L->recover_logged / EMU_LOOP_RECOVER_LOG_EVERY)) {
            LOG_WARN("PostgreSQL is still unavailable after %d attempts (%s); operations are answered "
                     "server-busy until it is back",
                     attempts, why);
            L->recover_logged = attempts;
        }
        lws_sul_schedule(L->ctx, 0, &recover_sul, recover_poll, EMU_RECOVER_POLL_MS * LWS_US_PER_MS);
        return;
    }
    /* watched before the store takes it: a store nobody watches would stall */
    if (adopt_pg_sockets(L, store_connection_socket(conn), store_connection_socket(flusher))) {
        LOG_ERROR("cannot watch the new PostgreSQL connection's socket; trying again");
        store_connection_free(conn);
        store_connection_free(flusher);
        lws_sul_schedule(L->ctx, 0, &recover_sul, recover_poll, EMU_RECOVER_POLL_MS * LWS_US_PER_MS);
        return;
    }
    store_resume(L->store, conn, flusher);
    /* a flusher the store could not take (out of memory) is closed: its
     * watched dup() would hold its connection open */
    if (store_flush_socket(L->store) < 0)
        unwatch(&L->flush_wsi);
    LOG_INFO("PostgreSQL is back after %.1f s (%d failed attempts); serving again",
             (double)(ent_clock_wall_ms() - L->lost_at_ms) / 1000.0, attempts);
    /* What was announced while we were away is lost: look again at
     * everything (entities, the clock, messages, deadlines). */
    hook_on_clock(L, ENT_NAMESPACE_DEFAULT_ID, offset); /* the others' come with the entities' refill */
    if (L->broker) {
        broker_refresh_entities(L->broker);
        broker_faults_reload(L->broker, NULL, NULL);
        broker_sweep_now(L->broker);
        broker_wake(L->broker, 0);
    }
}

/* The store closed its connection: stop watching the dead socket (at EOF it
 * is always readable) and start looking for PostgreSQL. */
static void hook_on_lost(void *ud)
{
    emu_loop *L = ud;
    unwatch(&L->pg_wsi);
    unwatch(&L->flush_wsi);
    if (!L->recover || !L->ctx)
        return;
    L->lost_at_ms = ent_clock_wall_ms();
    L->recover_logged = 0;
    recover_loop = L;
    lws_sul_schedule(L->ctx, 0, &recover_sul, recover_poll, 1);
}

store_hooks emu_loop_store_hooks(emu_loop *L)
{
    return (store_hooks){.want_write = hook_want_write,
                         .want_flush = hook_want_flush,
                         .on_messages = hook_on_messages,
                         .on_clock = hook_on_clock,
                         .on_entities = hook_on_entities,
                         .on_reset = hook_on_reset,
                         .on_lost = hook_on_lost,
                         .ud = L};
}

static emu_loop *loop_of(struct lws *wsi) { return lws_vhost_user(lws_get_vhost(wsi)); }

static int pg_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    (void)user;
    (void)in;
    (void)len;
    switch (reason) {
    case LWS_CALLBACK_RAW_RX_FILE:
        if (wsi == loop_of(wsi)->flush_wsi)
            store_on_flush_readable(loop_of(wsi)->store);
        else
            store_on_readable(loop_of(wsi)->store);
        break;
    case LWS_CALLBACK_RAW_WRITEABLE_FILE:
        loop_of(wsi)->in_pg_writeable = true;
        store_on_writable(loop_of(wsi)->store);
        loop_of(wsi)->in_pg_writeable = false;
        break;
    case LWS_CALLBACK_RAW_CLOSE_FILE:
        if (loop_of(wsi)->pg_wsi == wsi)
            loop_of(wsi)->pg_wsi = NULL;
        if (loop_of(wsi)->flush_wsi == wsi)
            loop_of(wsi)->flush_wsi = NULL;
        break;
    default:
        break;
    }
    return 0;
}

static void lws_log_to_ours(int level, const char *line)
{
    char buf[512];
    snprintf(buf, sizeof buf, "lws: %s", line);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = 0;
    ent_log(level == LLL_ERR ? ENT_LOG_ERROR : ENT_LOG_WARN, "%s", buf);
}

int emu_loop_start(emu_loop *L, const emu_options *o, const char *tls_cert, const char *tls_key, broker *b,
                   amqp_server *srv, store *st, char *err, size_t errlen)
{
    L->store = st;
    L->broker = b;
    L->http.broker = b;
    L->http.wire = amqp_server_figures(srv);
    L->http.figures.door = "http";
    L->http.namespace_name = emu_config_namespace_name();
    L->http.metrics_token_required = o->metrics_token_required;
    L->http.dashboard_read_only = o->dashboard_read_only;
    L->http.peers = amqp_server_peers(srv);
    L->pg_protocols[0] = (struct lws_protocols){"sbemu-pg", pg_callback, 0, 0, 0, NULL, 0};

    lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_to_ours);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.pt_serv_buf_size = EMU_READ_BUFFER;
    L->ctx = lws_create_context(&info);
    if (!L->ctx) {
        snprintf(err, errlen, "cannot create the libwebsockets context");
        return -1;
    }
    emu_listen_config lc = {o->bind, o->amqp_port, o->amqps_port, o->http_port, tls_cert, tls_key,
                            o->handshake_timeout_s};
    if (emu_listen_start(L->ctx, srv, &L->http, &lc, err, errlen))
        return -1;
    struct lws_context_creation_info vi;
    memset(&vi, 0, sizeof vi);
    vi.vhost_name = "internal";
    vi.port = CONTEXT_PORT_NO_LISTEN_SERVER;
    vi.protocols = L->pg_protocols;
    vi.user = L;
    if (!lws_create_vhost(L->ctx, &vi) || adopt_pg_sockets(L, store_socket(st), store_flush_socket(st))) {
        snprintf(err, errlen, "cannot watch the PostgreSQL socket");
        return -1;
    }
    broker_attach_loop(b, L->ctx);
    amqp_server_attach_loop(srv, L->ctx);
    L->http.all_listening = true;
    return 0;
}

void emu_loop_run(emu_loop *L, volatile int *stop)
{
    while (!*stop)
        if (lws_service(L->ctx, 0) < 0)
            break;
}

void emu_loop_drain(emu_loop *L, int ms, bool (*done)(void *), void *arg)
{
    int64_t until = ent_clock_wall_ms() + ms;
    while (!done(arg) && ent_clock_wall_ms() < until)
        lws_service(L->ctx, 0);
}

void emu_loop_wake(emu_loop *L)
{
    if (L->ctx)
        lws_cancel_service(L->ctx);
}

void emu_loop_destroy(emu_loop *L)
{
    if (L->ctx) {
        lws_sul_cancel(&flush_sul);
        lws_sul_cancel(&write_sul);
        lws_sul_cancel(&recover_sul);
        L->http.all_listening = false;
        lws_context_destroy(L->ctx);
        L->ctx = NULL;
    }
}
