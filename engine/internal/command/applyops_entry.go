package command

import (
	"context"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// applyCommandOp runs the command of a 'c' entry against db. Oplog
// command entries have their own shapes for createIndexes (one spec
// inline) and renameCollection (run on admin).
func (r *Request) applyCommandOp(ctx context.Context, db string, o bson.Raw) error {
	elems, err := o.Elements()
	if err != nil || len(elems) == 0 {
		return mongoerr.New(mongoerr.BadValue, "Unknown oplog entry command type:  Object field: {}")
	}
	name := elems[0].Key()
	cmd := make(bson.D, 0, len(elems))
	for _, e := range elems {
		cmd = append(cmd, bson.E{Key: e.Key(), Value: e.Value()})
	}
	switch name {
	case "create", "drop", "collMod", "dropDatabase", "applyOps":
	case "dropIndexes", "deleteIndexes":
		cmd[0].Key = "dropIndexes"
	case "createIndexes":
		if o.Lookup("indexes").Type == 0 {
			spec := bson.D{}
			for _, e := range cmd[1:] {
				spec = append(spec, e)
			}
			cmd = bson.D{cmd[0], {Key: "indexes", Value: bson.A{spec}}}
		}
	case "renameCollection":
		db = "admin"
	default:
		return mongoerr.Newf(mongoerr.BadValue, "Unknown oplog entry command type: %s Object field: %s", name, formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: o}))
	}
	_, err = r.sub(ctx, db, cmd)
	return err
}

// oplogUpdate returns the update document for an update entry's o: a
// replacement or update operators as they are (without a $v: 1 marker),
// or the $set/$unset/$push form of a $v: 2 diff.
func oplogUpdate(o bson.Raw, id bson.RawValue) (bson.Raw, error) {
	v := o.Lookup("$v")
	if v.Type == 0 {
		return o, nil
	}
	n, _ := asInt(v)
	switch n {
	case 1:
		out := bson.D{}
		elems, _ := o.Elements()
		for _, e := range elems {
			if e.Key() != "$v" {
				out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
			}
		}
		return bson.Marshal(out)
	case 2:
		diff, ok := o.Lookup("diff").DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$v: 2 update without a 'diff' object")
		}
		u := &diffUpdate{set: bson.D{}, unset: bson.D{}, push: bson.D{}, id: id}
		if err := u.doc(diff, "", 0); err != nil {
			return nil, err
		}
		return u.marshal()
	}
	return nil, mongoerr.Newf(mongoerr.FailedToParse, "Unrecognized update version %s", formatValue(v))
}

// maxDiffDepth bounds the nesting of a $v: 2 diff.
const maxDiffDepth = 200

// diffUpdate accumulates the operators equivalent to a $v: 2 diff.
type diffUpdate struct {
	set, unset, push bson.D
	id               bson.RawValue // the target's _id, for an empty diff
}

func (u *diffUpdate) marshal() (bson.Raw, error) {
	out := bson.D{}
	if len(u.set) > 0 {
		out = append(out, bson.E{Key: "$set", Value: u.set})
	}
	if len(u.unset) > 0 {
		out = append(out, bson.E{Key: "$unset", Value: u.unset})
	}
	if len(u.push) > 0 {
		out = append(out, bson.E{Key: "$push", Value: u.push})
	}
	if len(out) == 0 {
		// An empty diff changes nothing: setting _id to itself is the
		// no-op update that still reports whether the document exists.
		out = append(out, bson.E{Key: "$set", Value: bson.D{{Key: "_id", Value: u.id}}})
	}
	return bson.Marshal(out)
}

func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

// doc reads a document diff: d (delete), u (update), i (insert) and
// s<field> (sub-diff) sections.
func (u *diffUpdate) doc(diff bson.Raw, prefix string, depth int) error {
	if depth > maxDiffDepth {
		return mongoerr.New(mongoerr.FailedToParse, "$v: 2 diff nested too deeply")
	}
	elems, err := diff.Elements()
	if err != nil {
		return mongoerr.Newf(mongoerr.FailedToParse, "invalid diff: %v", err)
	}
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		switch {
		case k == "d":
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.New(mongoerr.FailedToParse, "diff 'd' section must be an object")
			}
			fs, _ := d.Elements()
			for _, f := range fs {
				u.unset = append(u.unset, bson.E{Key: join(prefix, f.Key()), Value: ""})
			}
		case k == "u" || k == "i":
			d, ok := v.DocumentOK()
			if !ok {
				return mongoerr.Newf(mongoerr.FailedToParse, "diff '%s' section must be an object", k)
			}
			fs, _ := d.Elements()
			for _, f := range fs {
				u.set = append(u.set, bson.E{Key: join(prefix, f.Key()), Value: f.Value()})
			}
		case strings.HasPrefix(k, "s") && len(k) > 1:
			sub, ok := v.DocumentOK()
			if !ok {
				return mongoerr.New(mongoerr.FailedToParse, "diff sub-diff must be an object")
			}
			path := join(prefix, k[1:])
			if a, ok := sub.Lookup("a").BooleanOK(); ok && a {
				if err := u.array(sub, path, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := u.doc(sub, path, depth+1); err != nil {
				return err
			}
		default:
			return mongoerr.Newf(mongoerr.FailedToParse, "Unrecognized diff field: %s", k)
		}
	}
	return nil
}

// array reads an array diff: a (marker), l (new length), u<index>
// (update) and s<index> (sub-diff).
func (u *diffUpdate) array(diff bson.Raw, path string, depth int) error {
	if depth > maxDiffDepth {
		return mongoerr.New(mongoerr.FailedToParse, "$v: 2 diff nested too deeply")
	}
	elems, _ := diff.Elements()
	for _, e := range elems {
		k, v := e.Key(), e.Value()
		switch {
		case k == "a":
		case k == "l":
			n, ok := asInt(v)
			if !ok || n < 0 {
				return mongoerr.New(mongoerr.FailedToParse, "array diff 'l' must be a non-negative integer")
			}
			u.push = append(u.push, bson.E{Key: path, Value: bson.D{{Key: "$each", Value: bson.A{}}, {Key: "$slice", Value: n}}})
		case len(k) > 1 && (k[0] == 'u' || k[0] == 's'):
			idx, err := strconv.Atoi(k[1:])
			if err != nil || idx < 0 {
				return mongoerr.Newf(mongoerr.FailedToParse, "Unrecognized array diff field: %s", k)
			}
			p := path + "." + strconv.Itoa(idx)
			if k[0] == 'u' {
				u.set = append(u.set, bson.E{Key: p, Value: v})
				continue
			}
			sub, ok := v.DocumentOK()
			if !ok {
				return mongoerr.New(mongoerr.FailedToParse, "array sub-diff must be an object")
			}
			if a, ok := sub.Lookup("a").BooleanOK(); ok && a {
				if err := u.array(sub, p, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := u.doc(sub, p, depth+1); err != nil {
				return err
			}
		default:
			return mongoerr.Newf(mongoerr.FailedToParse, "Unrecognized array diff field: %s", k)
		}
	}
	return nil
}
