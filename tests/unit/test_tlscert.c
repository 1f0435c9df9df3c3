/* emu_tlscert: generates a usable self-signed CA/server certificate, reloads it
 * unchanged, regenerates a half-written pair, refuses a mismatched pair, and a
 * client that trusts only cert.pem completes a TLS handshake to localhost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "emu_tlscert.h"

static char tmpdir[256];
static char data_dir[512];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sbemu-tlscert-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    /* Nested and not yet existing: ensure must create it. */
    snprintf(data_dir, sizeof data_dir, "%s/a/b", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static X509 *load_cert(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(x);
    return x;
}

static EVP_PKEY *load_key(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(k);
    return k;
}

static void ensure_ok(const char *dir, char *cert, char *key)
{
    char err[512] = "";
    int rc = emu_tlscert_ensure(dir, cert, 512, key, 512, err, sizeof err);
    if (rc != 0)
        fail_msg("emu_tlscert_ensure: %s", err);
}

static void test_generate(void **state)
{
    (void)state;
    char cert[512], key[512], want[600];
    ensure_ok(data_dir, cert, key);
    snprintf(want, sizeof want, "%s/tls/cert.pem", data_dir);
    assert_string_equal(cert, want);
    snprintf(want, sizeof want, "%s/tls/key.pem", data_dir);
    assert_string_equal(key, want);

    struct stat st;
    assert_int_equal(stat(key, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(stat(cert, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);

    X509 *x = load_cert(cert);
    EVP_PKEY *k = load_key(key);
    assert_int_equal(X509_check_private_key(x, k), 1);
    assert_int_equal(EVP_PKEY_get_base_id(k), EVP_PKEY_EC);

    /* Self-signed, CA:TRUE, names localhost, 127.0.0.1 and ::1. */
    assert_int_equal(X509_verify(x, k), 1);
    assert_int_equal(X509_check_ca(x), 1);
    assert_int_equal(X509_check_host(x, "localhost", 0, 0, NULL), 1);
    assert_int_equal(X509_check_ip_asc(x, "127.0.0.1", 0), 1);
    assert_int_equal(X509_check_ip_asc(x, "::1", 0), 1);
    assert_int_equal(X509_check_host(x, "example.com", 0, 0, NULL), 0);

    GENERAL_NAMES *san = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    assert_non_null(san);
    int dns = 0, ip = 0;
    for (int i = 0; i < sk_GENERAL_NAME_num(san); i++) {
        GENERAL_NAME *g = sk_GENERAL_NAME_value(san, i);
        if (g->type == GEN_DNS) {
            dns++;
            assert_string_equal((const char *)ASN1_STRING_get0_data(g->d.dNSName), "localhost");
        } else if (g->type == GEN_IPADD) {
            ip++;
            int len = ASN1_STRING_length(g->d.iPAddress);
            assert_true(len == 4 || len == 16);
        }
    }
    assert_int_equal(dns, 1);
    assert_int_equal(ip, 2);
    GENERAL_NAMES_free(san);

    char cn[64];
    assert_true(X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn) > 0);
    assert_string_equal(cn, "localhost");

    /* Valid now and for about ten years. */
    int days, secs;
    assert_int_equal(X509_cmp_current_time(X509_get0_notBefore(x)), -1);
    assert_int_equal(ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(x)), 1);
    assert_true(days >= 3649 && days <= 3651);

    /* It verifies as its own trust anchor for TLS servers, even strictly. */
    X509_STORE *store = X509_STORE_new();
    X509_STORE_add_cert(store, x);
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, x, NULL);
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    X509_VERIFY_PARAM_set_flags(X509_STORE_CTX_get0_param(ctx), X509_V_FLAG_X509_STRICT);
    X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), "localhost", 0);
    int vr = X509_verify_cert(ctx);
    if (vr != 1)
        fail_msg("verify: %s", X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);

    /* No temp files left beside them. */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/tls", data_dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    assert_int_equal(n, 2);

    EVP_PKEY_free(k);
    X509_free(x);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[2][8192];
    static int which;
    char *b = buf[which++ & 1];
    size_t n = fread(b, 1, sizeof buf[0] - 1, f);
    b[n] = '\0';
    fclose(f);
    return b;
}

static void test_reload_keeps_files(void **state)
{
    (void)state;
    char cert[512], key[512], c1[8192], k1[8192];
    ensure_ok(data_dir, cert, key);
    snprintf(c1, sizeof c1, "%s", slurp(cert));
    snprintf(k1, sizeof k1, "%s", slurp(key));
    ensure_ok(data_dir, cert, key);
    assert_string_equal(slurp(cert), c1);
    assert_string_equal(slurp(key), k1);
}

static void test_half_pair_regenerates(void **state)
{
    (void)state;
    char cert[512], key[512], k1[8192];
    ensure_ok(data_dir, cert, key);
    snprintf(k1, sizeof k1, "%s", slurp(key));
    assert_int_equal(unlink(cert), 0);
    ensure_ok(data_dir, cert, key);
    assert_string_not_equal(slurp(key), k1);
    X509 *x = load_cert(cert);
    EVP_PKEY *k = load_key(key);
    assert_int_equal(X509_check_private_key(x, k), 1);
    EVP_PKEY_free(k);
    X509_free(x);
}

static void test_mismatch_refused(void **state)
{
    (void)state;
    char cert[512], key[512], cert2[512], key2[512], other[600], err[512] = "";
    ensure_ok(data_dir, cert, key);
    snprintf(other, sizeof other, "%s/other", tmpdir);
    ensure_ok(other, cert2, key2);
    assert_int_equal(rename(key2, key), 0);
    assert_int_equal(emu_tlscert_ensure(data_dir, cert, sizeof cert, key, sizeof key, err, sizeof err), -1);
    assert_non_null(strstr(err, "do not belong together"));

    FILE *f = fopen(cert, "w");
    fputs("not a certificate\n", f);
    fclose(f);
    assert_int_equal(emu_tlscert_ensure(data_dir, cert, sizeof cert, key, sizeof key, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot read the certificate"));
}

static void test_umask_does_not_matter(void **state)
{
    (void)state;
    char cert[512], key[512];
    struct stat st;
    mode_t old = umask(0);
    ensure_ok(data_dir, cert, key);
    umask(old);
    assert_int_equal(stat(key, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
}

/* Pumps bytes between two memory BIO pairs until both handshakes finish. */
static void test_handshake_trusting_only_cert(void **state)
{
    (void)state;
    char cert[512], key[512];
    ensure_ok(data_dir, cert, key);

    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(SSL_CTX_use_certificate_chain_file(sctx, cert), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(sctx, key, SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_load_verify_locations(cctx, cert, NULL), 1);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);

    SSL *s = SSL_new(sctx), *c = SSL_new(cctx);
    BIO *sb, *cb;
    assert_int_equal(BIO_new_bio_pair(&sb, 0, &cb, 0), 1);
    SSL_set_bio(s, sb, sb);
    SSL_set_bio(c, cb, cb);
    SSL_set_accept_state(s);
    SSL_set_connect_state(c);
    SSL_set_tlsext_host_name(c, "localhost");
    assert_int_equal(SSL_set1_host(c, "localhost"), 1);

    int cdone = 0, sdone = 0;
    for (int i = 0; i < 100 && !(cdone && sdone); i++) {
        if (!cdone) {
            int r = SSL_do_handshake(c);
            if (r == 1)
                cdone = 1;
            else if (SSL_get_error(c, r) != SSL_ERROR_WANT_READ)
                fail_msg("client handshake: %s",
                         X509_verify_cert_error_string(SSL_get_verify_result(c)));
        }
        if (!sdone) {
            int r = SSL_do_handshake(s);
            if (r == 1)
                sdone = 1;
            else if (SSL_get_error(s, r) != SSL_ERROR_WANT_READ)
                fail_msg("server handshake failed");
        }
    }
    assert_true(cdone && sdone);
    assert_int_equal(SSL_get_verify_result(c), X509_V_OK);

    SSL_free(c);
    SSL_free(s);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_generate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_keeps_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_half_pair_regenerates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mismatch_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_umask_does_not_matter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handshake_trusting_only_cert, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
