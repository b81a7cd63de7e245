package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"
)

// handshakeTimeout bounds a TLS handshake, so that a client that connects
// to a TLS listener and stalls (or speaks plain text and waits) does not
// hold a connection goroutine forever.
const handshakeTimeout = 30 * time.Second

// handshake completes the TLS handshake of c when it is a TLS connection;
// a plain connection passes through. A failed handshake (a plain-text
// client, an untrusted client certificate) is logged and reported false.
func handshake(ctx context.Context, c net.Conn, log *slog.Logger) bool {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		log.Info("TLS handshake failed, closing connection", "err", err)
		return false
	}
	return true
}

// looksLikeTLS reports whether the first bytes a client sent on a plain
// listener are a TLS ClientHello: a handshake record (content type 0x16,
// major version 3, minor 0 to 4) whose first message has type 1. Read as
// a wire header, those bytes would announce a message of tens of
// megabytes; mongod likewise recognises them and refuses the connection.
func looksLikeTLS(r *bufio.Reader) bool {
	b, err := r.Peek(6)
	if err != nil {
		return false
	}
	return b[0] == 0x16 && b[1] == 0x03 && b[2] <= 0x04 && b[5] == 0x01
}

// warnIfExposed logs a loud warning when l listens on anything but a
// loopback address without access control: every client that reaches the
// port can read and change every database. With access control (authOn)
// it notes instead that clients must authenticate, and that only TLS keeps
// their traffic private.
func warnIfExposed(l net.Listener, log *slog.Logger, authOn bool) {
	a, ok := l.Addr().(*net.TCPAddr)
	if !ok || a.IP.IsLoopback() {
		return
	}
	if authOn {
		log.Warn("listening on a non-loopback address with access control enabled: "+
			"clients must authenticate (SCRAM-SHA-256 or SCRAM-SHA-1) before any other command. "+
			"Without TLS (--tls-cert-file, --tls-key-file) documents and commands cross the network unencrypted.",
			"addr", a.String())
		return
	}
	log.Warn("** WARNING: listening on a non-loopback address without authentication: "+
		"anyone who can reach this port can read, change and delete every database. "+
		"Bind to 127.0.0.1 (--listen 127.0.0.1:27017), restrict access with a firewall, "+
		"or start the server with --auth and create users.",
		"addr", a.String())
}
