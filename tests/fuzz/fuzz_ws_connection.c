/* libFuzzer target for AMQP over WebSockets as the bytes arrive: libwebsockets'
 * own HTTP and WebSocket parsers (a real lws context, in process), our
 * binding (amqp_bind_ws.c: the path check, then every binary message's
 * payload into the connection) and the connection behind it (amqp_conn.c,
 * Proton, the handlers) on the fake store of fuzz_connection.
 *
 * No network: the server's end of a socketpair is adopted by lws as an HTTP
 * connection (as a listener would hand it over); the harness writes the
 * client's bytes into the other end, reads and drops what the server
 * answers, and closes its end once everything is written.
 *
 * Input: [0] flags  FLAG_WHOLE_REQUEST  the input is the whole client stream,
 *                                       the HTTP upgrade request included;
 *                                       otherwise a canned upgrade to
 *                                       /$servicebus/websocket comes first
 *                   FLAG_PRELOADED      the entity cache filled before the client comes
 *                   bits 5-6            store errors: none, 1/8, 1/4 or 1/2
 *        (every seed puts a valid SAS token on $cbs first, signed with FUZZ_KEY)
 *        [1] the store's PRNG seed, then the client's bytes: WebSocket frames
 *        (masked, as a client must) whose payloads are an AMQP stream.
 * Seeds (corpus/ws_connection): fuzz_connection's streams cut into binary
 * messages of various sizes and fragmented (seedgen_ws.py).
 *
 * Checked beyond "no crash, no leak": the socket is closed and freed by lws,
 * and once the store has answered everything the connection is freed. */
#include <errno.h>
#include <libwebsockets.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "amqp_internal.h"
#include "fake_store.h"
#include "fuzz_check.h"

#define FUZZ_MAX_INPUT (256 * 1024)
#define FUZZ_HEADER 2
#define FLAG_WHOLE_REQUEST 0x01
#define FLAG_PRELOADED 0x10
/* Service rounds a run may take (each reads, writes or settles something;
 * a run that needs more is stuck, which is a finding). */
#define FUZZ_MAX_ROUNDS 100000
#define FUZZ_SETTLE_TURNS 64
#define FUZZ_KEY_NAME "RootManageSharedAccessKey"
#define FUZZ_KEY "fuzz-key"

static const char upgrade[] = "GET /$servicebus/websocket HTTP/1.1\r\n"
                              "Host: localhost\r\n"
                              "Upgrade: websocket\r\n"
                              "Connection: Upgrade\r\n"
                              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                              "Sec-WebSocket-Version: 13\r\n"
                              "Sec-WebSocket-Protocol: AMQPWSB10\r\n"
                              "\r\n";

static struct lws_context *context;
static struct lws_vhost *vhost;
static bool wsi_gone;

/* The wsi is freed whichever protocol it then has (HTTP before the upgrade). */
static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    if (reason == LWS_CALLBACK_WSI_DESTROY)
        wsi_gone = true;
    if (reason == LWS_CALLBACK_HTTP)
        return -1; /* plain HTTP is the management API's, not here */
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* amqp_bind_ws_protocol's callback, watched. */
static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    if (reason == LWS_CALLBACK_WSI_DESTROY)
        wsi_gone = true;
    return amqp_bind_ws_protocol.callback(wsi, reason, user, in, len);
}

static struct lws_protocols protocols[3];

static void init(void)
{
    if (context)
        return;
    lws_set_log_level(0, NULL);
    protocols[0] = (struct lws_protocols){"http", http_callback, 0, 0, 0, NULL, 0};
    protocols[1] = amqp_bind_ws_protocol;
    protocols[1].callback = ws_callback;
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
    info.port = CONTEXT_PORT_NO_LISTEN;
    context = lws_create_context(&info);
    CHECK(context);
    memset(&info, 0, sizeof info);
    info.vhost_name = "fuzz";
    info.port = CONTEXT_PORT_NO_LISTEN_SERVER; /* adopted sockets only */
    info.protocols = protocols;
    vhost = lws_create_vhost(context, &info);
    CHECK(vhost);
}

/* Drops what the server wrote; false once it closed its end. */
static bool read_server(int fd)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0)
            continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < FUZZ_HEADER || size > FUZZ_MAX_INPUT)
        return 0;
    init();
    uint8_t flags = data[0];
    static const unsigned error_shifts[] = {0, 3, 2, 1};
    store *st = fake_store_new();
    CHECK(st);
    fake_store_reset(st, data[1] + 1u, error_shifts[(flags >> 5) & 3]);
    broker_settings settings = {.sas_key_name = FUZZ_KEY_NAME, .sas_key = FUZZ_KEY, .max_message_size = 256 * 1024};
    broker *b = broker_new(st, &settings);
    CHECK(b);
    amqp_server *srv = amqp_server_new(b, &(amqp_settings){0});
    CHECK(srv);
    /* the server is its protocol's user (amqp_server_protocols); each run has
     * its own, so the vhost's entry (lws may hold a copy of ours) is set anew */
    ((struct lws_protocols *)lws_vhost_name_to_protocol(vhost, protocols[1].name))->user = srv;
    if (flags & FLAG_PRELOADED) {
        broker_refresh_entities(b);
        fake_store_turn(st);
    }

    int sv[2];
    CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv));
    wsi_gone = false;
    lws_sock_file_fd_type fd = {.sockfd = sv[0]};
    struct lws *wsi = lws_adopt_descriptor_vhost(vhost, LWS_ADOPT_SOCKET | LWS_ADOPT_HTTP, fd, NULL, NULL);
    CHECK(wsi); /* lws owns sv[0] from here and closes it */

    const uint8_t *parts[2] = {(const uint8_t *)upgrade, data + FUZZ_HEADER};
    size_t lens[2] = {sizeof upgrade - 1, size - FUZZ_HEADER};
    if (flags & FLAG_WHOLE_REQUEST)
        lens[0] = 0;
    int part = 0;
    size_t at = 0;
    bool shut = false, server_open = true;
    int rounds = 0;
    while (!wsi_gone && rounds++ < FUZZ_MAX_ROUNDS) {
        while (part < 2 && at == lens[part])
            part++, at = 0;
        if (part < 2) {
            ssize_t n = write(sv[1], parts[part] + at, lens[part] - at);
            if (n > 0)
                at += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                part = 2; /* the server closed: the rest is not read */
        } else if (!shut) {
            shutdown(sv[1], SHUT_WR); /* the client is done: lws sees EOF */
            shut = true;
        }
        lws_service(context, -1); /* -1: do not wait */
        if (server_open)
            server_open = read_server(sv[1]);
        fake_store_turn(st);
    }
    CHECK(wsi_gone); /* lws closed and freed the connection's socket */
    close(sv[1]);
    for (int i = 0; i < FUZZ_SETTLE_TURNS && fake_store_pending(st); i++)
        fake_store_turn(st);
    CHECK(fake_store_pending(st) == 0);
    CHECK(amqp_server_connection_count(srv) == 0);
    lws_service(context, -1); /* lws finishes anything it deferred for the closed wsi */
    amqp_server_free(srv);
    broker_free(b);
    fake_store_free(st);
    return 0;
}
