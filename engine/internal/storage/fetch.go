package storage

import (
	"bytes"
	"errors"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// fetcher serves a Snapshot's Fetch calls. A point Get builds a fresh
// iterator stack over every memtable and level, so reading N documents
// through an index with N Gets costs several times a scan of the same
// documents. The fetcher answers a collection's first fetch with a Get
// (the common single-document find) and from the second on keeps one
// iterator per collection: fetches in record id order, which is what an
// index on a field that grows with insertion order yields, step with
// Next, and the others seek from where the iterator stands, reusing the
// blocks it holds.
type fetcher struct {
	src   source
	colls map[uint64]*fetchIter
}

// fetchIter is the iterator state of one collection.
type fetchIter struct {
	it   *pebble.Iterator // nil until the second fetch
	last int64            // record id it stands on; 0 when unpositioned
}

// get returns a copy of the document at rid in collection collID, or nil.
func (f *fetcher) get(collID uint64, rid int64) (bson.Raw, error) {
	fi := f.colls[collID]
	if fi == nil {
		if f.colls == nil {
			f.colls = map[uint64]*fetchIter{}
		}
		f.colls[collID] = &fetchIter{}
		return pointGet(f.src, recordKey(collID, rid))
	}
	if fi.it == nil {
		lo := recordPrefix(collID)
		it, err := f.src.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
		if err != nil {
			return nil, err
		}
		fi.it = it
	}
	key := recordKey(collID, rid)
	var ok bool
	if fi.last != 0 && rid == fi.last+1 {
		ok = fi.it.Next()
	} else {
		ok = fi.it.SeekGE(key)
	}
	if !ok {
		fi.last = 0
		return nil, fi.it.Error()
	}
	if !bytes.Equal(fi.it.Key(), key) {
		// The iterator stands on a later document; a following fetch of
		// rid+1 must seek rather than step past it.
		fi.last = 0
		return nil, nil
	}
	fi.last = rid
	v, err := fi.it.ValueAndErr()
	if err != nil {
		return nil, err
	}
	return rawCopy(v), nil
}

// close closes the iterators; the fetcher must not be used afterwards.
func (f *fetcher) close() error {
	var err error
	for _, fi := range f.colls {
		if fi.it != nil {
			if cerr := fi.it.Close(); err == nil {
				err = cerr
			}
		}
	}
	f.colls = nil
	return err
}

// pointGet returns a copy of the value at key, or nil when there is none.
func pointGet(src source, key []byte) (bson.Raw, error) {
	v, closer, err := src.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return rawCopy(v), nil
}
