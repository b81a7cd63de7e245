package command

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// Request is one command as a handler sees it.
type Request struct {
	Env  *Env
	Conn *Conn
	// DB is the target database ($db).
	DB string
	// Name is the command's canonical name.
	Name string
	// Body is the command document, document sequences merged in.
	Body bson.Raw
	// Generic holds the arguments every command accepts.
	Generic Generic
	// start is when the command began: its $$NOW.
	start time.Time
	// op is the operation's state that its queries report examined keys
	// and documents to (the profiler reads it); nil under explain.
	op *opState
	// bypassValidation is the command's bypassDocumentValidation.
	bypassValidation bool
	// letSpec is the command's let as sent (parseLet), which a write
	// statement evaluates again under its collation (letWithCollation).
	letSpec bson.RawValue
	// password is createUser's or updateUser's pwd, taken out of Body so
	// that the profiler, currentOp and logs see "xxx" (hidePassword).
	password *string
	// txn is the multi-document transaction the command runs in, or nil.
	txn *txnRun
	// snapView and snapTime serve a snapshot read outside a transaction
	// (snapshot_read.go).
	snapView *storage.Txn
	snapTime bson.Timestamp
	// retryMark, for a retryable write, stages the session's record in
	// the write's batch (retry.go); nil otherwise.
	retryMark func(w *storage.Writer) error
}

// handler runs one command and returns the reply fields besides ok.
type handler func(ctx context.Context, r *Request) (bson.D, error)

// spec describes one command.
type spec struct {
	run handler
	// write marks commands that are retryable writes (I2).
	write bool
	// adminOnly commands must be sent to the admin database.
	adminOnly bool
	// apiV1 marks commands that belong to Stable API version 1.
	apiV1 bool
	// testOnly commands exist only with Config.EnableTestCommands.
	testOnly bool
	help     string
}

var table = map[string]*spec{}

// aliases maps alternative spellings to the canonical name.
var aliases = map[string]string{
	"ismaster":      "isMaster",
	"buildinfo":     "buildInfo",
	"findandmodify": "findAndModify",
}

func register(name string, s *spec) { table[name] = s }

// Dispatch runs the command in body (document sequences already merged)
// for conn and returns its reply document. Errors become error replies;
// nothing is returned as a Go error.
func (e *Env) Dispatch(ctx context.Context, conn *Conn, body bson.Raw) bson.Raw {
	reply, err := e.dispatch(ctx, conn, body)
	if err != nil {
		me := mongoerr.As(err)
		if me.Code == mongoerr.InternalError {
			e.log.Error("command failed", "err", err)
		}
		reply = me.Reply()
	} else {
		reply = append(bson.D{{Key: "ok", Value: 1.0}}, reply...)
		// ok goes last in mongod's replies, after the command's fields.
		reply = append(reply[1:], reply[0])
	}
	if !e.Config.Standalone {
		ts := e.clock.current()
		reply = append(reply,
			bson.E{Key: "$clusterTime", Value: bson.D{
				{Key: "clusterTime", Value: ts},
				{Key: "signature", Value: bson.D{
					{Key: "hash", Value: bson.Binary{Data: make([]byte, 20)}},
					{Key: "keyId", Value: int64(0)},
				}},
			}},
			bson.E{Key: "operationTime", Value: ts})
	}
	out, merr := bson.Marshal(reply)
	if merr != nil {
		e.log.Error("marshal reply", "err", merr)
		out, _ = bson.Marshal(mongoerr.Newf(mongoerr.InternalError, "cannot encode reply: %v", merr).Reply())
	}
	return out
}

func (e *Env) dispatch(ctx context.Context, conn *Conn, body bson.Raw) (bson.D, error) {
	first, err := body.IndexErr(0)
	if err != nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Empty command object")
	}
	name := first.Key()
	if a, ok := aliases[name]; ok {
		name = a
	}
	s, ok := table[name]
	if !ok || (s.testOnly && !e.Config.EnableTestCommands) {
		return nil, mongoerr.Newf(mongoerr.CommandNotFound, "no such command: '%s'", first.Key())
	}
	r := &Request{Env: e, Conn: conn, Name: name, Body: body, start: time.Now()}
	if err := r.Generic.parse(body); err != nil {
		return nil, err
	}
	r.DB = r.Generic.DB
	if r.DB == "" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "OP_MSG requests require a $db argument")
	}
	if err := validDBName(r.DB); err != nil {
		return nil, err
	}
	if s.adminOnly && r.DB != "admin" {
		return nil, mongoerr.Newf(mongoerr.Unauthorized, "%s may only be run against the admin database.", name)
	}
	if err := e.authorize(r); err != nil {
		return nil, err
	}
	if r.Generic.APIStrict && !s.apiV1 {
		return nil, mongoerr.Newf(mongoerr.APIStrictError, "Provided apiStrict:true, but the command %s is not in API Version 1. Information on supported commands and migrations in API Version 1 can be found at https://www.mongodb.com/docs/manual/reference/stable-api", name)
	}
	if r.Generic.APIStrict && (name == "insert" || name == "update" || name == "delete" || name == "findAndModify") {
		if coll, ok := body.Index(0).Value().StringValueOK(); ok && coll == "system.js" {
			return nil, mongoerr.Newf(mongoerr.APIStrictError, "Provided apiStrict:true, but the command %s attempts to write to system.js", name)
		}
	}
	// A getMore's maxTimeMS is how long an awaitData cursor waits for new
	// data (changestream_getmore.go), not a deadline on the work.
	if r.Generic.MaxTimeMS > 0 && name != "getMore" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(r.Generic.MaxTimeMS)*time.Millisecond)
		defer cancel()
	}
	e.countOp(opKind(name))
	op := e.beginOp(r)
	r.op = op
	start := time.Now()
	r.start = start
	run := s.run
	if s.write && r.Generic.TxnNumber != nil && r.Generic.LSID != nil && r.Generic.Autocommit == nil {
		run = func(ctx context.Context, r *Request) (bson.D, error) { return e.retry.run(ctx, r, s.run) }
	}
	if r.Generic.StartTransaction || r.Generic.Autocommit != nil || r.Generic.startGiven || txnControl(name) {
		// The transaction is found (or begun) inside the command, after
		// failCommand had its say, as mongod checks out the session.
		run = e.txnRun(run)
	}
	if err := e.waitAfterClusterTime(ctx, r.Generic.AfterClusterTime); err != nil {
		return nil, err
	}
	if r.Generic.ReadConcernLevel == "snapshot" && r.Generic.Autocommit == nil && !r.Generic.startGiven {
		if err := e.snapshotRead(r); err != nil {
			return nil, err
		}
	}
	ctx, finish := e.inprog.begin(ctx, r)
	if r.Generic.LSID != nil {
		if err := e.sessions.touch(r.Generic.LSID, start); err != nil {
			finish()
			return nil, err
		}
	}
	reply, err := e.runAdmitted(ctx, r, run)
	if err == nil {
		e.afterAuthorized(r, reply)
	}
	if finish() && err != nil {
		err = mongoerr.New(mongoerr.Interrupted, "operation was interrupted")
	}
	e.endOp(op, r, reply, err, time.Since(start))
	e.stats.observe(name, r.Body, reply, err)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, mongoerr.New(mongoerr.MaxTimeMSExpired, "operation exceeded time limit")
	}
	if err == nil {
		reply = r.withAtClusterTime(reply)
	}
	if err == nil && s.write {
		// A write moves the cluster time that replies report as
		// operationTime and $clusterTime.
		e.clock.now()
	}
	return reply, err
}

func opKind(name string) string {
	switch name {
	case "insert", "update", "delete", "getMore":
		return strings.ToLower(name)
	case "find", "count", "distinct", "aggregate":
		return "query"
	}
	return "command"
}
