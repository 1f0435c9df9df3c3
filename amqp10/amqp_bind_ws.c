/* The WebSocket binding: AMQP over WebSockets as the Service Bus SDKs speak it
 * (wss://host[:port]/$servicebus/websocket, subprotocol AMQPWSB10). Each binary
 * message carries a slice of the same byte stream a raw socket would, so the
 * connection neither knows nor cares where frames start: bytes in, bytes out.
 *
 * lws does the upgrade (on any port that serves HTTP, plain or after TLS) and
 * picks this protocol by the subprotocol the client asks for; we only check
 * the path. */
#include <string.h>

#include "amqp_internal.h"
#include "ent_log.h"

/* The path the SDKs dial; with or without a trailing slash. */
#define WS_PATH "/$servicebus/websocket"
/* Bytes lws hands us per RECEIVE callback: a few frames' worth at once. */
#define WS_RX_BUFFER (64 * 1024)

typedef struct ws_pss {
    amqp_conn *conn;
} ws_pss;

/* The request target's path. A target in absolute-form ("https://host/path",
 * RFC 9112 3.2.2, which servers must accept) is what the Java SDK sends:
 * qpid-proton-j-extensions writes "GET https://<host><path> HTTP/1.1". lws
 * hands it over with the slashes collapsed ("https:/host/path"). */
static const char *target_path(const char *uri)
{
    const char *colon = strchr(uri, ':');
    if (uri[0] == '/' || !colon || colon[1] != '/')
        return uri;
    const char *authority = colon + 1;
    while (*authority == '/')
        authority++;
    const char *path = strchr(authority, '/');
    return path ? path : "/";
}

static bool path_is_ours(struct lws *wsi, char *uri, size_t urilen)
{
    if (lws_hdr_copy(wsi, uri, (int)urilen, WSI_TOKEN_GET_URI) <= 0) {
        uri[0] = 0;
        return false;
    }
    const char *path = target_path(uri);
    size_t n = strlen(WS_PATH);
    return !strncmp(path, WS_PATH, n) && (path[n] == 0 || (path[n] == '/' && path[n + 1] == 0));
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    ws_pss *pss = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
        char uri[256];
        if (!path_is_ours(wsi, uri, sizeof uri)) {
            LOG_INFO("WebSocket upgrade to '%s' refused: AMQP over WebSockets is served at " WS_PATH " only", uri);
            return -1;
        }
        return 0;
    }
    case LWS_CALLBACK_ESTABLISHED:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_OPENED, wsi, LWS_WRITE_BINARY, NULL, 0);
    case LWS_CALLBACK_RECEIVE:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_BYTES, wsi, LWS_WRITE_BINARY, in, len);
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_WRITEABLE, wsi, LWS_WRITE_BINARY, NULL, 0);
    case LWS_CALLBACK_CLOSED:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_CLOSED, wsi, LWS_WRITE_BINARY, NULL, 0);
    default:
        return 0;
    }
}

const struct lws_protocols amqp_bind_ws_protocol = {
    AMQP_WS_PROTOCOL_NAME, ws_callback, sizeof(ws_pss), WS_RX_BUFFER, 0, NULL, AMQP_WRITE_CHUNK,
};

/* The same binding under the subprotocol "amqp": what the Go SDK's own example (and Event
 * Hubs' Go SDK) asks for with ClientOptions.NewWebSocketConn; Service Bus takes it too. */
const struct lws_protocols amqp_bind_ws_amqp_protocol = {
    AMQP_WS_PROTOCOL_NAME_AMQP, ws_callback, sizeof(ws_pss), WS_RX_BUFFER, 0, NULL, AMQP_WRITE_CHUNK,
};
