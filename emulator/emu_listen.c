/* The listening ports, and the sniffing that lets one port speak several
 * protocols. lws does the sniffing for us, by vhost options:
 *
 *   AMQP port   TLS or plain (ALLOW_NON_SSL_ON_SSL_PORT: a first byte of 0x16
 *               is a ClientHello), then HTTP or AMQP (FALLBACK_TO_APPLY_
 *               LISTEN_ACCEPT_CONFIG: a first line that is not HTTP hands the
 *               socket, bytes read included, to the raw AMQP binding). HTTP
 *               here is the ATOM API and WebSocket upgrades.
 *   TLS port    TLS only, then HTTP or AMQP, as above.
 *   HTTP port   plain HTTP: /health, the ATOM API, WebSocket upgrades.
 *
 * Why one port must do all three: the admin clients of the SDKs dial the
 * Endpoint's host:port (JS 7.9.5 and Python with https, JS 7.10 with http),
 * and the JS SDK dials wss to it too, whatever UseDevelopmentEmulator says.
 * Each protocol carries its front door (the AMQP server, the HTTP plane) as
 * its user. */
#include <libwebsockets.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "emu_listen.h"

/* lws keeps pointers to these lists for the vhosts' lifetime: static. The
 * first protocol of an HTTP vhost serves plain HTTP requests. */
static struct lws_protocols amqp_port_protocols[5];
static struct lws_protocols http_port_protocols[4];

static void fill_protocols(amqp_server *srv, http_plane *hp)
{
    http_api_protocol(hp, &amqp_port_protocols[0]);
    amqp_server_protocols(srv, &amqp_port_protocols[3], &amqp_port_protocols[1], &amqp_port_protocols[2]);
    http_port_protocols[0] = amqp_port_protocols[0];
    http_port_protocols[1] = amqp_port_protocols[1];
    http_port_protocols[2] = amqp_port_protocols[2];
}

static struct lws_vhost *listen_on(struct lws_context *ctx, const emu_listen_config *cfg,
                                   const char *name, int port, bool amqp, bool tls, bool plain)
{
    struct lws_context_creation_info vi;
    memset(&vi, 0, sizeof vi);
    vi.vhost_name = name;
    vi.port = port;
    vi.iface = cfg->bind;
    /* until lws knows what a socket speaks, its own timeouts guard it: make
     * them the AMQP handshake's, so a client that sends one byte is closed alike */
    vi.timeout_secs = (unsigned int)(cfg->handshake_timeout_s > 0 ? cfg->handshake_timeout_s : 0);
    vi.timeout_secs_ah_idle = vi.timeout_secs; /* a first line that never ends */
    vi.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    vi.alpn = "http/1.1"; /* no HTTP/2: the SDKs' admin clients speak 1.1 */
    if (!amqp) {
        vi.protocols = http_port_protocols;
        return lws_create_vhost(ctx, &vi);
    }
    vi.protocols = amqp_port_protocols;
    vi.options |= LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG;
    vi.listen_accept_role = "raw-skt";
    vi.listen_accept_protocol = AMQP_RAW_PROTOCOL_NAME;
    if (tls) {
        /* without DO_SSL_GLOBAL_INIT on the vhost too, lws 4.1 silently serves it without TLS */
        vi.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        vi.ssl_cert_filepath = cfg->tls_cert;
        vi.ssl_private_key_filepath = cfg->tls_key;
        /* lws's fallback only works on a TLS listener that lets plain bytes
         * through; a plain HTTP request is then refused unless allowed */
        vi.options |= LWS_SERVER_OPTION_ALLOW_NON_SSL_ON_SSL_PORT;
        if (plain)
            vi.options |= LWS_SERVER_OPTION_ALLOW_HTTP_ON_HTTPS_LISTENER;
    }
    return lws_create_vhost(ctx, &vi);
}

int emu_listen_start(struct lws_context *ctx, amqp_server *srv, http_plane *hp, const emu_listen_config *cfg,
                     char *err, size_t errlen)
{
    fill_protocols(srv, hp);
    bool tls = cfg->tls_cert && cfg->tls_key;
    if (!listen_on(ctx, cfg, "amqp", cfg->amqp_port, true, tls, true)) {
        snprintf(err, errlen, "cannot listen for AMQP on port %d (--amqp-port): is it in use?", cfg->amqp_port);
        return -1;
    }
    if (cfg->amqps_port && (!tls || !listen_on(ctx, cfg, "amqps", cfg->amqps_port, true, true, false))) {
        snprintf(err, errlen, "cannot listen for AMQP over TLS on port %d (--amqps-port): in use, or bad certificate?",
                 cfg->amqps_port);
        return -1;
    }
    if (!listen_on(ctx, cfg, "http", cfg->http_port, false, false, true)) {
        snprintf(err, errlen, "cannot listen for HTTP on port %d (--http-port): is it in use?", cfg->http_port);
        return -1;
    }
    return 0;
}
