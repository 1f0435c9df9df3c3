/* Shared Access Signature tokens, as every SDK builds them (wire-protocol §2.4):
 * `SharedAccessSignature sr=<enc resource>&sig=<enc base64 HMAC-SHA256>&se=<unix s>&skn=<key name>`,
 * fields in any order, HMAC over the raw (still encoded) sr + "\n" + se, keyed
 * with the key string's bytes as written. */
#ifndef AMQP_SAS_H
#define AMQP_SAS_H

#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"

/* Longest token accepted; real ones are ~200 bytes. */
#define AMQP_SAS_TOKEN_MAX 4096

/* Longest key name read from a token (Service Bus allows 256). */
#define AMQP_SAS_KEY_NAME_MAX 256

typedef struct amqp_sas_result {
    char audience[1024]; /* sr, URL-decoded */
    int64_t expires_ms;
    char key_name[AMQP_SAS_KEY_NAME_MAX + 1]; /* skn, URL-decoded: set once the token is read, even when refused */
} amqp_sas_result;

/* SB_OK, or SB_ERR_UNAUTHORIZED with the reason in why. key_name: the one
 * key name accepted, or NULL for any (a namespace is chosen by it: the
 * caller decides what it means, ent_namespace.h). */
sb_status amqp_sas_verify(const char *token, const char *key_name, const char *key, int64_t now_ms,
                          amqp_sas_result *out, char *why, size_t whylen);
/* What a token says (key name, audience, expiry: 0 when malformed), read
 * without checking its signature: which key must sign it follows from what it
 * names (a namespace's own keys, entities/ent_namespace.h). SB_OK, or
 * SB_ERR_UNAUTHORIZED with why when it is not a SAS token. */
sb_status amqp_sas_read(const char *token, amqp_sas_result *out, char *why, size_t whylen);

#endif
