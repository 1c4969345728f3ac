"""TLS for the Python peers: a client that trusts exactly one certificate, by the SHA-256
fingerprint of its DER encoding (as a phone trusts a setup code's `tlsFingerprint`), and a
server context from PEM files.

The pin is checked in `connection_made`, when the TLS handshake is complete and before the
WebSocket upgrade request is written: a server with another certificate gets nothing but the
TLS handshake, and the connect attempt fails with `PinMismatch`.
"""
import hashlib
import ssl

from websockets.asyncio.client import ClientConnection, connect


class PinMismatch(Exception):
    """The server's certificate is not the pinned one."""


def normalized(fingerprint):
    """64 lower-case hex digits; colons, spaces, case and a `sha256:` prefix are ignored."""
    text = fingerprint.strip().lower()
    if text.startswith("sha256:"):
        text = text[len("sha256:"):]
    text = text.replace(":", "").replace(" ", "")
    if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"not a SHA-256 fingerprint: {fingerprint}")
    return text


def peer_fingerprint(transport):
    """The SHA-256 fingerprint of the peer certificate of an asyncio TLS transport."""
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    return hashlib.sha256(der).hexdigest() if der else None


def client_context():
    """No CA check and no host-name check: the pin is the whole trust decision."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def server_context(certificate_file, key_file):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate_file, key_file)
    return context


def pinned_connection(pin):
    """A `ClientConnection` class that aborts before the upgrade when the certificate differs."""
    expected = normalized(pin)

    class Pinned(ClientConnection):
        mismatch = None

        def connection_made(self, transport):
            actual = peer_fingerprint(transport)
            super().connection_made(transport)
            if actual != expected:
                Pinned.mismatch = actual
                transport.abort()

    return Pinned


def connect_pinned(url, pin=None, **kwargs):
    """`websockets` connect; for `wss://` with `pin`, only to a server with that certificate.
    Use as `async with connect_pinned(...) as ws`, or `await` it (raises PinMismatch)."""
    if not url.startswith("wss://") or pin is None:
        return connect(url, **kwargs)
    connection_class = pinned_connection(pin)
    return _Pinned(connect(url, ssl=client_context(), create_connection=connection_class, **kwargs), connection_class)


class _Pinned:
    def __init__(self, inner, connection_class):
        self.inner = inner
        self.connection_class = connection_class

    def _check(self, error=None):
        if self.connection_class.mismatch is not None:
            raise PinMismatch(f"certificate fingerprint mismatch: the server's is {self.connection_class.mismatch}") from error

    async def __aenter__(self):
        try:
            return await self.inner.__aenter__()
        except Exception as error:
            self._check(error)
            raise

    async def __aexit__(self, *details):
        return await self.inner.__aexit__(*details)

    def __await__(self):
        return self._await().__await__()

    async def _await(self):
        try:
            return await self.inner
        except Exception as error:
            self._check(error)
            raise
