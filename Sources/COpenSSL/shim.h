#ifndef OPENCLAW_COPENSSL_SHIM_H
#define OPENCLAW_COPENSSL_SHIM_H

// The OpenSSL 3 headers the project uses. OpenSSL's function-like macros are not importable
// into Swift, so the inline helpers below wrap the few that are needed.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/// Returns the most recent OpenSSL error code for the calling thread and clears it (0 when none).
static inline unsigned long openclaw_openssl_last_error(void) {
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    return code;
}

/// The OpenSSL key type identifier for Ed25519 (`EVP_PKEY_ED25519`, a macro alias Swift cannot import).
static inline int openclaw_evp_pkey_ed25519(void) {
    return EVP_PKEY_ED25519;
}

/// Clears the calling thread's OpenSSL error queue, so a failed verification of untrusted input
/// leaves nothing behind for later callers.
static inline void openclaw_openssl_clear_errors(void) {
    ERR_clear_error();
}

// ---- WebSocketTransport: TLS (libssl). Macros of ssl.h and x509v3.h wrapped as functions.

/// A TLS context for a server (`is_server` 1) or a client, TLS 1.2 at least, with the modes the
/// transport relies on: partial writes and a write buffer that may move between retries.
static inline SSL_CTX *openclaw_tls_context_new(int is_server) {
    SSL_CTX *context = SSL_CTX_new(is_server ? TLS_server_method() : TLS_client_method());
    if (context == NULL) return NULL;
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return context;
}

/// Sets the SNI host name of a client connection (`SSL_set_tlsext_host_name`).
static inline int openclaw_tls_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// The text of an OpenSSL error code (`ERR_error_string_n`) into `buffer`.
static inline void openclaw_tls_error_text(unsigned long code, char *buffer, size_t length) {
    ERR_error_string_n(code, buffer, length);
}

/// Makes a self-signed certificate for `common_name` with the subject alternative names
/// `alt_names` (e.g. "DNS:localhost,IP:127.0.0.1"), valid from an hour ago for `days` days, on a
/// fresh ECDSA P-256 key, signed with SHA-256; writes both as PEM to the memory BIOs. Returns 1
/// on success, 0 on failure (the OpenSSL error queue says why).
static inline int openclaw_tls_make_self_signed(const char *common_name, const char *alt_names, int days,
                                                BIO *certificate_out, BIO *key_out) {
    int ok = 0;
    EVP_PKEY *key = NULL;
    X509 *certificate = NULL;
    X509_EXTENSION *extension = NULL;
    BIGNUM *serial = NULL;
    unsigned char serial_bytes[16];
    EVP_PKEY_CTX *key_context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    if (key_context == NULL || EVP_PKEY_keygen_init(key_context) <= 0
        || EVP_PKEY_CTX_set_ec_paramgen_curve_nid(key_context, NID_X9_62_prime256v1) <= 0
        || EVP_PKEY_keygen(key_context, &key) <= 0) goto done;
    certificate = X509_new();
    if (certificate == NULL || X509_set_version(certificate, 2) != 1) goto done;
    if (RAND_bytes(serial_bytes, sizeof serial_bytes) != 1) goto done;
    serial_bytes[0] &= 0x7F;
    serial = BN_bin2bn(serial_bytes, sizeof serial_bytes, NULL);
    if (serial == NULL || BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate)) == NULL) goto done;
    if (X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) == NULL
        || X509_gmtime_adj(X509_getm_notAfter(certificate), (long)days * 86400L) == NULL) goto done;
    if (X509_set_pubkey(certificate, key) != 1) goto done;
    X509_NAME *name = X509_get_subject_name(certificate);
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)common_name, -1, -1, 0) != 1) goto done;
    if (X509_set_issuer_name(certificate, name) != 1) goto done;
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, certificate, certificate, NULL, NULL, 0);
    extension = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, alt_names);
    if (extension == NULL || X509_add_ext(certificate, extension, -1) != 1) goto done;
    X509_EXTENSION_free(extension);
    extension = X509V3_EXT_conf_nid(NULL, &v3, NID_ext_key_usage, "serverAuth");
    if (extension == NULL || X509_add_ext(certificate, extension, -1) != 1) goto done;
    if (X509_sign(certificate, key, EVP_sha256()) <= 0) goto done;
    if (PEM_write_bio_X509(certificate_out, certificate) != 1) goto done;
    if (PEM_write_bio_PrivateKey(key_out, key, NULL, NULL, 0, NULL, NULL) != 1) goto done;
    ok = 1;
done:
    if (extension != NULL) X509_EXTENSION_free(extension);
    if (serial != NULL) BN_free(serial);
    if (certificate != NULL) X509_free(certificate);
    if (key != NULL) EVP_PKEY_free(key);
    if (key_context != NULL) EVP_PKEY_CTX_free(key_context);
    return ok;
}

/// The bytes held by a memory BIO (`BIO_get_mem_data`); `*data` stays owned by the BIO.
static inline long openclaw_bio_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

#endif
