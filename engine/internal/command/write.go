package command

import (
	"encoding/binary"
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

// writeResult accumulates the outcome of a write batch.
type writeResult struct {
	n         int64
	nModified int64
	upserted  bson.A
	errs      []mongoerr.WriteError
}

// reply builds the fields of an insert/update/delete reply.
func (w *writeResult) reply(r *Request, modified bool) bson.D {
	d := bson.D{{Key: "n", Value: int32(w.n)}}
	if modified {
		d = append(d, bson.E{Key: "nModified", Value: int32(w.nModified)})
	}
	if len(w.upserted) > 0 {
		d = append(d, bson.E{Key: "upserted", Value: w.upserted})
	}
	if len(w.errs) > 0 {
		arr := make(bson.A, len(w.errs))
		for i, e := range w.errs {
			arr[i] = e.Doc()
		}
		d = append(d, bson.E{Key: "writeErrors", Value: arr})
	}
	if wce := r.Generic.WriteConcern.concernError(); wce != nil {
		d = append(d, bson.E{Key: "writeConcernError", Value: wce})
	}
	return d
}

// writeErr converts a storage or engine error for one batch item into the
// MongoDB error clients see.
func writeErr(err error) *mongoerr.Error {
	var dk *storage.DuplicateKeyError
	if errors.As(err, &dk) {
		return duplicateKey(dk)
	}
	return mongoerr.As(err)
}

// duplicateKey builds mongod's E11000 error with keyPattern and keyValue.
func duplicateKey(dk *storage.DuplicateKeyError) *mongoerr.Error { return dk.MongoError() }

// formatValue renders v the way mongod's BSONObj::toString does, as used in
// error messages (see format_value.go).
func formatValue(v bson.RawValue) string {
	var sb strings.Builder
	writeFormatted(&sb, v, 0)
	return sb.String()
}

// maxDepth is the deepest nesting mongod stores.
const maxDepth = 100

// prepareInsert validates a document for storage and returns it with an
// _id, placed first. It returns MongoDB's errors for oversized documents
// and invalid _id values.
func prepareInsert(doc bson.Raw) (bson.Raw, error) {
	if len(doc) > wire.MaxDocumentSize {
		return nil, mongoerr.Newf(mongoerr.BadValue, "object to insert too large. size in bytes: %d, max size: %d", len(doc), wire.MaxDocumentSize)
	}
	if len(doc) < 5 || int(binary.LittleEndian.Uint32(doc)) != len(doc) || doc[len(doc)-1] != 0 {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid document: length does not match its bytes")
	}
	// One walk over the top level finds _id; depth walks the nesting,
	// neither allocating: this is the insert hot path.
	var id bsoncore.Element
	idFirst, n := false, 0
	for rest := bsoncore.Document(doc)[4 : len(doc)-1]; len(rest) > 0; n++ {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid document: malformed element")
		}
		if e.Key() == "_id" {
			if id != nil {
				return nil, mongoerr.New(mongoerr.BadValue, "can't have multiple _id fields in one document")
			}
			id, idFirst = e, n == 0
		}
		rest = r
	}
	if depth(doc, 0) > maxDepth {
		return nil, mongoerr.Newf(mongoerr.Overflow, "cannot insert document because it exceeds %d levels of nesting", maxDepth)
	}
	if id != nil {
		if err := checkID(bson.RawValue{Type: bson.Type(id.Value().Type), Value: id.Value().Data}); err != nil {
			return nil, err
		}
		if idFirst {
			return doc, nil
		}
	}
	out := make([]byte, 4, len(doc)+17)
	if id != nil {
		out = append(out, id...)
	} else {
		out = append(out, byte(bson.TypeObjectID))
		out = append(out, "_id\x00"...)
		oid := bson.NewObjectID()
		out = append(out, oid[:]...)
	}
	for rest := bsoncore.Document(doc)[4 : len(doc)-1]; len(rest) > 0; {
		e, r, _ := bsoncore.ReadElement(rest)
		if e.Key() != "_id" {
			out = append(out, e...)
		}
		rest = r
	}
	out = append(out, 0)
	putLen(out)
	if len(out) > wire.MaxDocumentSize {
		return nil, mongoerr.Newf(mongoerr.BadValue, "object to insert too large. size in bytes: %d, max size: %d", len(out), wire.MaxDocumentSize)
	}
	return out, nil
}

func putLen(b []byte) {
	n := len(b)
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
}

// checkID rejects _id values mongod refuses to store.
func checkID(v bson.RawValue) error {
	switch v.Type {
	case bson.TypeRegex:
		return mongoerr.New(mongoerr.BadValue, "can't use a regex for _id")
	case bson.TypeArray:
		return mongoerr.New(mongoerr.BadValue, "can't use an array for _id")
	case bson.TypeUndefined:
		return mongoerr.New(mongoerr.BadValue, "can't use a undefined for _id")
	case bson.TypeEmbeddedDocument:
		if name, ok := dollarField(v.Document()); ok {
			return mongoerr.Newf(mongoerr.DollarPrefixedFieldName, "_id fields may not contain '$'-prefixed fields: %s is not valid for storage.", name)
		}
	}
	return nil
}

// dollarField finds a $-prefixed field name at any depth of d.
func dollarField(d bson.Raw) (string, bool) {
	elems, _ := d.Elements()
	for _, e := range elems {
		if strings.HasPrefix(e.Key(), "$") {
			return e.Key(), true
		}
		v := e.Value()
		if v.Type == bson.TypeEmbeddedDocument {
			if n, ok := dollarField(v.Document()); ok {
				return n, true
			}
		}
	}
	return "", false
}

func depth(d bson.Raw, level int) int {
	max := level
	if len(d) < 5 {
		return max
	}
	for rest := d[4 : len(d)-1]; len(rest) > 0; {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return max
		}
		rest = r
		t := bsoncore.Type(e[0])
		if t != bsoncore.TypeEmbeddedDocument && t != bsoncore.TypeArray {
			continue
		}
		if n := depth(bson.Raw(e.Value().Data), level+1); n > max {
			max = n
		}
		if max > maxDepth {
			return max
		}
	}
	return max
}

// writeBatch holds what insert, update and delete share: the target
// collection, the statements and the ordered flag.
type writeBatch struct {
	coll    string
	items   []bson.Raw
	ordered bool
	let     bson.Raw // evaluated let variables (update, delete)
}

// parseWriteBatch parses a write command whose statements are in the array
// field items. A `let` document is accepted by insert, which evaluates no
// expressions, and answers NotImplemented for update and delete.
// https://www.mongodb.com/docs/manual/reference/command/insert/
func parseWriteBatch(r *Request, items string) (writeBatch, error) {
	b := writeBatch{ordered: true}
	name, err := collectionName(r)
	if err != nil {
		return b, err
	}
	b.coll = name
	if err := r.Env.notOnView(r.Name, r.DB+"."+name); err != nil {
		return b, err
	}
	have := false
	err = fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case items:
			b.items, err = docArray(r.Name, k, v)
			have = true
		case "ordered":
			b.ordered, err = wantBool(r.Name, k, v)
		case "bypassDocumentValidation":
			r.bypassValidation, err = wantBool(r.Name, k, v)
		case "let":
			if r.Name == "insert" {
				_, err = wantDoc(r.Name, k, v)
				return err
			}
			b.let, err = r.parseLet(r.Name, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return b, err
	}
	if !have {
		return b, mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.%s' is missing but a required field", r.Name, items)
	}
	if len(b.items) == 0 || len(b.items) > maxWriteBatch {
		return b, mongoerr.Newf(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", maxWriteBatch, len(b.items))
	}
	return b, checkWritable(r.DB, name)
}
