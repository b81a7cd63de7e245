package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("commitTransaction", &spec{run: runCommitTransaction, adminOnly: true, apiV1: true, help: "commit a multi-document transaction"})
	register("abortTransaction", &spec{run: runAbortTransaction, adminOnly: true, apiV1: true, help: "abort a multi-document transaction"})
}

// runCommitTransaction commits the session's transaction in one batch,
// with the session's record. A retried commit of a committed transaction
// answers ok again.
// https://www.mongodb.com/docs/manual/reference/command/commitTransaction/
func runCommitTransaction(ctx context.Context, r *Request) (bson.D, error) {
	tx := r.txn
	if tx == nil {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "commitTransaction must be run within a transaction")
	}
	if tx.state == txnInProgress {
		if tx.timer != nil {
			tx.timer.Stop()
		}
		info := storage.TxnInfo{LSID: r.Generic.LSID, TxnNumber: tx.number}
		rec := durableSession{TxnNumber: tx.number, Committed: true}
		key := lsidKey(r.Generic.LSID)
		err := tx.st.Commit(info, func(w *storage.Writer) error { return rec.put(w, key) })
		if err != nil {
			tx.state = txnAborted
			r.Env.Cursors.killTxn(tx)
			return nil, writeErr(err)
		}
		tx.state = txnCommitted
		r.Env.Cursors.killTxn(tx)
		r.Env.clock.now()
	}
	d := bson.D{}
	if wce := r.Generic.WriteConcern.concernError(); wce != nil {
		d = append(d, bson.E{Key: "writeConcernError", Value: wce})
	}
	return d, nil
}

// runAbortTransaction discards the session's transaction.
// https://www.mongodb.com/docs/manual/reference/command/abortTransaction/
func runAbortTransaction(ctx context.Context, r *Request) (bson.D, error) {
	tx := r.txn
	if tx == nil {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "abortTransaction must be run within a transaction")
	}
	if tx.state == txnCommitted {
		return nil, mongoerr.Newf(mongoerr.TransactionCommitted, "Transaction with { txnNumber: %d } has been committed.", tx.number)
	}
	r.Env.abortTxn(r.Env.retry.session(r.Generic.LSID))
	d := bson.D{}
	if wce := r.Generic.WriteConcern.concernError(); wce != nil {
		d = append(d, bson.E{Key: "writeConcernError", Value: wce})
	}
	return d, nil
}
