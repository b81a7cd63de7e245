// Package engine is Formwork's embedded, durable, MongoDB-wire-compatible
// database.
//
// Open a database, then reach it with the official Go driver either in
// process, through Dialer, or over TCP, through Serve:
//
//	db, err := engine.Open(ctx, engine.Options{Dir: "data"}) // Dir "" = in memory
//	if err != nil { ... }
//	defer db.Close()
//	client, err := mongo.Connect(options.Client().
//		ApplyURI("mongodb://formwork").SetDialer(db.Dialer()))
//
// The server presents itself as the primary of a one-member replica set
// (unless Options.Standalone is set) so that drivers use sessions and
// retryable writes. Storage is Pebble: every acknowledged write of an
// on-disk database is synced before its reply.
//
// Everything else lives in engine/internal; this package is the only
// public surface of the engine.
package engine
