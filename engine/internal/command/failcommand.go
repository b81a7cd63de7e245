package command

import (
	"context"
	"github.com/formworkdb/formwork/engine/internal/admission"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// failCommandMsg is the errmsg of every error the failCommand failpoint
// raises.
const failCommandMsg = "Failing command via 'failCommand' failpoint"

// codeFailCommandClosed is the code mongod raises (and never sends) when
// failCommand closes the connection.
const codeFailCommandClosed mongoerr.Code = 50985

// runFailCommand runs h for r under the failCommand failpoint, as mongod's
// command path does: before the command the failpoint may block it,
// close the connection without a reply, or fail it with a code; after it,
// commands that take a write concern may get the configured
// writeConcernError. Errors and write concern errors get their
// errorLabels here: the failpoint's own when it set some, otherwise
// RetryableWriteError for a retryable error of a retryable write, as a
// replica set member adds it. Once shutdown began every command fails
// with ShutdownInProgress here, and each command's time is added to
// top's figures.
func (e *Env) runFailCommand(ctx context.Context, r *Request, h handler) (bson.D, error) {
	start := time.Now()
	defer func() { e.recordTop(r, time.Since(start)) }()
	if err := e.refuseDuringShutdown(r); err != nil {
		return nil, e.labelError(r, err, nil, false)
	}
	fp := e.fail.byName[failCommandFP]
	if !fp.enabled() {
		reply, err := e.runTransactionalWrite(ctx, r, h)
		return reply, e.labelError(r, err, nil, false)
	}
	var (
		labels      bson.A
		hasOverride bool
		err         error
	)
	var closeConn, block, hasCode bool
	var code int64
	data, on := fp.evaluate(func(d bson.Raw) bool {
		closeConn = fpBool(d, "closeConnection")
		block = fpBool(d, "blockConnection")
		code, hasCode = fpInt(d, "errorCode")
		return failCommandApplies(d, r) && (closeConn || block || hasCode)
	})
	if on {
		if v, lerr := data.LookupErr("errorLabels"); lerr == nil && v.Type == bson.TypeArray {
			hasOverride = true
			vals, _ := v.Array().Values()
			for _, l := range vals {
				labels = append(labels, l)
			}
		}
		err = failCommandFire(ctx, r, data, closeConn, block, hasCode, code)
	}
	var reply bson.D
	if err == nil {
		reply, err = e.runTransactionalWrite(ctx, r, h)
	}
	var wce bson.RawValue
	if supportsWriteConcern(r) {
		if d, on := fp.evaluate(func(d bson.Raw) bool {
			_, lerr := d.LookupErr("writeConcernError")
			return lerr == nil && failCommandApplies(d, r)
		}); on {
			wce = d.Lookup("writeConcernError")
		}
	}
	if wce.Type == 0 {
		return reply, e.labelError(r, err, labels, hasOverride)
	}
	var wcCode *mongoerr.Code
	if doc, ok := wce.DocumentOK(); ok {
		if c, ok := fpInt(doc, "code"); ok {
			cc := mongoerr.Code(c)
			wcCode = &cc
		}
	}
	if err != nil {
		if me, ok := asMongoErr(err); ok {
			err = e.labelError(r, me.With("writeConcernError", wce), labels, hasOverride)
		}
		return nil, err
	}
	reply = append(reply, bson.E{Key: "writeConcernError", Value: wce})
	if l := errorLabels(r, nil, wcCode, labels, hasOverride); len(l) > 0 {
		reply = append(reply, bson.E{Key: "errorLabels", Value: l})
	}
	return reply, nil
}

// failCommandFire acts out a failCommand that fired: block, then close or
// fail.
func failCommandFire(ctx context.Context, r *Request, data bson.Raw, closeConn, block, hasCode bool, code int64) error {
	if block {
		ms, ok := fpInt(data, "blockTimeMS")
		if !ok {
			return mongoerr.New(mongoerr.InvalidOptions, "must specify 'blockTimeMS' when 'blockConnection' is true")
		}
		if ms < 0 {
			return mongoerr.New(mongoerr.InvalidOptions, "'blockTimeMS' must be non-negative")
		}
		r.Env.log.Info("Blocking command via 'failCommand' failpoint", "command", r.Name, "blockTimeMS", ms)
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		resume := admission.Suspend(ctx)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			resume()
			return ctx.Err()
		}
		resume()
		r.Env.log.Info("Unblocking command via 'failCommand' failpoint", "command", r.Name)
	}
	if closeConn {
		r.Conn.closeRequested.Store(true)
		r.Env.log.Info("Failing command via 'failCommand' failpoint: closing connection", "command", r.Name)
		return mongoerr.New(codeFailCommandClosed, failCommandMsg)
	}
	if v, err := data.LookupErr("errorExtraInfo"); err == nil {
		extra, ok := v.DocumentOK()
		if !ok {
			return mongoerr.Newf(mongoerr.TypeMismatch, "\"errorExtraInfo\" had the wrong type. Expected object, found %s", typeName(v.Type))
		}
		me := mongoerr.New(mongoerr.Code(code), failCommandMsg)
		elems, _ := extra.Elements()
		for _, el := range elems {
			me = me.With(el.Key(), el.Value())
		}
		return me
	}
	if hasCode {
		return mongoerr.New(mongoerr.Code(code), failCommandMsg)
	}
	return nil
}

// failCommandApplies reports whether failCommand's data selects r: not
// configureFailPoint itself, the right thread, appName and namespace,
// and r's command named in failCommands (or failAllCommands). Every
// client of the engine is external, so failInternalCommands changes
// nothing.
func failCommandApplies(d bson.Raw, r *Request) bool {
	if r.Name == "configureFailPoint" {
		return false
	}
	if v, err := d.LookupErr("threadName"); err == nil {
		s, _ := v.StringValueOK()
		if s != "conn"+strconv.FormatInt(r.Conn.ID, 10) {
			return false
		}
	}
	if v, err := d.LookupErr("appName"); err == nil {
		s, _ := v.StringValueOK()
		if s != r.Conn.appName() {
			return false
		}
	}
	if v, err := d.LookupErr("namespace"); err == nil {
		s, _ := v.StringValueOK()
		if s != commandNS(r) {
			return false
		}
	}
	if _, err := d.LookupErr("failAllCommands"); err == nil {
		return true
	}
	v, err := d.LookupErr("failCommands")
	if err != nil {
		return false
	}
	list, ok := v.ArrayOK()
	if !ok {
		return false
	}
	vals, _ := list.Values()
	for _, c := range vals {
		if s, ok := c.StringValueOK(); ok && sameCommand(s, r.Name) {
			return true
		}
	}
	return false
}

// sameCommand reports whether name (as listed in failCommands) names the
// command canonical, through any of its aliases.
func sameCommand(name, canonical string) bool {
	if a, ok := aliases[name]; ok {
		name = a
	}
	if name == canonical {
		return true
	}
	// hello answers to isMaster and ismaster too.
	isHello := func(s string) bool { return s == "hello" || s == "isMaster" }
	return isHello(name) && isHello(canonical)
}

// commandNS is the namespace a command names: db.coll when its first
// value is a collection name, otherwise the database.
func commandNS(r *Request) string {
	if s, ok := r.Body.Index(0).Value().StringValueOK(); ok && s != "" {
		return r.DB + "." + s
	}
	return r.DB
}

// appName is the application name from the connection's handshake.
func (c *Conn) appName() string {
	if c.Client == nil {
		return ""
	}
	v, err := c.Client.LookupErr("application", "name")
	if err != nil {
		return ""
	}
	s, _ := v.StringValueOK()
	return s
}

// CloseRequested reports whether a command asked for the connection to be
// closed without a reply (failCommand's closeConnection); the server then
// drops it.
func (c *Conn) CloseRequested() bool { return c.closeRequested.Load() }

// writeConcernCommands take a write concern besides the retryable writes.
var writeConcernCommands = map[string]bool{
	"create": true, "drop": true, "dropDatabase": true, "createIndexes": true,
	"dropIndexes": true, "renameCollection": true, "collMod": true,
	"findAndModify": true, "applyOps": true, "insert": true, "update": true,
	"delete": true, "commitTransaction": true, "abortTransaction": true,
}

// supportsWriteConcern reports whether r's command accepts a write
// concern, so that failCommand's writeConcernError applies: writes, DDL,
// and an aggregate that writes with $out or $merge.
func supportsWriteConcern(r *Request) bool {
	if writeConcernCommands[r.Name] {
		return true
	}
	if r.Name != "aggregate" {
		return false
	}
	p, ok := r.Body.Lookup("pipeline").ArrayOK()
	if !ok {
		return false
	}
	vals, _ := p.Values()
	if len(vals) == 0 {
		return false
	}
	last, ok := vals[len(vals)-1].DocumentOK()
	if !ok {
		return false
	}
	first, err := last.IndexErr(0)
	return err == nil && (first.Key() == "$out" || first.Key() == "$merge")
}

// labelError adds errorLabels to err, a command's error: the failpoint's
// override when it had one, otherwise the labels mongod derives.
func (e *Env) labelError(r *Request, err error, override bson.A, hasOverride bool) error {
	if err == nil {
		return nil
	}
	me, ok := asMongoErr(err)
	if !ok {
		return err
	}
	l := errorLabels(r, &me.Code, nil, override, hasOverride)
	if len(l) == 0 {
		return err
	}
	return me.With("errorLabels", l)
}

// asMongoErr returns err's *mongoerr.Error when it is one.
func asMongoErr(err error) (*mongoerr.Error, bool) {
	me, ok := err.(*mongoerr.Error)
	return me, ok
}

// errorLabels returns the labels of a reply with the given error code and
// write concern error code, as mongod's ErrorLabelBuilder: a failpoint's
// labels replace them all; otherwise a retryable write (txnNumber without
// a transaction) whose error or write concern error is retryable gets
// RetryableWriteError.
func errorLabels(r *Request, code, wcCode *mongoerr.Code, override bson.A, hasOverride bool) bson.A {
	if hasOverride {
		return override
	}
	if r.Generic.TxnNumber == nil {
		return nil
	}
	if r.Generic.Autocommit != nil {
		return txnLabels(r, code, wcCode)
	}
	if (code != nil && retriableCode(*code)) || (wcCode != nil && retriableCode(*wcCode)) {
		return bson.A{"RetryableWriteError"}
	}
	return nil
}

// retriableCode reports whether c is in mongod's RetriableError category.
func retriableCode(c mongoerr.Code) bool {
	switch c {
	case mongoerr.HostUnreachable, mongoerr.HostNotFound, mongoerr.NetworkTimeout,
		mongoerr.ShutdownInProgress, mongoerr.PrimarySteppedDown, mongoerr.ExceededTimeLimit,
		mongoerr.SocketException, mongoerr.NotWritablePrimary, mongoerr.InterruptedAtShutdown,
		mongoerr.InterruptedDueToReplStateChange, mongoerr.NotPrimaryNoSecondaryOk,
		mongoerr.NotPrimaryOrSecondary, mongoerr.ReadConcernMajorityNotAvailableYet:
		return true
	}
	return false
}

// fpBool reads a boolean option of failpoint data; absent or not a
// boolean is false, as mongod's bsonExtractBooleanField check.
func fpBool(d bson.Raw, key string) bool {
	v, err := d.LookupErr(key)
	if err != nil {
		return false
	}
	b, ok := v.BooleanOK()
	return ok && b
}

// fpInt reads an integral number option of failpoint data.
func fpInt(d bson.Raw, key string) (int64, bool) {
	v, err := d.LookupErr(key)
	if err != nil || !isNumber(v) {
		return 0, false
	}
	return asInt(v)
}

// retryableWriteCommands are the commands that run as retryable writes
// when sent with lsid and txnNumber.
var retryableWriteCommands = map[string]bool{"insert": true, "update": true, "delete": true, "findAndModify": true}

// runTransactionalWrite runs h under the onPrimaryTransactionalWrite
// failpoint, which only retryable writes reach. mongod evaluates it per
// statement as the statement is recorded; here it is evaluated once per
// command, which is the same for the first statement (times: n counts
// commands).
//
// Divergence: a command of several statements consumes one time, not
// one per statement, and all of its statements commit before the
// connection closes; the retry finds them all done.
func (e *Env) runTransactionalWrite(ctx context.Context, r *Request, h handler) (bson.D, error) {
	fp := e.fail.byName[onPrimaryTransactionalWriteFP]
	if r.Generic.TxnNumber == nil || r.Generic.LSID == nil || r.Generic.Autocommit != nil || !retryableWriteCommands[r.Name] || !fp.enabled() {
		return h(ctx, r)
	}
	// A retry of a write already done is answered from the session's
	// record without recording a statement: the failpoint is not reached.
	if e.retry.executed(r.Generic.LSID, *r.Generic.TxnNumber) {
		return h(ctx, r)
	}
	data, on := fp.evaluate(nil)
	if !on {
		return h(ctx, r)
	}
	closeConn := true
	if v, err := data.LookupErr("closeConnection"); err == nil {
		b, _ := v.BooleanOK()
		closeConn = b
	}
	if closeConn {
		r.Conn.closeRequested.Store(true)
	}
	if v, err := data.LookupErr("failBeforeCommitExceptionCode"); err == nil {
		code, _ := numberOf(v)
		return nil, mongoerr.Newf(mongoerr.Code(int32(code)), "Failing write for %x:%d due to failpoint. The write must not be reflected.", lsidKey(r.Generic.LSID), *r.Generic.TxnNumber)
	}
	return h(ctx, r)
}

// executed reports whether the session's write txn already completed, so
// that a retry of it is answered from the record.
func (c *retryCache) executed(lsid bson.Raw, txn int64) bool {
	c.mu.Lock()
	s := c.sessions[lsidKey(lsid)]
	c.mu.Unlock()
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txn == txn && s.done
}
