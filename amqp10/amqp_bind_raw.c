/* The raw binding: AMQP straight over a TCP socket, or over TLS, which lws
 * terminates before we see a byte (the same callbacks either way). A socket
 * arrives here when its port takes only AMQP, or when lws's sniffing found it
 * was not HTTP (amqp_listen.c): then RAW_ADOPT comes with the bytes already
 * read following as RAW_RX, so nothing the client sent first is lost. */
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
        pss->conn = amqp_conn_accept(wsi, LWS_WRITE_RAW, lws_is_ssl(wsi) ? "amqps" : "amqp");
        return pss->conn ? 0 : -1;
    case LWS_CALLBACK_RAW_RX:
        return pss->conn ? amqp_conn_on_bytes(pss->conn, in, len) : -1;
    case LWS_CALLBACK_RAW_WRITEABLE:
        return pss->conn ? amqp_conn_on_writeable(pss->conn) : -1;
    case LWS_CALLBACK_RAW_CLOSE:
        if (pss->conn) {
            amqp_conn *c = pss->conn;
            pss->conn = NULL;
            amqp_conn_on_closed(c);
        }
        return 0;
    default:
        return 0;
    }
}

const struct lws_protocols amqp_bind_raw_protocol = {
    AMQP_RAW_PROTOCOL_NAME, raw_callback, sizeof(raw_pss), 0, 0, NULL, 0,
};
