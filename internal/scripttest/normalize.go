package scripttest

import (
	"encoding/binary"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Now is the clock of every script. A backend that takes a clock (an
// in-package runner calling update.Apply directly) passes Now; values a
// real server generates from its own clock print as Now (see normalizer).
var Now = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// clockSlack widens the window in which a date or timestamp counts as
// generated during the run.
const clockSlack = 2 * time.Minute

// normalizer replaces the values a server generates, which differ from run
// to run and from backend to backend, by stand-ins, so one expected output
// fits the embedded engine, a real MongoDB and an in-package runner:
//
//   - an ObjectID that no input of the script contains (an _id generated
//     by an upsert, or by the driver for a docs line without _id) prints as
//     650000000000000000000001, …02 and so on, numbered in the order the
//     output first shows them;
//   - a date or timestamp from the run's time window, or equal to Now,
//     prints as Now; a timestamp's increment prints as 1;
//   - a UUID (binary subtype 4, a collection's info.uuid) that no input
//     contains prints as all zeros.
//
// A normalizer belongs to one script; it is not safe for concurrent use.
type normalizer struct {
	known map[bson.ObjectID]bool
	uuids map[string]bool
	ids   map[bson.ObjectID]bson.ObjectID
	start time.Time
}

func newNormalizer() *normalizer {
	return &normalizer{
		known: map[bson.ObjectID]bool{},
		uuids: map[string]bool{},
		ids:   map[bson.ObjectID]bson.ObjectID{},
		start: time.Now(),
	}
}

// learn records the ObjectIDs of an input document, which print as they
// are.
func (n *normalizer) learn(doc bson.Raw) {
	walk(doc, func(v bson.RawValue) {
		if v.Type == bson.TypeObjectID {
			n.known[bson.ObjectID(v.Value)] = true
		}
		if isUUID(v) {
			n.uuids[string(v.Value)] = true
		}
	})
}

// doc returns doc with generated values replaced. It never modifies doc:
// the result is a copy when anything changes.
func (n *normalizer) doc(doc bson.Raw) bson.Raw {
	if !n.needed(doc) {
		return doc
	}
	out := append(bson.Raw(nil), doc...)
	// RawValue.Value aliases the document's bytes, and every value
	// replaced here has a fixed size, so the copy is rewritten in place.
	walk(out, func(v bson.RawValue) {
		switch v.Type {
		case bson.TypeObjectID:
			id := n.objectID(bson.ObjectID(v.Value))
			copy(v.Value, id[:])
		case bson.TypeDateTime:
			binary.LittleEndian.PutUint64(v.Value, uint64(Now.UnixMilli()))
		case bson.TypeTimestamp:
			binary.LittleEndian.PutUint32(v.Value, 1)
			binary.LittleEndian.PutUint32(v.Value[4:], uint32(Now.Unix()))
		case bson.TypeBinary:
			clear(v.Value[5:])
		}
	}, n.generated)
	return out
}

// value returns v with generated values replaced.
func (n *normalizer) value(v bson.RawValue) bson.RawValue {
	w := n.doc(wrap(v))
	return w.Lookup("v")
}

// needed reports whether doc holds a generated value.
func (n *normalizer) needed(doc bson.Raw) bool {
	found := false
	walk(doc, func(bson.RawValue) { found = true }, n.generated)
	return found
}

// generated reports whether v is a value the server made up.
func (n *normalizer) generated(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeObjectID:
		return !n.known[bson.ObjectID(v.Value)]
	case bson.TypeDateTime:
		ms := v.DateTime()
		return ms == Now.UnixMilli() || n.inWindow(time.UnixMilli(ms))
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		return (t == uint32(Now.Unix()) && i != 1) || n.inWindow(time.Unix(int64(t), 0))
	case bson.TypeBinary:
		return isUUID(v) && !n.uuids[string(v.Value)]
	}
	return false
}

// isUUID reports whether v is a 16-byte binary of subtype 4.
func isUUID(v bson.RawValue) bool {
	return v.Type == bson.TypeBinary && len(v.Value) == 21 && v.Value[4] == bson.TypeBinaryUUID && v.Value[0] == 16
}

func (n *normalizer) inWindow(t time.Time) bool {
	return !t.Before(n.start.Add(-clockSlack)) && !t.After(time.Now().Add(clockSlack))
}

// objectID returns the stand-in of a generated ObjectID.
func (n *normalizer) objectID(id bson.ObjectID) bson.ObjectID {
	if s, ok := n.ids[id]; ok {
		return s
	}
	var s bson.ObjectID
	seq := len(n.ids) + 1
	s[0] = 0x65
	binary.BigEndian.PutUint32(s[8:], uint32(seq))
	n.ids[id] = s
	return s
}

// walk calls f for every value of doc, at any depth, that passes all of
// the filters.
func walk(doc bson.Raw, f func(bson.RawValue), filters ...func(bson.RawValue) bool) {
	elems, err := doc.Elements()
	if err != nil {
		return
	}
	for _, e := range elems {
		v := e.Value()
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			walk(v.Document(), f, filters...)
			continue
		case bson.TypeArray:
			walk(bson.Raw(v.Array()), f, filters...)
			continue
		}
		pass := true
		for _, keep := range filters {
			pass = pass && keep(v)
		}
		if pass {
			f(v)
		}
	}
}

// wrap returns the document {v: v}.
func wrap(v bson.RawValue) bson.Raw {
	doc, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
	if err != nil {
		panic(err) // a RawValue always marshals
	}
	return doc
}
