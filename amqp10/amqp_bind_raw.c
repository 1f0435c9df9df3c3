/* The raw binding: AMQP straight over a TCP socket, or over TLS, which lws
 * terminates before we see a byte (the same callbacks either way). A socket
 * arrives here when lws's sniffing found it was not HTTP (emulator/emu_listen.c):
 * RAW_ADOPT comes first, then the bytes already read follow as RAW_RX, so
 * nothing the client sent first is lost. */
#include "amqp_internal.h"

/* Per-wsi data lws keeps for us: just the pointer, since the connection can
 * outlive its socket while store operations finish. */
typedef struct raw_pss {
    amqp_conn *conn;
} raw_pss;

static int raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    raw_pss *pss = user;
    switch (reason) {
    case LWS_CALLBACK_RAW_ADOPT:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_OPENED, wsi, LWS_WRITE_RAW, NULL, 0);
    case LWS_CALLBACK_RAW_RX:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_BYTES, wsi, LWS_WRITE_RAW, in, len);
    case LWS_CALLBACK_RAW_WRITEABLE:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_WRITEABLE, wsi, LWS_WRITE_RAW, NULL, 0);
    case LWS_CALLBACK_RAW_CLOSE:
        return amqp_conn_bind(&pss->conn, AMQP_BIND_CLOSED, wsi, LWS_WRITE_RAW, NULL, 0);
    default:
        return 0;
    }
}

const struct lws_protocols amqp_bind_raw_protocol = {
    AMQP_RAW_PROTOCOL_NAME, raw_callback, sizeof(raw_pss), 0, 0, NULL, AMQP_WRITE_CHUNK,
};
