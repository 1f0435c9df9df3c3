/* Self-signed certificate for the emulator (see emu_tlscert.h). */
#include "emu_tlscert.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "emu_fs.h"
#include "ent_log.h"
#include "ent_status.h"

#define TLS_DIR "tls"
#define CERT_FILE "cert.pem"
#define KEY_FILE "key.pem"
#define CERT_DAYS 3650
#define CERT_BACKDATE_SECONDS (24L * 3600L)
#define CERT_CN "localhost"
#define CERT_SAN "DNS:localhost,IP:127.0.0.1,IP:::1"

/* Appends the oldest queued OpenSSL error (the root cause) and clears the queue. */
static int fail_ssl(char *err, size_t errlen, const char *what)
{
    char buf[256] = "unknown error";
    unsigned long e = ERR_get_error();
    if (e)
        ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    return ent_fail(err, errlen, "tls: %s: %s", what, buf);
}

/* Writes a PEM object to path.tmp, fsyncs and renames it over path, so a crash
 * leaves either the old file, the new one, or none: never half a key. */
static int write_atomic(const char *path, mode_t mode, int (*write_pem)(FILE *, void *), void *obj,
                        char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return ent_fail(err, errlen, "tls: %s: path too long", path);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return ent_fail(err, errlen, "tls: cannot create %s: %s", tmp, strerror(errno));
    if (fchmod(fd, mode) < 0) { /* the umask must not widen or narrow it */
        int e = errno;
        close(fd);
        unlink(tmp);
        return ent_fail(err, errlen, "tls: chmod %s: %s", tmp, strerror(e));
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return ent_fail(err, errlen, "tls: %s: %s", tmp, strerror(e));
    }
    int ok = write_pem(f, obj) == 1;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        unlink(tmp);
        return fail_ssl(err, errlen, "cannot write a PEM file");
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return ent_fail(err, errlen, "tls: rename %s to %s: %s", tmp, path, strerror(e));
    }
    return 0;
}

static int write_key(FILE *f, void *pkey)
{
    return PEM_write_PrivateKey(f, pkey, NULL, NULL, 0, NULL, NULL);
}

static int write_cert(FILE *f, void *x509)
{
    return PEM_write_X509(f, x509);
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

static X509 *make_cert(EVP_PKEY *pkey)
{
    X509 *x = X509_new();
    BIGNUM *bn = BN_new();
    ASN1_INTEGER *serial = NULL;
    X509_NAME *name;
    X509V3_CTX ctx;

    if (!x || !bn || !X509_set_version(x, 2))
        goto fail;
    /* A random positive 127-bit serial: clients that cached an older emulator
     * certificate must not see a new one with the same issuer and serial. */
    if (!BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) || !(serial = BN_to_ASN1_INTEGER(bn, NULL)) ||
        !X509_set_serialNumber(x, serial))
        goto fail;
    if (!X509_gmtime_adj(X509_getm_notBefore(x), -CERT_BACKDATE_SECONDS) ||
        !X509_time_adj_ex(X509_getm_notAfter(x), CERT_DAYS, 0, NULL))
        goto fail;
    if (!X509_set_pubkey(x, pkey))
        goto fail;
    name = X509_get_subject_name(x);
    if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"sbemu", -1, -1, 0) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)CERT_CN, -1, -1, 0) ||
        !X509_set_issuer_name(x, name))
        goto fail;

    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    /* CA:TRUE and keyCertSign make the one file usable as the trust anchor;
     * SKI/AKI keep strict verifiers (Python 3.13's VERIFY_X509_STRICT) happy. */
    if (add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
        add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign") < 0 ||
        add_ext(x, &ctx, NID_ext_key_usage, "serverAuth") < 0 ||
        add_ext(x, &ctx, NID_subject_key_identifier, "hash") < 0 ||
        add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always") < 0 ||
        add_ext(x, &ctx, NID_subject_alt_name, CERT_SAN) < 0)
        goto fail;
    if (!X509_sign(x, pkey, EVP_sha256()))
        goto fail;
    ASN1_INTEGER_free(serial);
    BN_free(bn);
    return x;
fail:
    ASN1_INTEGER_free(serial);
    BN_free(bn);
    X509_free(x);
    return NULL;
}

static int generate(const char *dir, const char *cert_path, const char *key_path, char *err, size_t errlen)
{
    EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (!pkey)
        return fail_ssl(err, errlen, "cannot generate an EC P-256 key");
    X509 *x = make_cert(pkey);
    if (!x) {
        EVP_PKEY_free(pkey);
        return fail_ssl(err, errlen, "cannot build the certificate");
    }
    /* Key first: a crash in between leaves a key without a certificate, which
     * the next start treats as "generate both". */
    int rc = write_atomic(key_path, 0600, write_key, pkey, err, errlen);
    if (rc == 0)
        rc = write_atomic(cert_path, 0644, write_cert, x, err, errlen);
    if (rc == 0)
        fsync_dir(dir);
    X509_free(x);
    EVP_PKEY_free(pkey);
    return rc;
}

static int check_existing(const char *cert_path, const char *key_path, char *err, size_t errlen)
{
    FILE *f = fopen(cert_path, "r");
    if (!f)
        return ent_fail(err, errlen, "tls: cannot open %s: %s", cert_path, strerror(errno));
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    if (!x)
        return fail_ssl(err, errlen, "cannot read the certificate (remove cert.pem and key.pem to regenerate)");
    f = fopen(key_path, "r");
    if (!f) {
        X509_free(x);
        return ent_fail(err, errlen, "tls: cannot open %s: %s", key_path, strerror(errno));
    }
    EVP_PKEY *pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    int rc = 0;
    if (!pkey)
        rc = fail_ssl(err, errlen, "cannot read the private key (remove cert.pem and key.pem to regenerate)");
    else if (X509_check_private_key(x, pkey) != 1)
        rc = ent_fail(err, errlen, "tls: %s and %s do not belong together (remove both to regenerate)", cert_path,
                  key_path);
    ERR_clear_error();
    EVP_PKEY_free(pkey);
    X509_free(x);
    return rc;
}

int emu_tlscert_ensure(const char *data_dir, char *cert_path, size_t cert_path_len, char *key_path,
                       size_t key_path_len, char *err, size_t errlen)
{
    char dir[4096];
    struct stat st;

    if (snprintf(dir, sizeof dir, "%s/" TLS_DIR, data_dir) >= (int)sizeof dir ||
        snprintf(cert_path, cert_path_len, "%s/" CERT_FILE, dir) >= (int)cert_path_len ||
        snprintf(key_path, key_path_len, "%s/" KEY_FILE, dir) >= (int)key_path_len)
        return ent_fail(err, errlen, "tls: %s: path too long", data_dir);
    if (emu_mkdir_p(dir, 0755) < 0)
        return ent_fail(err, errlen, "tls: cannot create %s: %s", dir, strerror(errno));

    int have_cert = stat(cert_path, &st) == 0;
    int have_key = stat(key_path, &st) == 0;
    if (have_cert && have_key) {
        if (check_existing(cert_path, key_path, err, errlen) < 0)
            return -1;
        LOG_DEBUG("tls: using %s", cert_path);
        return 0;
    }
    if (have_cert || have_key)
        LOG_WARN("tls: %s without %s: generating both again", have_cert ? cert_path : key_path,
                 have_cert ? KEY_FILE : CERT_FILE);
    if (generate(dir, cert_path, key_path, err, errlen) < 0)
        return -1;
    LOG_INFO("tls: generated a self-signed certificate %s (trust it with NODE_EXTRA_CA_CERTS or "
             "connection_verify)", cert_path);
    return 0;
}
