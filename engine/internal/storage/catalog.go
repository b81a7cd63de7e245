package storage

import (
	"crypto/rand"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Keyer computes the encoded index keys of a document for one index. A
// nil or empty result means the document has no entry (sparse or partial).
type Keyer interface {
	Keys(doc bson.Raw) ([][]byte, error)
}

// KeyerFunc compiles an index spec (as listIndexes shows it) into a Keyer.
// The store calls it when it loads the catalog and when an index is added.
type KeyerFunc func(spec bson.Raw) (Keyer, error)

// Index is one index of a collection. It is immutable.
type Index struct {
	ID     uint32
	Name   string
	Spec   bson.Raw // {v, key, name, ...} as listIndexes returns it
	Unique bool
	Keyer  Keyer
}

// Key returns the index's key pattern.
func (ix *Index) Key() bson.Raw {
	v, _ := ix.Spec.LookupErr("key")
	d, _ := v.DocumentOK()
	return d
}

// Collection is the catalog entry of one collection. A *Collection is
// immutable once published: catalog changes publish a new value, so a
// reader holding one sees a consistent definition.
type Collection struct {
	NS, DB, Name string
	ID           uint64
	UUID         [16]byte
	Options      bson.Raw // create options as listCollections reports them
	Indexes      []*Index
	nextIndexID  uint32
}

// IndexByName returns the index called name, or nil.
func (c *Collection) IndexByName(name string) *Index {
	for _, ix := range c.Indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

type catalogEntry struct {
	NS          string       `bson:"ns"`
	ID          int64        `bson:"id"`
	UUID        bson.Binary  `bson:"uuid"`
	Options     bson.Raw     `bson:"options"`
	Indexes     []indexEntry `bson:"indexes"`
	NextIndexID int64        `bson:"nextIndexId"`
}

type indexEntry struct {
	ID   int64    `bson:"id"`
	Spec bson.Raw `bson:"spec"`
}

func (c *Collection) encode() ([]byte, error) {
	e := catalogEntry{
		NS: c.NS, ID: int64(c.ID), Options: c.Options, NextIndexID: int64(c.nextIndexID),
		UUID: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]},
	}
	if e.Options == nil {
		e.Options = emptyDoc
	}
	for _, ix := range c.Indexes {
		e.Indexes = append(e.Indexes, indexEntry{ID: int64(ix.ID), Spec: ix.Spec})
	}
	return bson.Marshal(e)
}

var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

func decodeCollection(b []byte, keyer KeyerFunc) (*Collection, error) {
	var e catalogEntry
	if err := bson.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	db, name := SplitNS(e.NS)
	c := &Collection{NS: e.NS, DB: db, Name: name, ID: uint64(e.ID), Options: rawCopy(e.Options), nextIndexID: uint32(e.NextIndexID)}
	copy(c.UUID[:], e.UUID.Data)
	for _, ie := range e.Indexes {
		ix, err := newIndex(uint32(ie.ID), rawCopy(ie.Spec), keyer)
		if err != nil {
			return nil, err
		}
		c.Indexes = append(c.Indexes, ix)
	}
	return c, nil
}

func newIndex(id uint32, spec bson.Raw, keyer KeyerFunc) (*Index, error) {
	ix := &Index{ID: id, Spec: spec}
	if v, err := spec.LookupErr("name"); err == nil {
		ix.Name, _ = v.StringValueOK()
	}
	if v, err := spec.LookupErr("unique"); err == nil {
		ix.Unique, _ = v.BooleanOK()
	}
	if ix.Name == "_id_" {
		ix.Unique = true
	}
	k, err := keyer(spec)
	if err != nil {
		return nil, fmt.Errorf("storage: index %q: %w", ix.Name, err)
	}
	ix.Keyer = k
	return ix, nil
}

// IDIndexSpec is the spec of the _id index every collection has.
var IDIndexSpec = mustMarshal(bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}})

func mustMarshal(v any) bson.Raw {
	b, err := bson.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func newUUID() [16]byte {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}
