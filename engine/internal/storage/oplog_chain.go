package storage

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// A committed transaction is logged as applyOps entries, as mongod 4.2+
// logs an unprepared transaction: one entry when its operations fit in
// maxApplyOpsBytes, else a chain. Each entry of a chain carries the
// session's lsid and txnNumber, its own ts, and prevOpTime, the optime of
// the entry before it ({ts: Timestamp(0, 0), t: -1} for the first); every
// entry but the last has o.partialTxn: true, and the last (the implicit
// commit) has o.count, the number of operations of the whole
// transaction. The change stream images of the transaction's writes are
// kept under the last entry's ts and the write's index in the whole
// transaction.
//
// OplogFrom hides chains: it skips the partialTxn entries and returns the
// last entry of a chain with o.applyOps holding every operation of the
// transaction, in order, so a reader sees one applyOps entry per
// transaction at its commit time whatever its size.

// maxApplyOpsBytes bounds the operations one applyOps entry carries: a
// transaction's next operation that would take its entry past the BSON
// document limit (16 MB) starts a new entry.
const maxApplyOpsBytes = 16 * 1024 * 1024

// maxTxnChain bounds how many entries OplogFrom follows back from the end
// of a chain (a chain of more would have staged over 64 GB).
const maxTxnChain = 1 << 12

// splitTxnOps cuts ops into the runs that share an applyOps entry.
func splitTxnOps(ops []pendingOp) [][]pendingOp {
	var out [][]pendingOp
	start, size := 0, 0
	for i, op := range ops {
		// An array element costs its type byte, index key and framing.
		n := len(op.fields) + 16
		if i > start && size+n > maxApplyOpsBytes {
			out = append(out, ops[start:i])
			start, size = i, 0
		}
		size += n
	}
	return append(out, ops[start:])
}

// flushTxn stages the applyOps entries (one, or a chain) of the
// transaction the Writer commits, and the images of its writes.
func (w *Writer) flushTxn(ops []pendingOp, now time.Time) error {
	chunks := splitTxnOps(ops)
	var ts, prev bson.Timestamp
	for ci, chunk := range chunks {
		ts = w.s.oplog.clock.Tick()
		arr := bsoncore.NewArrayBuilder()
		for _, op := range chunk {
			arr.AppendDocument(frameDoc(op.fields))
		}
		ob := bsoncore.NewDocumentBuilder().AppendArray("applyOps", arr.Build())
		switch {
		case ci < len(chunks)-1:
			ob.AppendBoolean("partialTxn", true)
		case len(chunks) > 1:
			ob.AppendInt64("count", int64(len(ops)))
		}
		var d []byte
		d = bsoncore.AppendDocumentElement(d, "lsid", w.txn.LSID)
		d = bsoncore.AppendInt64Element(d, "txnNumber", w.txn.TxnNumber)
		d = bsoncore.AppendStringElement(d, "op", "c")
		d = bsoncore.AppendStringElement(d, "ns", "admin.$cmd")
		d = bsoncore.AppendDocumentElement(d, "o", ob.Build())
		d = appendEntryTail(d, ts, now)
		term := int64(1)
		if ci == 0 {
			term = -1
		}
		po := bsoncore.NewDocumentBuilder().AppendTimestamp("ts", prev.T, prev.I).AppendInt64("t", term).Build()
		d = bsoncore.AppendDocumentElement(d, "prevOpTime", po)
		if err := w.putOplogEntry(ts, frameDoc(d)); err != nil {
			return err
		}
		prev = ts
	}
	for i, op := range ops {
		if err := w.putImages(ts, i, op); err != nil {
			return err
		}
	}
	return nil
}

// chainKind says what place an oplog entry has in a transaction chain.
type chainKind int

const (
	chainNone    chainKind = iota // not part of a chain
	chainPartial                  // an entry with partialTxn: true
	chainEnd                      // the last entry of a chain of several
)

// txnChainKind classifies the oplog entry v.
func txnChainKind(v bson.Raw) chainKind {
	op, err := v.LookupErr("op")
	if err != nil || op.Type != bson.TypeString || op.StringValue() != "c" {
		return chainNone
	}
	o, err := v.LookupErr("o")
	if err != nil || o.Type != bson.TypeEmbeddedDocument {
		return chainNone
	}
	od := o.Document()
	if _, err := od.LookupErr("applyOps"); err != nil {
		return chainNone
	}
	if p, err := od.LookupErr("partialTxn"); err == nil && p.Type == bson.TypeBoolean && p.Boolean() {
		return chainPartial
	}
	if t, i, ok := prevOpTS(v); ok && (t != 0 || i != 0) {
		return chainEnd
	}
	return chainNone
}

// prevOpTS returns the ts of entry v's prevOpTime.
func prevOpTS(v bson.Raw) (uint32, uint32, bool) {
	p, err := v.LookupErr("prevOpTime", "ts")
	if err != nil {
		return 0, 0, false
	}
	return p.TimestampOK()
}

// oplogIter is the iterator of OplogFrom: it skips the partialTxn entries
// of transaction chains and gives the last entry of a chain as one entry
// with every operation of the transaction.
type oplogIter struct {
	kvIter
	src    source
	collID uint64
	// whole is the assembled value of the current entry, or nil when the
	// entry is not the end of a chain.
	whole []byte
	err   error
}

func (m *oplogIter) First() bool { return m.settle(m.kvIter.First(), false) }
func (m *oplogIter) Last() bool  { return m.settle(m.kvIter.Last(), true) }
func (m *oplogIter) Next() bool  { return m.settle(m.kvIter.Next(), false) }
func (m *oplogIter) Prev() bool  { return m.settle(m.kvIter.Prev(), true) }

func (m *oplogIter) SeekGE(key []byte) bool { return m.settle(m.kvIter.SeekGE(key), false) }

// settle moves past partialTxn entries and assembles the end of a chain.
func (m *oplogIter) settle(ok, reverse bool) bool {
	m.whole = nil
	for ok {
		v, err := m.kvIter.ValueAndErr()
		if err != nil {
			m.err = err
			return false
		}
		switch txnChainKind(v) {
		case chainPartial:
			if reverse {
				ok = m.kvIter.Prev()
			} else {
				ok = m.kvIter.Next()
			}
			continue
		case chainEnd:
			whole, err := m.assemble(bson.Raw(v))
			if err != nil {
				m.err = err
				return false
			}
			m.whole = whole
		}
		return true
	}
	return false
}

// assemble returns the last entry of a chain with o.applyOps holding the
// operations of every entry of the chain, first entry first.
func (m *oplogIter) assemble(last bson.Raw) ([]byte, error) {
	entries := []bson.Raw{last}
	cur := last
	for n := 0; ; n++ {
		t, i, ok := prevOpTS(cur)
		if !ok || (t == 0 && i == 0) {
			break
		}
		if n >= maxTxnChain {
			return nil, mongoerr.New(mongoerr.InternalError, "transaction oplog chain is too long")
		}
		prev, err := pointGet(m.src, recordKey(m.collID, PackTS(bson.Timestamp{T: t, I: i})))
		if err != nil {
			return nil, err
		}
		if prev == nil {
			return nil, mongoerr.New(mongoerr.ChangeStreamHistoryLost, "Resume of change stream was not possible, as the resume point may no longer be in the oplog.")
		}
		entries = append(entries, prev)
		cur = prev
	}
	arr := bsoncore.NewArrayBuilder()
	for k := len(entries) - 1; k >= 0; k-- {
		ops, ok := entries[k].Lookup("o", "applyOps").ArrayOK()
		if !ok {
			continue
		}
		vals, err := ops.Values()
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			arr.AppendValue(bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
	}
	o := bsoncore.NewDocumentBuilder().AppendArray("applyOps", arr.Build()).Build()
	elems, err := last.Elements()
	if err != nil {
		return nil, err
	}
	var d []byte
	for _, e := range elems {
		if e.Key() == "o" {
			d = bsoncore.AppendDocumentElement(d, "o", o)
			continue
		}
		d = append(d, e...)
	}
	return frameDoc(d), nil
}

func (m *oplogIter) Value() []byte {
	if m.whole != nil {
		return m.whole
	}
	return m.kvIter.Value()
}

func (m *oplogIter) ValueAndErr() ([]byte, error) {
	if m.whole != nil {
		return m.whole, nil
	}
	return m.kvIter.ValueAndErr()
}

func (m *oplogIter) Error() error {
	if m.err != nil {
		return m.err
	}
	return m.kvIter.Error()
}
