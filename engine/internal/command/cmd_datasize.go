package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("dataSize", &spec{run: runDataSize, help: "bytes and count of the documents in a collection or key range"})
	aliases["datasize"] = "dataSize"
}

// dataSizeParams is a parsed dataSize command.
type dataSizeParams struct {
	ns                   string
	keyPattern, min, max bson.Raw
	maxSize, maxObjects  int64
}

// runDataSize sums the BSON size of the documents of a namespace, or of
// those whose keyPattern key lies in [min, max), as mongod's dataSize. A
// missing collection answers size 0. maxSize and maxObjects stop the count
// early with maxReached: true. estimate is accepted; the size is always
// exact. millis is an int64, as mongod appends its timer's long long.
// https://www.mongodb.com/docs/v7.0/reference/command/dataSize/
func runDataSize(ctx context.Context, r *Request) (bson.D, error) {
	start := time.Now()
	p, err := parseDataSize(r)
	if err != nil {
		return nil, err
	}
	c := r.Env.Store.Collection(p.ns)
	if c == nil {
		return bson.D{{Key: "size", Value: int32(0)}, {Key: "numObjects", Value: int32(0)}, {Key: "millis", Value: time.Since(start).Milliseconds()}}, nil
	}
	var fields []keyField
	if len(p.min) > 5 || len(p.max) > 5 {
		if len(p.keyPattern) <= 5 {
			p.keyPattern = inferKeyPattern(p.min)
		}
		if !hasPrefixedIndex(c, p.keyPattern) {
			return nil, mongoerr.New(mongoerr.OperationFailed, "couldn't find valid index containing key pattern")
		}
		fields = keyFields(p.keyPattern)
	}
	snap := r.Env.Store.Snapshot()
	defer snap.Close()
	recs, err := snap.Scan(c, false)
	if err != nil {
		return nil, err
	}
	defer recs.Close()
	var size, n int64
	maxReached := false
	for i := 0; recs.Next(); i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, ctxErr(err)
			}
		}
		doc, err := recs.Doc()
		if err != nil {
			return nil, err
		}
		if fields != nil && !inKeyRange(doc, fields, p.min, p.max) {
			continue
		}
		size += int64(len(doc))
		n++
		if p.maxSize > 0 && size > p.maxSize || p.maxObjects > 0 && n > p.maxObjects {
			maxReached = true
			break
		}
	}
	if err := recs.Err(); err != nil {
		return nil, err
	}
	out := bson.D{{Key: "size", Value: appendNumber(size)}, {Key: "numObjects", Value: appendNumber(n)}}
	if maxReached {
		out = append(out, bson.E{Key: "maxReached", Value: true})
	}
	return append(out, bson.E{Key: "millis", Value: time.Since(start).Milliseconds()}), nil
}

// parseDataSize reads the command's fields.
func parseDataSize(r *Request) (*dataSizeParams, error) {
	p := &dataSizeParams{}
	first := r.Body.Index(0).Value()
	ns, ok := first.StringValueOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.InvalidNamespace, "collection name has invalid type %s", typeName(first.Type))
	}
	db, coll, _ := splitDot(ns)
	if validDBName(db) != nil || validCollName(db, coll) != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", ns)
	}
	p.ns = ns
	err := fields("dataSize", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "keyPattern", "min", "max":
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.FieldType("dataSize", k, typeName(v.Type), "object")
			}
			switch k {
			case "keyPattern":
				p.keyPattern = d
			case "min":
				p.min = d
			default:
				p.max = d
			}
		case "maxSize", "maxObjects":
			n, ok := asInt(v)
			if !ok {
				f, okf := asFloat(v)
				if !okf {
					return mongoerr.FieldType("dataSize", k, typeName(v.Type), "long")
				}
				n = int64(f)
			}
			if k == "maxSize" {
				p.maxSize = n
			} else {
				p.maxObjects = n
			}
		case "estimate":
		default:
			return errUnknown
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if (len(p.min) > 5) != (len(p.max) > 5) {
		return nil, mongoerr.New(mongoerr.BadValue, "only one of min or max specified")
	}
	return p, nil
}

func splitDot(ns string) (string, string, bool) {
	for i := 0; i < len(ns); i++ {
		if ns[i] == '.' {
			return ns[:i], ns[i+1:], true
		}
	}
	return ns, "", false
}

// keyField is one field of a key pattern with its direction.
type keyField struct {
	parts []string
	desc  bool
}

func keyFields(pattern bson.Raw) []keyField {
	var out []keyField
	bsonkit.ForEach(pattern, func(k string, v bson.RawValue) bool {
		f, _ := asFloat(v)
		out = append(out, keyField{parts: bsonkit.SplitPath(k), desc: f < 0})
		return true
	})
	return out
}

// inferKeyPattern is mongod's Helpers::inferKeyPattern: the fields of a
// bound, each ascending.
func inferKeyPattern(bound bson.Raw) bson.Raw {
	d := bson.D{}
	bsonkit.ForEach(bound, func(k string, _ bson.RawValue) bool {
		d = append(d, bson.E{Key: k, Value: int32(1)})
		return true
	})
	out, _ := bson.Marshal(d)
	return out
}

// hasPrefixedIndex reports an index whose key pattern starts with the
// fields of pattern (directions ignored, as a shard key prefix).
func hasPrefixedIndex(c *storage.Collection, pattern bson.Raw) bool {
	want := keyFields(pattern)
	for _, ix := range c.Indexes {
		have := keyFields(ix.Key())
		if len(have) < len(want) {
			continue
		}
		ok := true
		for i, f := range want {
			if joinParts(have[i].parts) != joinParts(f.parts) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func joinParts(p []string) string {
	s := ""
	for i, x := range p {
		if i > 0 {
			s += "."
		}
		s += x
	}
	return s
}

// inKeyRange reports whether doc's key lies in [min, max) in key order.
func inKeyRange(doc bson.Raw, fields []keyField, min, max bson.Raw) bool {
	key := make([]bson.RawValue, len(fields))
	for i, f := range fields {
		v, ok := bsonkit.LookupDoc(doc, f.parts)
		if !ok {
			v = bson.RawValue{Type: bson.TypeNull}
		}
		key[i] = v
	}
	return compareKey(key, fields, min) >= 0 && compareKey(key, fields, max) < 0
}

// compareKey compares a key with a bound document field by field, each in
// its field's direction.
func compareKey(key []bson.RawValue, fields []keyField, bound bson.Raw) int {
	vals := bsonkit.Values(bound)
	for i := range fields {
		if i >= len(vals) {
			return 0
		}
		c := bsonkit.Compare(key[i], vals[i])
		if fields[i].desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}
