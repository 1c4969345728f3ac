#ifndef OPENCLAW_CQRENCODE_SHIM_H
#define OPENCLAW_CQRENCODE_SHIM_H

// libqrencode (Debian libqrencode-dev, Homebrew qrencode): QR code symbols for setup codes.
#include <qrencode.h>

#endif
