package command

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// txnAllowed are the commands a multi-document transaction may run
// (mongod's transaction allowlist for a replica set member).
// https://www.mongodb.com/docs/manual/core/transactions-operations/
var txnAllowed = map[string]bool{
	"abortTransaction": true, "commitTransaction": true, "aggregate": true,
	"create": true, "createIndexes": true, "delete": true, "distinct": true,
	"find": true, "findAndModify": true, "getMore": true, "insert": true,
	"killCursors": true, "update": true, "bulkWrite": true,
}

// txnNamespaceAllowed rejects transaction statements on the config and
// local databases, on admin (where only commit and abort run), and writes
// to system collections.
func txnNamespaceAllowed(r *Request) error {
	switch r.DB {
	case "config", "local":
		return mongoerr.Newf(mongoerr.OperationNotSupportedInTransaction, "Cannot run command against the '%s' database in a transaction.", r.DB)
	case "admin":
		if !txnControl(r.Name) {
			return mongoerr.Newf(mongoerr.OperationNotSupportedInTransaction, "Cannot run command against the '%s' database in a transaction.", r.DB)
		}
	}
	switch r.Name {
	case "insert", "update", "delete", "findAndModify", "create", "createIndexes":
		coll, _ := r.Body.Index(0).Value().StringValueOK()
		if strings.HasPrefix(coll, "system.") {
			return mongoerr.Newf(mongoerr.OperationNotSupportedInTransaction, "Cannot write to system collection %s.%s within a transaction.", r.DB, coll)
		}
		if r.Name == "create" {
			if _, err := r.Body.LookupErr("viewOn"); err == nil {
				return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create a view in a multi-document transaction.")
			}
			if _, err := r.Body.LookupErr("timeseries"); err == nil {
				return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create a time-series collection in a multi-document transaction.")
			}
		}
		if r.Env.tsColl(r.DB+"."+coll) != nil {
			return mongoerr.Newf(mongoerr.OperationNotSupportedInTransaction, "Cannot write to time-series collection %s.%s in a multi-document transaction.", r.DB, coll)
		}
	case "aggregate":
		if stage := lastStageName(r.Body); stage == "$out" || stage == "$merge" {
			return mongoerr.Newf(mongoerr.OperationNotSupportedInTransaction, "%s cannot be used in a transaction", stage)
		}
	}
	return nil
}

// lastStageName returns the name of an aggregate's last stage, or "".
func lastStageName(body bson.Raw) string {
	p, ok := body.Lookup("pipeline").ArrayOK()
	if !ok {
		return ""
	}
	vals, _ := p.Values()
	if len(vals) == 0 {
		return ""
	}
	last, ok := vals[len(vals)-1].DocumentOK()
	if !ok {
		return ""
	}
	first, err := last.IndexErr(0)
	if err != nil {
		return ""
	}
	return first.Key()
}

// txnReadConcernAllowed checks the read concern of a transaction's first
// statement: local, majority or snapshot.
func txnReadConcernAllowed(g *Generic) error {
	switch g.ReadConcernLevel {
	case "", "local", "majority", "snapshot":
		return nil
	}
	return mongoerr.New(mongoerr.InvalidOptions, "The readConcern level must be either 'local' (default), 'majority' or 'snapshot' in order to run in a transaction")
}

// txnCreateIndexAllowed enforces 4.4's rule for createIndexes in a
// transaction: only on a collection that does not exist or that the
// transaction itself created.
func (r *Request) txnCreateIndexAllowed(ns string) error {
	if r.txn == nil {
		return nil
	}
	c := r.Env.Store.Collection(ns)
	if c == nil {
		return nil
	}
	if tc := r.txn.st.Collection(ns); tc != nil && tc.ID != c.ID {
		return nil
	}
	return mongoerr.Newf(mongoerr.OperationNotSupportedInTransaction, "Cannot create new indexes on existing collection %s in a multi-document transaction.", ns)
}

// transientTxnCode reports whether an error with code c gets the
// TransientTransactionError label (mongod's isTransientTransactionError):
// commit and abort get it for NoSuchTransaction only without a write
// concern error.
func transientTxnCode(c mongoerr.Code, control, hasWCE bool) bool {
	switch c {
	case mongoerr.WriteConflict, mongoerr.SnapshotUnavailable, mongoerr.Code(24) /* LockTimeout */, mongoerr.Code(267) /* PreparedTransactionInProgress */, mongoerr.Code(239) /* SnapshotTooOld */ :
		return true
	case mongoerr.NoSuchTransaction:
		return !control || !hasWCE
	case mongoerr.NotWritablePrimary, mongoerr.NotPrimaryNoSecondaryOk, mongoerr.NotPrimaryOrSecondary,
		mongoerr.InterruptedDueToReplStateChange, mongoerr.PrimarySteppedDown:
		// A statement (not commit or abort) that failed because the node
		// is no longer primary left nothing behind.
		return !control
	}
	return false
}

// unknownCommitResult reports whether a commitTransaction that failed
// with code c (or whose write concern failed with wc) may or may not have
// committed: the UnknownTransactionCommitResult label.
func unknownCommitResult(code, wc *mongoerr.Code) bool {
	if code != nil && (retriableCode(*code) || *code == mongoerr.MaxTimeMSExpired || *code == mongoerr.ExceededTimeLimit) {
		return true
	}
	if wc != nil && *wc != mongoerr.UnsatisfiableWriteConcern && *wc != mongoerr.UnknownReplWriteConcern {
		return true
	}
	return false
}

// txnLabels returns the labels of a transaction statement's error or
// write concern error.
func txnLabels(r *Request, code, wc *mongoerr.Code) bson.A {
	var l bson.A
	control := txnControl(r.Name)
	if code != nil && transientTxnCode(*code, control, wc != nil) {
		l = append(l, "TransientTransactionError")
	}
	if control && ((code != nil && retriableCode(*code)) || (wc != nil && retriableCode(*wc))) {
		l = append(l, "RetryableWriteError")
	}
	if r.Name == "commitTransaction" && unknownCommitResult(code, wc) {
		l = append(l, "UnknownTransactionCommitResult")
	}
	return l
}

// createIndexesInTxn creates indexes on a collection the transaction
// itself created (txnCreateIndexAllowed): staged in the transaction's
// batch like its documents, so they appear at commit, built at once since
// nobody else can see the collection yet.
func createIndexesInTxn(r *Request, ns string, specs []index.Spec) (before, after int, created bool, err error) {
	// It runs in a transaction, where a write stages and never waits.
	err = r.write(context.Background(), func(w *storage.Writer) error {
		c := w.Collection(ns)
		if c == nil {
			var err error
			if c, err = w.CreateCollection(ns, nil); err != nil {
				return err
			}
			created = true
		}
		before = len(c.Indexes)
		todo, err := specsToBuild(c, specs)
		if err != nil {
			return err
		}
		for _, sp := range todo {
			if _, err := w.CreateIndex(ns, sp); err != nil {
				return writeErr(err)
			}
		}
		after = len(w.Collection(ns).Indexes)
		return nil
	})
	return before, after, created, err
}
