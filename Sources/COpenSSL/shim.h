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

#endif
