// Package command executes MongoDB commands.
//
// Dispatch looks the command up in a table (one cmd_<name>.go file per
// command or small family), checks the generic arguments every command
// accepts ($db, lsid, txnNumber, readConcern, writeConcern, maxTimeMS,
// comment, apiVersion, ...), and runs the handler. Each handler parses
// every field of its command explicitly: a field is supported, accepted
// and ignored with a stated reason, or rejected with MongoDB's error
// (40415 for unknown fields, NotImplemented 238 for recognised options the
// engine does not support).
//
// Invariants:
//
//	I1. Every reply is {ok: 1, ...} or {ok: 0, errmsg, code, codeName};
//	    handlers return *mongoerr.Error values and never build error
//	    replies themselves.
//	I2. A retryable write (lsid + txnNumber) is executed at most once; a
//	    retry of the same pair returns the first reply.
//	I3. Cursors read the storage snapshot taken when they were opened.
//
// The package does not recover panics: the server loop does.
package command
