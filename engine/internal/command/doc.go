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
// Reads and writes go parse, plan, execute: a handler parses its fields
// into a typed value (findParams, countParams, distinctParams, updateStmt,
// deleteStmt, findAndModifyParams, aggregateParams), compiles the query
// (query.go), then runs it. What planning and running need besides the
// query (planner, server parameters, the operation to report to) travels
// in a queryEnv, never in the context; explain parses and plans the same
// way without running the command.
//
// Aggregation runs in package agg; aggHost (host.go) is its view of the
// database: reads through the planner, writes through the insert and
// update paths, $out by a temporary collection renamed over the target,
// and the server-state source stages. Views are catalog entries whose
// options hold viewOn and pipeline (view.go); find, count, distinct and
// aggregate run through the view's pipeline, writes fail with 166.
//
// Invariants:
//
//	I1. Every reply is {ok: 1, ...} or {ok: 0, errmsg, code, codeName};
//	    handlers return *mongoerr.Error values and never build error
//	    replies themselves.
//	I2. A retryable write (lsid + txnNumber) is executed at most once; a
//	    retry of the same pair returns the first reply.
//	I3. Cursors read the storage snapshot taken when they were opened.
//	I4. A command's let is evaluated once, with the command's $$NOW and
//	    $$CLUSTER_TIME, before any document is read.
//	I5. Every document an insert, update, findAndModify, $merge or $out
//	    stages passes validateWrite (validation.go) first: the
//	    collection's validator under its validationLevel and
//	    validationAction, unless the command set bypassDocumentValidation.
//	I6. With Config.Auth, no handler runs before authorize (authz.go)
//	    granted it: every registered command has an entry in authRules
//	    (authz_table.go), a missing one needs an action only root holds,
//	    and only the user that opened a cursor continues it. Users and
//	    roles live in admin.system.users/roles (auth_store.go), which
//	    ordinary writes cannot reach; passwords are never stored.
//
// The package does not recover panics: the server loop does.
package command
