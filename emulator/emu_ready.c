/* See emu_ready.h. */
#include "emu_ready.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ent_log.h"

/* A probe's socket gives up on a silent peer after this long, then retries. */
#define READY_IO_TIMEOUT_MS 2000
#define READY_RETRY_MS 50
/* How often the loop looks at the probe's outcome. */
#define READY_POLL_MS 20

static const char SASL_HEADER[8] = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};
static const char HEALTH_GET[] = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

static int dial(const char *host, int port)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, service, &hints, &res))
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0)
            continue;
        struct timeval tv = {READY_IO_TIMEOUT_MS / 1000, (READY_IO_TIMEOUT_MS % 1000) * 1000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, a->ai_addr, a->ai_addrlen)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* Reads until n bytes or the peer stops; returns how many. */
static size_t read_some(int fd, SSL *ssl, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        int r = ssl ? SSL_read(ssl, buf + got, (int)(n - got)) : (int)read(fd, buf + got, n - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

/* The AMQP port: a SASL protocol header is answered with one. */
static bool amqp_answers(const char *host, int port, SSL_CTX *tls)
{
    int fd = dial(host, port);
    if (fd < 0)
        return false;
    SSL *ssl = NULL;
    bool ok = false;
    if (tls) {
        ssl = SSL_new(tls);
        if (!ssl || !SSL_set_fd(ssl, fd) || SSL_connect(ssl) != 1)
            goto out;
    }
    char reply[sizeof SASL_HEADER];
    int w = ssl ? SSL_write(ssl, SASL_HEADER, sizeof SASL_HEADER) : (int)write(fd, SASL_HEADER, sizeof SASL_HEADER);
    ok = w == (int)sizeof SASL_HEADER && read_some(fd, ssl, reply, sizeof reply) == sizeof reply &&
         !memcmp(reply, "AMQP", 4);
out:
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
    }
    close(fd);
    return ok;
}

/* The HTTP port: GET /health is answered 200. */
static bool health_answers(const char *host, int port)
{
    int fd = dial(host, port);
    if (fd < 0)
        return false;
    char reply[16] = "";
    bool ok = write(fd, HEALTH_GET, sizeof HEALTH_GET - 1) == (ssize_t)(sizeof HEALTH_GET - 1) &&
              read_some(fd, NULL, reply, 12) == 12 && !memcmp(reply, "HTTP/1.1 200", 12);
    close(fd);
    return ok;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *probe(void *arg)
{
    emu_ready *r = arg;
    SSL_CTX *tls = r->amqps_port ? SSL_CTX_new(TLS_client_method()) : NULL; /* no verification: we ask only whether it answers */
    int64_t until = mono_ms() + EMU_READY_TIMEOUT_MS;
    const char *pending = NULL;
    for (;;) {
        if (!amqp_answers(r->host, r->amqp_port, NULL))
            pending = "the AMQP port (--amqp-port)";
        else if (r->amqps_port && (!tls || !amqp_answers(r->host, r->amqps_port, tls)))
            pending = "the TLS port (--amqps-port)";
        else if (!health_answers(r->host, r->http_port))
            pending = "GET /health on the HTTP port (--http-port)";
        else
            pending = NULL;
        if (!pending || mono_ms() > until || atomic_load(&r->quit))
            break;
        usleep(READY_RETRY_MS * 1000);
    }
    SSL_CTX_free(tls);
    if (pending)
        snprintf(r->failure, sizeof r->failure, "%s did not answer on %s within %d ms", pending, r->host,
                 EMU_READY_TIMEOUT_MS);
    atomic_store(&r->state, pending ? -1 : 1);
    return NULL;
}

static void poll_outcome(lws_sorted_usec_list_t *sul)
{
    emu_ready *r = lws_container_of(sul, emu_ready, poll);
    int st = atomic_load(&r->state);
    if (st == 0) {
        lws_sul_schedule(r->ctx, 0, &r->poll, poll_outcome, READY_POLL_MS * LWS_US_PER_MS);
        return;
    }
    if (st < 0)
        LOG_ERROR("not up: %s", r->failure);
    else
        r->on_ready(r->arg);
}

/* The address a client on this machine dials to reach what --bind listens on. */
static void dial_host(const char *bind, char *out, size_t n)
{
    unsigned char addr[sizeof(struct in6_addr)];
    if (!bind || !strcmp(bind, "0.0.0.0"))
        snprintf(out, n, "127.0.0.1");
    else if (!strcmp(bind, "::"))
        snprintf(out, n, "::1");
    else if (inet_pton(AF_INET, bind, addr) == 1 || inet_pton(AF_INET6, bind, addr) == 1)
        snprintf(out, n, "%s", bind);
    else
        out[0] = 0; /* an interface name */
}

int emu_ready_start(emu_ready *r, struct lws_context *ctx, const char *bind, int amqp_port, int amqps_port,
                    int http_port, void (*on_ready)(void *), void *arg)
{
    dial_host(bind, r->host, sizeof r->host);
    r->amqp_port = amqp_port;
    r->amqps_port = amqps_port;
    r->http_port = http_port;
    r->ctx = ctx;
    r->on_ready = on_ready;
    r->arg = arg;
    atomic_store(&r->state, 0);
    atomic_store(&r->quit, 0);
    if (!r->host[0]) {
        LOG_INFO("--bind names an interface: the listeners are not probed before the ready line");
        on_ready(arg);
        return 0;
    }
    if (pthread_create(&r->thread, NULL, probe, r)) {
        on_ready(arg);
        return -1;
    }
    r->started = true;
    lws_sul_schedule(ctx, 0, &r->poll, poll_outcome, READY_POLL_MS * LWS_US_PER_MS);
    return 0;
}

void emu_ready_stop(emu_ready *r)
{
    if (r->started) {
        atomic_store(&r->quit, 1);
        pthread_join(r->thread, NULL);
        r->started = false;
    }
    if (r->ctx)
        lws_sul_cancel(&r->poll);
}
