/* See amqp_sas.h. */
#include "amqp_sas.h"

#include <ctype.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"

static int hexval(int c)
{
    if (isdigit(c))
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes [s, s+n) into out. '+' stays '+': base64 signatures use it
 * literally when a client does not encode them, and none of our fields has spaces. */
static size_t url_decode(const char *s, size_t n, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < outlen; i++) {
        if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
            hexval((unsigned char)s[i + 2]) >= 0) {
            out[o++] = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = 0;
    return o;
}

/* Finds field `name=` in the &-separated list; returns its raw span. */
static int field(const char *fields, const char *name, const char **val, size_t *len)
{
    size_t n = strlen(name);
    for (const char *p = fields; p && *p;) {
        const char *amp = strchr(p, '&');
        size_t seg = amp ? (size_t)(amp - p) : strlen(p);
        if (seg > n && !strncmp(p, name, n) && p[n] == '=') {
            *val = p + n + 1;
            *len = seg - n - 1;
            return 0;
        }
        p = amp ? amp + 1 : NULL;
    }
    return -1;
}

/* se (seconds) in milliseconds; a time too far off for that is as good as never (it cannot overflow). */
static int64_t expiry_ms(long long se_s) { return se_s > LLONG_MAX / 1000 ? LLONG_MAX / 1000 * 1000 : se_s * 1000; }

sb_status amqp_sas_read(const char *token, amqp_sas_result *out, char *why, size_t whylen)
{
    static const char prefix[] = "SharedAccessSignature ";
    const char *sr, *sig, *se, *skn;
    size_t srl, sigl, sel, sknl;
    memset(out, 0, sizeof *out);
    if (!token || strlen(token) > AMQP_SAS_TOKEN_MAX || strncmp(token, prefix, sizeof prefix - 1)) {
        snprintf(why, whylen, "the token is not a SharedAccessSignature");
        return SB_ERR_UNAUTHORIZED;
    }
    const char *fields = token + sizeof prefix - 1;
    if (field(fields, "sr", &sr, &srl) || field(fields, "sig", &sig, &sigl) || field(fields, "se", &se, &sel) ||
        field(fields, "skn", &skn, &sknl)) {
        snprintf(why, whylen, "the SharedAccessSignature lacks one of sr, sig, se, skn");
        return SB_ERR_UNAUTHORIZED;
    }
    url_decode(skn, sknl, out->key_name, sizeof out->key_name);
    url_decode(sr, srl, out->audience, sizeof out->audience);
    char sebuf[32], *end;
    snprintf(sebuf, sizeof sebuf, "%.*s", (int)(sel < sizeof sebuf ? sel : 0), se);
    long long expiry = sel && sel < sizeof sebuf ? strtoll(sebuf, &end, 10) : 0;
    out->expires_ms = expiry > 0 && !*end ? expiry_ms(expiry) : 0;
    return SB_OK;
}

sb_status amqp_sas_verify(const char *token, const char *key_name, const char *key, int64_t now_ms,
                          amqp_sas_result *out, char *why, size_t whylen)
{
    static const char prefix[] = "SharedAccessSignature ";
    const char *sr, *sig, *se, *skn;
    size_t srl, sigl, sel, sknl;
    out->key_name[0] = 0;
    if (!token || strlen(token) > AMQP_SAS_TOKEN_MAX || strncmp(token, prefix, sizeof prefix - 1)) {
        snprintf(why, whylen, "the token is not a SharedAccessSignature");
        return SB_ERR_UNAUTHORIZED;
    }
    const char *fields = token + sizeof prefix - 1;
    if (field(fields, "sr", &sr, &srl) || field(fields, "sig", &sig, &sigl) || field(fields, "se", &se, &sel) ||
        field(fields, "skn", &skn, &sknl)) {
        snprintf(why, whylen, "the SharedAccessSignature lacks one of sr, sig, se, skn");
        return SB_ERR_UNAUTHORIZED;
    }
    char sebuf[32];
    char *name = out->key_name;
    url_decode(skn, sknl, name, sizeof out->key_name);
    if (key_name && strcmp(name, key_name)) {
        snprintf(why, whylen, "unknown SharedAccessKeyName '%s'", name);
        return SB_ERR_UNAUTHORIZED;
    }
    if (sel == 0 || sel >= sizeof sebuf) {
        snprintf(why, whylen, "the token's expiry (se) is malformed");
        return SB_ERR_UNAUTHORIZED;
    }
    memcpy(sebuf, se, sel);
    sebuf[sel] = 0;
    char *end;
    long long expiry = strtoll(sebuf, &end, 10);
    if (*end || expiry <= 0) {
        snprintf(why, whylen, "the token's expiry (se) is malformed");
        return SB_ERR_UNAUTHORIZED;
    }
    /* HMAC-SHA256(key, sr_raw "\n" se) */
    size_t msglen = srl + 1 + sel;
    char *msg = ent_malloc(msglen);
    if (!msg) {
        snprintf(why, whylen, "out of memory");
        return SB_ERR_INTERNAL;
    }
    memcpy(msg, sr, srl);
    msg[srl] = '\n';
    memcpy(msg + srl + 1, se, sel);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)msg, msglen, mac, &maclen);
    ent_free(msg);
    unsigned char expect[128];
    int b64 = EVP_EncodeBlock(expect, mac, (int)maclen);
    char given[256];
    size_t givenlen = url_decode(sig, sigl, given, sizeof given);
    if (b64 < 0 || givenlen != (size_t)b64 || CRYPTO_memcmp(given, expect, givenlen)) {
        snprintf(why, whylen, "the token's signature does not match the key of '%s'", name);
        return SB_ERR_UNAUTHORIZED;
    }
    out->expires_ms = expiry_ms(expiry);
    if (out->expires_ms <= now_ms) {
        snprintf(why, whylen, "the token expired at %lld (unix seconds)", expiry);
        return SB_ERR_UNAUTHORIZED;
    }
    url_decode(sr, srl, out->audience, sizeof out->audience);
    return SB_OK;
}
