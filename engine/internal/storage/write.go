package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// DuplicateKeyError reports a unique index violation. The command layer
// turns it into MongoDB's DuplicateKey error with keyPattern and keyValue.
type DuplicateKeyError struct {
	Coll  *Collection
	Index *Index
	Doc   bson.Raw // the document whose insertion or update collided
	Key   []byte   // the encoded key that collided
}

// MongoError returns mongod's E11000 error with keyPattern and keyValue.
func (e *DuplicateKeyError) MongoError() *mongoerr.Error {
	return e.Index.Def.DuplicateKeyError(e.Coll.NS, e.Doc, e.Key)
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key in %s index %s", e.Coll.NS, e.Index.Name)
}

// Writer stages changes in one batch. Everything a Writer does becomes
// visible atomically when the function given to Store.Write returns nil.
// A Writer is used by one goroutine and is valid only inside that function.
type Writer struct {
	s       *Store
	b       *pebble.Batch
	pending map[string]*Collection // ns → new definition, nil when dropped
	// early marks pending entries that only add multikey paths: they are
	// published before the batch commits (I6).
	early map[string]bool
	// oplog holds the entries this batch logs (oplog.go).
	oplog oplogBuf
	// probe answers unique-key probes without a Batch.Get per key (I9).
	probe uniqueProbe
	// kbuf is scratch space for keys handed to the batch, which copies
	// them, and to probes, which do not keep them.
	kbuf []byte
	// txn names the transaction this batch commits, or nil (MarkTransaction).
	txn *TxnInfo
	// view is the transaction this Writer stages for, or nil (Txn.Stage).
	view *Txn
	// wait stops the Writer at documents open transactions hold (txnwait.go).
	wait writeWait
	// ikeys and imks are Insert's scratch space for index keys.
	ikeys [][][]byte
	imks  []index.Multikey
}

// Collection returns ns as this writer sees it, or nil.
func (w *Writer) Collection(ns string) *Collection {
	if c, ok := w.pending[ns]; ok {
		return c
	}
	return w.s.Collection(ns)
}

func (w *Writer) putCatalog(c *Collection) error {
	b, err := c.encode()
	if err != nil {
		return err
	}
	w.pending[c.NS] = c
	return w.b.Set(catalogKey(c.NS), b, nil)
}

// CreateCollection creates ns with the given options (already validated)
// and its _id index. It returns NamespaceExists when ns exists.
func (w *Writer) CreateCollection(ns string, options bson.Raw) (*Collection, error) {
	if w.Collection(ns) != nil {
		return nil, mongoerr.Newf(mongoerr.NamespaceExists, "Collection %s already exists.", ns)
	}
	db, name := SplitNS(ns)
	id := w.s.nextCollID // guarded by wmu, which Write holds
	w.s.nextCollID++
	if options == nil {
		options = emptyDoc
	}
	c := &Collection{NS: ns, DB: db, Name: name, ID: id, UUID: newUUID(), Options: rawCopy(options), nextIndexID: 1}
	ix, err := newIndex(c.nextIndexID, idIndexSpecFor(options))
	if err != nil {
		return nil, err
	}
	c.nextIndexID++
	c.Indexes = []*Index{ix}
	w.logCreate(c)
	return c, w.putCatalog(c)
}

// EnsureCollection returns ns, creating it with default options when it
// does not exist (MongoDB's implicit creation on first write).
func (w *Writer) EnsureCollection(ns string) (*Collection, error) {
	if c := w.Collection(ns); c != nil {
		return c, nil
	}
	return w.CreateCollection(ns, nil)
}

// DropCollection removes ns, its documents and its index entries. It
// returns NamespaceNotFound when ns does not exist.
func (w *Writer) DropCollection(ns string) error {
	c := w.Collection(ns)
	if c == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns not found")
	}
	rp := recordPrefix(c.ID)
	if err := w.b.DeleteRange(rp, prefixEnd(rp), nil); err != nil {
		return err
	}
	ip := collIndexPrefix(c.ID)
	if err := w.b.DeleteRange(ip, prefixEnd(ip), nil); err != nil {
		return err
	}
	w.markSlow(c.ID)
	w.pending[ns] = nil
	w.logDrop(c)
	return w.b.Delete(catalogKey(ns), nil)
}

// RenameCollection gives collection from the name to, keeping its data
// and indexes. The caller checks that to does not exist or drops it first.
func (w *Writer) RenameCollection(from, to string) error {
	c := w.Collection(from)
	if c == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "source namespace does not exist")
	}
	n := *c
	n.NS = to
	n.DB, n.Name = SplitNS(to)
	if err := w.b.Delete(catalogKey(from), nil); err != nil {
		return err
	}
	w.pending[from] = nil
	w.logRename(c, to)
	return w.putCatalog(&n)
}

// SetOptions replaces the stored create options of ns (collMod).
func (w *Writer) SetOptions(ns string, options bson.Raw) error {
	c := w.Collection(ns)
	if c == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
	}
	n := *c
	n.Options = rawCopy(options)
	w.logCollMod(c, options)
	return w.putCatalog(&n)
}

// Insert stores doc in c and adds its index entries. On error nothing is
// staged. It returns the new record id.
func (w *Writer) Insert(c *Collection, doc bson.Raw) (int64, error) {
	keys, mks, err := w.insertKeys(c, doc)
	if err != nil {
		return 0, err
	}
	for i, ix := range c.Indexes {
		if err := w.checkUnique(c, ix, keys[i], -1, doc); err != nil {
			return 0, err
		}
	}
	rid := w.nextRID(c)
	w.noteSide(c.ID, rid)
	w.kbuf = appendRecordKey(w.kbuf[:0], c.ID, rid)
	if err := w.b.Set(w.kbuf, doc, nil); err != nil {
		return 0, err
	}
	for i, ix := range c.Indexes {
		for _, k := range keys[i] {
			if err := w.putEntry(c, ix, k, rid); err != nil {
				return 0, err
			}
		}
	}
	w.logInsert(c, doc)
	return rid, w.noteMultikey(c, mks)
}

// Update replaces the document at rid (currently old) with doc, adjusting
// index entries that changed. On error nothing is staged. old must be the
// record as stored: its keys are computed without validating it again.
func (w *Writer) Update(c *Collection, rid int64, old, doc bson.Raw) error {
	if w.heldRecord(c.ID, rid) {
		return errHeld
	}
	oldKeys, _, err := w.storedKeys(c, old)
	if err != nil {
		return err
	}
	newKeys, mks, err := w.indexKeys(c, doc)
	if err != nil {
		return err
	}
	added := make([][][]byte, len(c.Indexes))
	removed := make([][][]byte, len(c.Indexes))
	for i, ix := range c.Indexes {
		added[i] = minus(newKeys[i], oldKeys[i])
		removed[i] = minus(oldKeys[i], newKeys[i])
		if err := w.checkUnique(c, ix, added[i], rid, doc); err != nil {
			return err
		}
	}
	w.noteSide(c.ID, rid)
	w.kbuf = appendRecordKey(w.kbuf[:0], c.ID, rid)
	if err := w.b.Set(w.kbuf, doc, nil); err != nil {
		return err
	}
	for i, ix := range c.Indexes {
		for _, k := range removed[i] {
			if err := w.deleteEntry(c, ix, k, rid); err != nil {
				return err
			}
		}
		for _, k := range added[i] {
			if err := w.putEntry(c, ix, k, rid); err != nil {
				return err
			}
		}
	}
	if w.view != nil && w.oplog.replaceNext {
		w.view.markReplace(recordKey(c.ID, rid))
	}
	w.logUpdate(c, old, doc)
	return w.noteMultikey(c, mks)
}

// Delete removes the document at rid (currently doc, as stored) and its
// entries.
func (w *Writer) Delete(c *Collection, rid int64, doc bson.Raw) error {
	if w.heldRecord(c.ID, rid) {
		return errHeld
	}
	keys, _, err := w.storedKeys(c, doc)
	if err != nil {
		return err
	}
	w.noteSide(c.ID, rid)
	if err := w.b.Delete(recordKey(c.ID, rid), nil); err != nil {
		return err
	}
	for i, ix := range c.Indexes {
		for _, k := range keys[i] {
			if err := w.deleteEntry(c, ix, k, rid); err != nil {
				return err
			}
		}
	}
	w.logDelete(c, doc)
	return nil
}

func (w *Writer) nextRID(c *Collection) int64 {
	w.s.lastRID[c.ID]++
	return w.s.lastRID[c.ID]
}

// storedKeys computes the keys of doc, a record of c as stored, for
// every index, without validating it again: every record of a collection
// with indexes passed index.Validate when it was written or when an
// index was built over it.
func (w *Writer) storedKeys(c *Collection, doc bson.Raw) ([][][]byte, []index.Multikey, error) {
	keys := make([][][]byte, len(c.Indexes))
	mks := make([]index.Multikey, len(c.Indexes))
	for i, ix := range c.Indexes {
		k, mk, err := ix.Def.KeysValidated(doc)
		if err != nil {
			return nil, nil, err
		}
		keys[i], mks[i] = k, mk
	}
	return keys, mks, nil
}

// indexKeys computes the keys and multikey paths of doc for every index.
func (w *Writer) indexKeys(c *Collection, doc bson.Raw) ([][][]byte, []index.Multikey, error) {
	return w.indexKeysInto(c, doc, make([][][]byte, len(c.Indexes)), make([]index.Multikey, len(c.Indexes)))
}

// insertKeys is indexKeys into the Writer's scratch slices, which the next
// call reuses: Insert needs the keys only until it returns.
func (w *Writer) insertKeys(c *Collection, doc bson.Raw) ([][][]byte, []index.Multikey, error) {
	n := len(c.Indexes)
	if cap(w.ikeys) < n {
		w.ikeys = make([][][]byte, n)
		w.imks = make([]index.Multikey, n)
	}
	return w.indexKeysInto(c, doc, w.ikeys[:n], w.imks[:n])
}

// indexKeysInto is indexKeys into keys and mks, of one entry per index.
func (w *Writer) indexKeysInto(c *Collection, doc bson.Raw, keys [][][]byte, mks []index.Multikey) ([][][]byte, []index.Multikey, error) {
	if len(c.Indexes) == 0 {
		return keys, mks, nil
	}
	// One validation of doc serves every index (a bucket of a time
	// series is large, and has three or more).
	if err := index.Validate(doc); err != nil {
		return nil, nil, err
	}
	for i, ix := range c.Indexes {
		k, mk, err := ix.Def.KeysValidated(doc)
		if err != nil {
			return nil, nil, err
		}
		keys[i], mks[i] = k, mk
	}
	return keys, mks, nil
}

// noteMultikey records multikey paths that c's indexes did not have yet,
// publishing a new catalog entry when something changed.
func (w *Writer) noteMultikey(c *Collection, mks []index.Multikey) error {
	cur := w.Collection(c.NS)
	if cur == nil || len(cur.Indexes) != len(mks) {
		return nil
	}
	var next *Collection
	for i, mk := range mks {
		if !mk.Any() {
			continue
		}
		merged, changed := mergeMultikey(cur.Indexes[i].Multikey, mk)
		if !changed {
			continue
		}
		if next == nil {
			n := *cur
			n.Indexes = append([]*Index(nil), cur.Indexes...)
			next = &n
		}
		ix := *next.Indexes[i]
		ix.Multikey = merged
		next.Indexes[i] = &ix
	}
	if next == nil {
		return nil
	}
	if _, structural := w.pending[c.NS]; !structural {
		w.early[c.NS] = true
	}
	return w.putCatalog(next)
}

// mergeMultikey returns the union of a and b and whether it differs from a.
func mergeMultikey(a, b index.Multikey) (index.Multikey, bool) {
	changed := false
	out := index.Multikey{Paths: make([][]int, max(len(a.Paths), len(b.Paths)))}
	for i := range out.Paths {
		var pa, pb []int
		if i < len(a.Paths) {
			pa = a.Paths[i]
		}
		if i < len(b.Paths) {
			pb = b.Paths[i]
		}
		u := append([]int(nil), pa...)
		for _, p := range pb {
			if !slices.Contains(u, p) {
				u = append(u, p)
				changed = true
			}
		}
		slices.Sort(u)
		out.Paths[i] = u
	}
	out.Wildcard = append([]string(nil), a.Wildcard...)
	for _, p := range b.Wildcard {
		if !slices.Contains(out.Wildcard, p) {
			out.Wildcard = append(out.Wildcard, p)
			changed = true
		}
	}
	slices.Sort(out.Wildcard)
	return out, changed
}

// CreateIndex adds an index built from the documents c holds now. A
// unique index that finds duplicates fails with DuplicateKeyError and
// stages nothing of itself. The caller has checked name and key conflicts
// and the index limit.
func (w *Writer) CreateIndex(ns string, sp index.Spec) (*Index, error) {
	c := w.Collection(ns)
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
	}
	ix, err := compiledIndex(c.nextIndexID, sp)
	if err != nil {
		return nil, err
	}
	n := *c
	n.nextIndexID++
	n.Indexes = append(append([]*Index(nil), c.Indexes...), ix)
	recs, err := w.Reader().Scan(c, false)
	if err != nil {
		return nil, err
	}
	defer recs.Close()
	var entries []struct {
		key []byte
		rid int64
	}
	for recs.Next() {
		doc, err := recs.Doc()
		if err != nil {
			return nil, err
		}
		keys, mk, err := ix.Def.Keys(doc)
		if err != nil {
			return nil, err
		}
		if mk.Any() {
			ix.Multikey, _ = mergeMultikey(ix.Multikey, mk)
		}
		for _, k := range keys {
			entries = append(entries, struct {
				key []byte
				rid int64
			}{k, recs.RecordID()})
		}
	}
	if err := recs.Err(); err != nil {
		return nil, err
	}
	if ix.Unique {
		seen := make(map[string]int64, len(entries))
		for _, e := range entries {
			if other, dup := seen[string(e.key)]; dup && other != e.rid {
				doc, err := w.Reader().Fetch(c, e.rid)
				if err != nil {
					return nil, err
				}
				return nil, &DuplicateKeyError{Coll: c, Index: ix, Doc: doc, Key: e.key}
			}
			seen[string(e.key)] = e.rid
		}
	}
	w.markSlow(c.ID) // the new entries are probed through the batch
	for _, e := range entries {
		if err := w.putEntry(&n, ix, e.key, e.rid); err != nil {
			return nil, err
		}
	}
	w.logCreateIndex(c, ix)
	return ix, w.putCatalog(&n)
}

// DropIndex removes the index called name and its entries.
func (w *Writer) DropIndex(ns, name string) error {
	c := w.Collection(ns)
	if c == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
	}
	n := *c
	n.Indexes = nil
	var dropped *Index
	for _, ix := range c.Indexes {
		if ix.Name == name {
			dropped = ix
			continue
		}
		n.Indexes = append(n.Indexes, ix)
	}
	if dropped == nil {
		return mongoerr.Newf(mongoerr.IndexNotFound, "index not found with name [%s]", name)
	}
	p := indexPrefix(c.ID, dropped.ID)
	if err := w.b.DeleteRange(p, prefixEnd(p), nil); err != nil {
		return err
	}
	w.markSlow(c.ID)
	w.logDropIndex(c, dropped)
	return w.putCatalog(&n)
}

// ReplaceIndexSpec publishes a new spec for an existing index whose keys
// do not change (collMod: hidden, expireAfterSeconds).
func (w *Writer) ReplaceIndexSpec(ns, name string, sp index.Spec) error {
	c := w.Collection(ns)
	if c == nil {
		return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
	}
	n := *c
	n.Indexes = append([]*Index(nil), c.Indexes...)
	for i, ix := range n.Indexes {
		if ix.Name != name {
			continue
		}
		nix, err := compiledIndex(ix.ID, sp)
		if err != nil {
			return err
		}
		nix.Multikey = ix.Multikey
		n.Indexes[i] = nix
		w.logIndexMod(c, name, ix.Spec, nix.Spec)
		return w.putCatalog(&n)
	}
	return mongoerr.Newf(mongoerr.IndexNotFound, "cannot find index %s", name)
}

func entryKey(c *Collection, ix *Index, key []byte, rid int64) []byte {
	return appendEntryKey(nil, c, ix, key, rid)
}

// appendEntryKey appends the entry key of key for record rid in ix to dst.
func appendEntryKey(dst []byte, c *Collection, ix *Index, key []byte, rid int64) []byte {
	dst = appendIndexPrefix(dst, c.ID, ix.ID)
	dst = append(dst, key...)
	if !ix.Unique {
		dst = binary.BigEndian.AppendUint64(dst, uint64(rid))
	}
	return dst
}

func (w *Writer) putEntry(c *Collection, ix *Index, key []byte, rid int64) error {
	w.kbuf = appendEntryKey(w.kbuf[:0], c, ix, key, rid)
	k := w.kbuf
	if ix.Unique {
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], uint64(rid))
		w.stage(c.ID, k, rid)
		return w.b.Set(k, v[:], nil)
	}
	return w.b.Set(k, nil, nil)
}

// deleteEntry removes the entry of key for record rid from ix.
func (w *Writer) deleteEntry(c *Collection, ix *Index, key []byte, rid int64) error {
	w.kbuf = appendEntryKey(w.kbuf[:0], c, ix, key, rid)
	k := w.kbuf
	if ix.Unique {
		w.stage(c.ID, k, 0)
	}
	return w.b.Delete(k, nil)
}

// checkUnique reports a DuplicateKeyError when one of keys already belongs
// to a record other than self in a unique index.
func (w *Writer) checkUnique(c *Collection, ix *Index, keys [][]byte, self int64, doc bson.Raw) error {
	if !ix.Unique || len(keys) == 0 {
		return nil
	}
	for _, k := range keys {
		w.kbuf = appendEntryKey(w.kbuf[:0], c, ix, k, 0)
		if w.heldBy(w.kbuf) {
			return errHeld
		}
		owner, err := w.owner(c.ID, w.kbuf[:indexPrefixLen], w.kbuf)
		if err != nil {
			return err
		}
		if owner != 0 && owner != self {
			return &DuplicateKeyError{Coll: c, Index: ix, Doc: doc, Key: k}
		}
	}
	return nil
}

// minus returns the keys of a not in b.
func minus(a, b [][]byte) [][]byte {
	var out [][]byte
outer:
	for _, k := range a {
		for _, o := range b {
			if bytes.Equal(k, o) {
				continue outer
			}
		}
		out = append(out, k)
	}
	return out
}

// Reader returns a Reader over this writer's view: committed data plus
// what it has staged so far.
func (w *Writer) Reader() Reader {
	if w.view != nil {
		return reader{view: w.view}
	}
	return reader{src: w.b}
}
