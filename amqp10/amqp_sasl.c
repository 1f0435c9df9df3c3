/* A Proton SASL plugin that offers what the Service Bus SDKs ask for.
 *
 * Proton 0.37 without Cyrus offers only ANONYMOUS; .NET insists on MSSBCBS and
 * Python's uamqp sends it. Service Bus authorizes through CBS tokens after the
 * connection opens, so every mechanism here simply succeeds. Clients that send
 * no SASL layer at all (rhea without a username) are let in by
 * pn_transport_require_auth(t, false) in amqp_conn.c. */
#include <proton/sasl.h>
#include <proton/sasl_plugin.h>
#include <proton/transport.h>

#include "amqp_internal.h"

static void sasl_free(pn_transport_t *t) { (void)t; }
static const char *sasl_list(pn_transport_t *t) { (void)t; return "MSSBCBS ANONYMOUS PLAIN EXTERNAL"; }
/* The server speaks first: post the mechanisms frame. */
static bool sasl_init_server(pn_transport_t *t)
{
    pnx_sasl_set_desired_state(t, SASL_POSTED_MECHANISMS);
    return true;
}
static bool sasl_init_client(pn_transport_t *t) { (void)t; return false; }
static void sasl_prepare_write(pn_transport_t *t) { (void)t; }

static void sasl_process_init(pn_transport_t *t, const char *mechanism, const pn_bytes_t *recv)
{
    (void)mechanism;
    (void)recv;
    pnx_sasl_set_succeeded(t, "anonymous", NULL);
    pnx_sasl_set_desired_state(t, SASL_POSTED_OUTCOME);
}

static void sasl_process_response(pn_transport_t *t, const pn_bytes_t *recv)
{
    (void)recv;
    pnx_sasl_set_succeeded(t, "anonymous", NULL);
    pnx_sasl_set_desired_state(t, SASL_POSTED_OUTCOME);
}

static bool sasl_process_mechanisms(pn_transport_t *t, const char *mechs) { (void)t; (void)mechs; return false; }
static void sasl_process_challenge(pn_transport_t *t, const pn_bytes_t *recv) { (void)t; (void)recv; }
static void sasl_process_outcome(pn_transport_t *t, const pn_bytes_t *recv) { (void)t; (void)recv; }
static bool sasl_can_encrypt(pn_transport_t *t) { (void)t; return false; }
static ssize_t sasl_max_encrypt(pn_transport_t *t) { (void)t; return 0; }

static ssize_t sasl_passthrough(pn_transport_t *t, pn_bytes_t in, pn_bytes_t *out)
{
    (void)t;
    *out = in;
    return (ssize_t)in.size;
}

static const pnx_sasl_implementation sbemu_sasl = {
    sasl_free,          sasl_list,              sasl_init_server,        sasl_init_client,
    sasl_prepare_write, sasl_process_init,      sasl_process_response,   sasl_process_mechanisms,
    sasl_process_challenge, sasl_process_outcome, sasl_can_encrypt,      sasl_max_encrypt,
    sasl_passthrough,   sasl_passthrough,
};

void amqp_sasl_install(pn_transport_t *t)
{
    pn_sasl_t *sasl = pn_sasl(t);
    pnx_sasl_set_implementation(t, &sbemu_sasl, NULL);
    pn_sasl_set_allow_insecure_mechs(sasl, true);
}
