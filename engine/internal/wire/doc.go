// Package wire reads and writes MongoDB wire protocol messages.
//
// It understands OP_MSG (opcode 2013), the only protocol modern drivers use,
// and OP_QUERY/OP_REPLY (2004/1), which drivers still send for the very first
// legacy isMaster handshake. Anything else is reported as ErrUnsupportedOpCode
// so that the server can close the connection cleanly.
//
// Invariants:
//
//	I1. ReadMessage never allocates more than MaxMessageSize bytes for one
//	    message: the length prefix is checked before the body is read.
//	I2. A message whose declared sections do not exactly fill its body, or
//	    whose BSON documents are malformed, is an error; nothing is guessed.
//	I3. When the checksumPresent flag is set the CRC-32C (Castagnoli) of the
//	    message is verified before any section is parsed.
//	I4. Every document is validated to the last nested byte (validate.go):
//	    a missing terminator anywhere is InvalidBSON, never repaired.
//	I5. A message that is framed correctly but whose content mongod refuses
//	    (invalid BSON, two bodies, two sequences with one identifier, an
//	    unknown section kind) comes back as a *ParseError with mongod's code
//	    together with the message, so that the server answers it and keeps
//	    the connection; framing errors close the connection.
//
// The package imports only the driver's bson packages.
package wire
