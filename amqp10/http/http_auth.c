/* SAS on the management API (http_internal.h): the token every SDK puts in
 * the Authorization header, checked as $cbs checks it on AMQP (amqp_sas.c):
 * signed with the key of the namespace it is for (its own keys when it has
 * any, else the emulator's: entities/ent_namespace.h), not expired, and for
 * an audience that covers the request. The audiences differ by SDK and all work: JS signs the whole
 * request URL lowercased (query included), .NET the URL without its query,
 * Python the namespace root (https://host:port). */
#include <stdio.h>
#include <string.h>

#include "amqp_sas.h"
#include "ent_clock.h"
#include "ent_namespace.h"
#include "http_internal.h"

sb_status http_auth_check(http_req *r, char *why, size_t whylen)
{
    if (!r->broker) {
        snprintf(why, whylen, "the emulator is not ready");
        return SB_ERR_UNAUTHORIZED;
    }
    if (!r->auth || !*r->auth) {
        snprintf(why, whylen, "the request has no Authorization header (a SharedAccessSignature token)");
        return SB_ERR_UNAUTHORIZED;
    }
    amqp_sas_result sas;
    const broker_settings *keys = broker_settings_of(r->broker);
    const char *own = broker_default_namespace_name(r->broker);
    /* the namespace the token is for (its audience's host, else its key
     * name), and the one whose key must sign it: the Host header's when it
     * names one (a namespace chosen by host keeps key names of its own) */
    char host_ns[ENT_NAMESPACE_NAME_SIZE], signer[ENT_NAMESPACE_NAME_SIZE];
    sb_status st = amqp_sas_read(r->auth, &sas, why, whylen);
    if (st == SB_OK && (ent_namespace_of_audience(sas.audience, host_ns, sizeof host_ns, why, whylen) < 0 ||
                        ent_namespace_choose(host_ns, sas.key_name, keys->sas_key_name, own, r->token_ns,
                                             sizeof r->token_ns, why, whylen) != SB_OK))
        st = SB_ERR_UNAUTHORIZED;
    if (st == SB_OK) {
        int h = ent_namespace_of_host(r->host, host_ns, sizeof host_ns, why, whylen);
        snprintf(signer, sizeof signer, "%s", h > 0 && !ent_namespace_is_default(host_ns, own) ? host_ns : r->token_ns);
        const ent_namespaces *known = broker_namespaces(r->broker);
        const ent_namespace *ns = signer[0] ? ent_namespaces_find(known, signer, own) : NULL;
        const char *key =
            ent_namespace_signing_key(known, ns ? ns->id : 0, signer, sas.key_name, keys->sas_key, why, whylen);
        st = key ? amqp_sas_verify(r->auth, NULL, key, ent_clock_wall_ms(), &sas, why, whylen) : SB_ERR_UNAUTHORIZED;
    }
    if (st != SB_OK) {
        size_t n = strlen(why);
        if (n && why[n - 1] == '.')
            why[n - 1] = 0; /* the caller ends the sentence */
        return st == SB_ERR_INTERNAL ? st : SB_ERR_UNAUTHORIZED;
    }
    char granted[ENT_ENTITY_PATH_MAX + 1];
    if (ent_audience_path(sas.audience, granted, sizeof granted)) {
        snprintf(why, whylen, "the token's audience is not a Service Bus address");
        return SB_ERR_UNAUTHORIZED;
    }
    if (!ent_path_authorized(granted, r->path)) {
        snprintf(why, whylen, "the token was signed for '/%s', which does not cover '/%s'", granted, r->path);
        return SB_ERR_UNAUTHORIZED;
    }
    return SB_OK;
}
