/* The emulator's own TLS certificate, for AMQPS (5671), WSS and HTTPS when the
 * user gives no --tls-cert/--tls-key.
 *
 * One self-signed certificate that is also its own CA (basicConstraints CA:TRUE),
 * so the client trusts exactly this file: NODE_EXTRA_CA_CERTS=<cert.pem> for
 * Node, connection_verify=<cert.pem> for Python, REQUESTS_CA_BUNDLE for the
 * Python admin client. EC P-256, SHA-256, CN=localhost, subjectAltName
 * DNS:localhost, IP:127.0.0.1, IP:::1, valid 10 years (from one day back, to
 * absorb clock skew).
 *
 * Kept across restarts in <data-dir>/tls/cert.pem (0644) and key.pem (0600), so
 * clients configured once keep trusting it. */
#ifndef EMU_TLSCERT_H
#define EMU_TLSCERT_H

#include <stddef.h>

/* If <data_dir>/tls/cert.pem and key.pem both exist, checks that they load and
 * belong together and uses them (a mismatch is an error, never overwritten: the
 * user may have placed them there). If neither or only one exists, generates
 * both, each written to a temp file, fsynced and renamed into place. Creates
 * data_dir and data_dir/tls as needed.
 * Fills cert_path and key_path (data_dir + "/tls/cert.pem" etc.).
 * Returns 0, or -1 with one line in err. */
int emu_tlscert_ensure(const char *data_dir, char *cert_path, size_t cert_path_len, char *key_path,
                       size_t key_path_len, char *err, size_t errlen);

#endif
