package storage

import "go.mongodb.org/mongo-driver/v2/bson"

// TxnInfo names the multi-document transaction whose writes a Writer
// commits, so that the oplog records them as applyOps entries (one, or a
// chain past 16 MB: oplog_chain.go) carrying the session id and
// transaction number, as mongod's oplog does.
type TxnInfo struct {
	LSID      bson.Raw // the session's lsid document
	TxnNumber int64
}

// MarkTransaction tells the Writer that everything it stages is the commit
// of transaction t. Call it before staging the transaction's writes.
func (w *Writer) MarkTransaction(t TxnInfo) { w.txn = &t }

// Transaction reports the transaction this Writer commits, or nil.
func (w *Writer) Transaction() *TxnInfo { return w.txn }
