// Package server runs the connection loop: it reads wire messages, hands
// commands to the command package and writes the replies.
//
// It is the only place in the engine that recovers panics: a panic while
// serving one request is logged and answered with InternalError, and the
// connection and the server go on serving.
//
// Invariants:
//
//	I1. A connection whose frame cannot be parsed (bad length, bad
//	    checksum, unknown opcode) is closed; no reply is guessed.
//	I2. A request with the moreToCome flag gets no reply.
//	I3. Close stops accepting, cancels the requests in flight and waits for
//	    every connection goroutine to return.
//	I4. A TLS connection is served only after its handshake succeeds
//	    (bounded by handshakeTimeout); a TLS ClientHello on a plain
//	    connection is recognised from its first bytes and the connection
//	    closed, never read as a wire message.
package server
