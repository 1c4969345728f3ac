#ifndef OPENCLAW_COPENSSL_SHIM_H
#define OPENCLAW_COPENSSL_SHIM_H

// The OpenSSL 3 headers the project uses. OpenSSL's function-like macros are not importable
// into Swift, so the inline helpers below wrap the few that are needed.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

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

#endif
