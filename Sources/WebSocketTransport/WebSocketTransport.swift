// The RFC 6455 transport; filled in by the transport work.
