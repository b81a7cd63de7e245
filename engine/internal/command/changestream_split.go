package command

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

// maxEventSize is the largest change event mongod returns whole
// (BSONObjMaxInternalSize, 16 MB + 16 KB); a larger one fails with
// BSONObjectTooLarge unless the stream splits it.
const maxEventSize = wire.MaxCommandSize

// maxSplitEventSize is where $changeStreamSplitLargeEvent splits: an
// event whose size plus its resume token's (the postBatchResumeToken
// that goes with it) passes it is split (mongod's
// kBSONObjMaxChangeEventSize, BSONObjMaxInternalSize - 8 KB).
const maxSplitEventSize = maxEventSize - 8*1024

// fit returns the events to queue for one event out of the pipeline: the
// event itself, or, for a stream with $changeStreamSplitLargeEvent and an
// event too large, its fragments. resumeFrag > 0 resumes after that
// fragment (1-based) of this event: the fragments up to it are dropped.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/changeStreamSplitLargeEvent/
func (cs *changeStream) fit(tok resumeToken, ev bson.Raw, resumeFrag uint32) ([]csEvent, error) {
	if !cs.split {
		if len(ev) > maxEventSize {
			return nil, mongoerr.Newf(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB) First element: _id: %s", len(ev), len(ev), extJSON(tok.doc()))
		}
		return []csEvent{{doc: ev, tok: tok}}, nil
	}
	tokSize := len(tok.doc())
	small := len(ev)+tokSize <= maxSplitEventSize
	if resumeFrag > 0 && small {
		return nil, mongoerr.New(mongoerr.ChangeStreamFatalError, "Attempted to resume from a split event fragment, but the event in the resumed stream was not large enough to be split")
	}
	if small {
		return []csEvent{{doc: ev, tok: tok}}, nil
	}
	frags, err := splitEvent(tok, ev, maxSplitEventSize-tokSize)
	if err != nil {
		return nil, err
	}
	// The resumed fragment must be among them (it is not returned again).
	if int(resumeFrag) > len(frags) {
		return nil, mongoerr.New(mongoerr.ChangeStreamFatalError, "Attempted to resume from a split event, but the resumed stream produced a different split. Ensure that the pipeline used to resume is the same as the original")
	}
	return frags[resumeFrag:], nil
}

// eventField is one top-level field of an event being split.
type eventField struct {
	key  string
	elem bson.RawElement
}

// splitEvent splits ev into fragments of at most max bytes: its fields
// but _id, ordered by size and then name, packed greedily (each fragment
// takes at least one field), each fragment led by its own resume token
// as _id and splitEvent {fragment, of}. A field too large for a fragment
// on its own fails with 7182500, as mongod's.
func splitEvent(tok resumeToken, ev bson.Raw, max int) ([]csEvent, error) {
	elems, err := ev.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	fields := make([]eventField, 0, len(elems))
	for _, e := range elems {
		if e.Key() != "_id" {
			fields = append(fields, eventField{key: e.Key(), elem: e})
		}
	}
	if len(fields) == 0 {
		return nil, mongoerr.New(mongoerr.Code(7182502), "Cannot split an empty event or an event containing solely '_id' field")
	}
	sort.SliceStable(fields, func(i, j int) bool {
		if len(fields[i].elem) != len(fields[j].elem) {
			return len(fields[i].elem) < len(fields[j].elem)
		}
		return fields[i].key < fields[j].key
	})
	var groups [][]eventField
	var toks []resumeToken
	for i := 0; i < len(fields); {
		ft := tok
		ft.fragment = uint32(len(groups)) + 1
		// The fragment's fixed part: _id, splitEvent and the token again
		// as its sort key.
		size := len(fragmentDoc(ft, 1, 1, nil)) + len(ft.doc())
		var g []eventField
		for {
			g = append(g, fields[i])
			size += len(fields[i].elem)
			i++
			if i == len(fields) || size+len(fields[i].elem) > max {
				break
			}
		}
		if size > max {
			return nil, mongoerr.Newf(mongoerr.Code(7182500), "Splitting change event failed: fragment size %d is greater than maximum allowed fragment size %d", size, max)
		}
		groups = append(groups, g)
		toks = append(toks, ft)
	}
	out := make([]csEvent, len(groups))
	for i, g := range groups {
		out[i] = csEvent{doc: fragmentDoc(toks[i], i+1, len(groups), g), tok: toks[i]}
	}
	return out, nil
}

// fragmentDoc builds one fragment: _id, splitEvent {fragment: n, of}, the
// fields.
func fragmentDoc(tok resumeToken, n, of int, fields []eventField) bson.Raw {
	d := bsoncore.AppendDocumentElement(nil, "_id", tok.doc())
	se := bsoncore.AppendInt32Element(nil, "fragment", int32(n))
	se = bsoncore.AppendInt32Element(se, "of", int32(of))
	d = bsoncore.AppendDocumentElement(d, "splitEvent", bsoncore.BuildDocument(nil, se))
	for _, f := range fields {
		d = append(d, f.elem...)
	}
	return bson.Raw(bsoncore.BuildDocument(nil, d))
}
