/* SAS on the management API (http_internal.h): the token every SDK puts in
 * the Authorization header, checked as $cbs checks it on AMQP (amqp_sas.c):
 * signed with the namespace key, not expired, and for an audience that covers
 * the request. The audiences differ by SDK and all work: JS signs the whole
 * request URL lowercased (query included), .NET the URL without its query,
 * Python the namespace root (https://host:port). */
#include <stdio.h>
#include <string.h>

#include "amqp_sas.h"
#include "ent_clock.h"
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
    /* any key name: it may name the namespace, as on $cbs */
    sb_status st = amqp_sas_verify(r->auth, NULL, keys->sas_key, ent_clock_wall_ms(), &sas, why, whylen);
    if (st != SB_OK)
        return st == SB_ERR_INTERNAL ? st : SB_ERR_UNAUTHORIZED;
    char host_ns[ENT_NAMESPACE_NAME_SIZE];
    if (ent_namespace_of_audience(sas.audience, host_ns, sizeof host_ns, why, whylen) < 0 ||
        ent_namespace_choose(host_ns, sas.key_name, keys->sas_key_name, broker_default_namespace_name(r->broker),
                             r->token_ns, sizeof r->token_ns, why, whylen) != SB_OK) {
        size_t n = strlen(why);
        if (n && why[n - 1] == '.')
            why[n - 1] = 0; /* the caller ends the sentence */
        return SB_ERR_UNAUTHORIZED;
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
