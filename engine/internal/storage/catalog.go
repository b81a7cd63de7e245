package storage

import (
	"crypto/rand"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
)

// Index is one index of a collection. It is immutable: a change (a new
// multikey path) publishes a new *Index in a new *Collection.
type Index struct {
	ID     uint32
	Name   string
	Spec   bson.Raw // {v, key, name, ...} as listIndexes returns it
	Unique bool
	Def    *index.Index
	// Multikey accumulates the multikey paths of every document indexed.
	Multikey index.Multikey
}

// Key returns the index's key pattern.
func (ix *Index) Key() bson.Raw { return ix.Def.Spec().Key }

// IsMultikey reports whether some document made the index multikey.
func (ix *Index) IsMultikey() bool { return ix.Multikey.Any() }

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
	ID        int64    `bson:"id"`
	Spec      bson.Raw `bson:"spec"`
	Multikey  [][]int  `bson:"multikey,omitempty"`
	WildPaths []string `bson:"wildcardMultikey,omitempty"`
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
		e.Indexes = append(e.Indexes, indexEntry{ID: int64(ix.ID), Spec: ix.Spec, Multikey: ix.Multikey.Paths, WildPaths: ix.Multikey.Wildcard})
	}
	return bson.Marshal(e)
}

var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

func decodeCollection(b []byte) (*Collection, error) {
	var e catalogEntry
	if err := bson.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	db, name := SplitNS(e.NS)
	c := &Collection{NS: e.NS, DB: db, Name: name, ID: uint64(e.ID), Options: rawCopy(e.Options), nextIndexID: uint32(e.NextIndexID)}
	copy(c.UUID[:], e.UUID.Data)
	for _, ie := range e.Indexes {
		ix, err := newIndex(uint32(ie.ID), rawCopy(ie.Spec))
		if err != nil {
			return nil, err
		}
		ix.Multikey = index.Multikey{Paths: ie.Multikey, Wildcard: ie.WildPaths}
		c.Indexes = append(c.Indexes, ix)
	}
	return c, nil
}

func newIndex(id uint32, spec bson.Raw) (*Index, error) {
	sp, err := index.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return compiledIndex(id, sp)
}

func compiledIndex(id uint32, sp index.Spec) (*Index, error) {
	def, err := index.Compile(sp)
	if err != nil {
		return nil, err
	}
	return &Index{ID: id, Name: sp.Name, Spec: sp.Doc(), Unique: sp.Unique || sp.IsID(), Def: def}, nil
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
