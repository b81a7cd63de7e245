package storage

import (
	"bytes"
	"sort"

	"github.com/cockroachdb/pebble/v2"
)

// kvIter is what Records and Entries iterate: a Pebble iterator, or a
// transaction's merged view.
type kvIter interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	SeekGE(key []byte) bool
	Key() []byte
	Value() []byte
	ValueAndErr() ([]byte, error)
	Error() error
	Close() error
}

var _ kvIter = (*pebble.Iterator)(nil)

// ovEntry is one key a transaction set (v) or deleted (del).
type ovEntry struct {
	k   []byte
	v   []byte
	del bool
}

// overlay holds a transaction's own writes by key, with a sorted key
// list rebuilt when an iterator needs it after a change.
type overlay struct {
	m      map[string]ovEntry
	sorted []ovEntry
	dirty  bool
}

func (o *overlay) put(k, v []byte, del bool) {
	key := string(k)
	o.m[key] = ovEntry{k: []byte(key), v: append([]byte(nil), v...), del: del}
	o.dirty = true
}

// between returns the entries with keys in [lo, hi), sorted; a nil bound
// is open. The slice is not modified later.
func (o *overlay) between(lo, hi []byte) []ovEntry {
	if o.dirty || o.sorted == nil {
		s := make([]ovEntry, 0, len(o.m))
		for _, e := range o.m {
			s = append(s, e)
		}
		sort.Slice(s, func(i, j int) bool { return bytes.Compare(s[i].k, s[j].k) < 0 })
		o.sorted, o.dirty = s, false
	}
	s := o.sorted
	i := 0
	if lo != nil {
		i = sort.Search(len(s), func(n int) bool { return bytes.Compare(s[n].k, lo) >= 0 })
	}
	j := len(s)
	if hi != nil {
		j = sort.Search(len(s), func(n int) bool { return bytes.Compare(s[n].k, hi) >= 0 })
	}
	if j < i {
		j = i
	}
	return s[i:j:j]
}

// mergedIter merges a snapshot iterator with a transaction's writes; an
// overlay entry shadows the snapshot's value of the same key, and a
// deleted one hides it. It moves in one direction: First or SeekGE then
// Next, or Last then Prev.
type mergedIter struct {
	base      *pebble.Iterator
	ov        []ovEntry
	oi        int
	baseValid bool
	fromBase  bool
	valid     bool
	reverse   bool
	err       error
}

func (m *mergedIter) First() bool {
	m.reverse = false
	m.baseValid = m.base.First()
	m.oi = 0
	return m.fwd()
}

func (m *mergedIter) SeekGE(key []byte) bool {
	m.reverse = false
	m.baseValid = m.base.SeekGE(key)
	m.oi = sort.Search(len(m.ov), func(n int) bool { return bytes.Compare(m.ov[n].k, key) >= 0 })
	return m.fwd()
}

func (m *mergedIter) Last() bool {
	m.reverse = true
	m.baseValid = m.base.Last()
	m.oi = len(m.ov) - 1
	return m.rev()
}

func (m *mergedIter) Next() bool {
	if !m.valid {
		return false
	}
	if m.reverse {
		m.err, m.valid = errTxnIterDirection, false
		return false
	}
	if m.fromBase {
		m.baseValid = m.base.Next()
	} else {
		m.oi++
	}
	return m.fwd()
}

func (m *mergedIter) Prev() bool {
	if !m.valid {
		return false
	}
	if !m.reverse {
		m.err, m.valid = errTxnIterDirection, false
		return false
	}
	if m.fromBase {
		m.baseValid = m.base.Prev()
	} else {
		m.oi--
	}
	return m.rev()
}

// fwd settles on the smallest visible key at or after the positions.
func (m *mergedIter) fwd() bool {
	for {
		ov := m.oi < len(m.ov)
		if !m.baseValid && !ov {
			m.valid = false
			return false
		}
		c := 1
		switch {
		case !ov:
			c = -1
		case m.baseValid:
			c = bytes.Compare(m.base.Key(), m.ov[m.oi].k)
		}
		if c < 0 {
			m.fromBase, m.valid = true, true
			return true
		}
		if c == 0 {
			m.baseValid = m.base.Next()
		}
		if m.ov[m.oi].del {
			m.oi++
			continue
		}
		m.fromBase, m.valid = false, true
		return true
	}
}

// rev settles on the largest visible key at or before the positions.
func (m *mergedIter) rev() bool {
	for {
		ov := m.oi >= 0
		if !m.baseValid && !ov {
			m.valid = false
			return false
		}
		c := -1
		switch {
		case !ov:
			c = 1
		case m.baseValid:
			c = bytes.Compare(m.base.Key(), m.ov[m.oi].k)
		}
		if c > 0 {
			m.fromBase, m.valid = true, true
			return true
		}
		if c == 0 {
			m.baseValid = m.base.Prev()
		}
		if m.ov[m.oi].del {
			m.oi--
			continue
		}
		m.fromBase, m.valid = false, true
		return true
	}
}

func (m *mergedIter) Key() []byte {
	if m.fromBase {
		return m.base.Key()
	}
	return m.ov[m.oi].k
}

func (m *mergedIter) Value() []byte {
	if m.fromBase {
		return m.base.Value()
	}
	return m.ov[m.oi].v
}

func (m *mergedIter) ValueAndErr() ([]byte, error) {
	if m.fromBase {
		return m.base.ValueAndErr()
	}
	return m.ov[m.oi].v, nil
}

func (m *mergedIter) Error() error {
	if m.err != nil {
		return m.err
	}
	return m.base.Error()
}

func (m *mergedIter) Close() error { return m.base.Close() }
