package agg

import (
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// winMemory accounts the memory $setWindowFields holds for one
// partition: the buffered documents, the values its functions computed,
// and their states. It is reset at each partition.
type winMemory struct {
	limit int64
	used  int64 // documents and held values
	max   int64 // the most used at once, for explain
}

// addDoc charges a buffered document and reports whether the documents
// now exceed the limit: the caller then spills them to disk, or fails
// with errNoSpill.
func (m *winMemory) addDoc(n int64) bool {
	m.used += n
	m.note(m.used)
	return m.used >= m.limit
}

// errNoSpill is mongod's error for a partition past the memory limit
// without allowDiskUse (5643011).
func errNoSpill() error {
	return mongoerr.New(mongoerr.Code(5643011), "Exceeded max memory. Set 'allowDiskUse: true' to spill to disk")
}

// hold charges values a function keeps for the partition.
func (m *winMemory) hold(n int64) error {
	m.used += n
	return m.check(0)
}

// check fails with 5414201 when what is held plus extra (a function's
// state) exceeds the limit.
func (m *winMemory) check(extra int64) error {
	m.note(m.used + extra)
	if m.used+extra > m.limit {
		return mongoerr.Newf(mongoerr.Code(5414201), "Exceeded memory limit in DocumentSourceSetWindowFields, used %d bytes but max allowed is %d", m.used+extra, m.limit)
	}
	return nil
}

func (m *winMemory) note(n int64) {
	if n > m.max {
		m.max = n
	}
}

// reset forgets the partition that ended.
func (m *winMemory) reset() { m.used = 0 }

// errTooLargeWin is the error for a window value past the BSON limit.
func errTooLargeWin() error {
	return mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size is invalid: the document exceeds the maximum BSON size")
}
