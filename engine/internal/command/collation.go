package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// collationArg is a command's collation option: given says the command
// named one (an empty document does not count, as in mongod); coll is
// then its collator, nil for {locale: "simple"}.
type collationArg struct {
	given bool
	coll  *collation.Collator
}

// parseCollationArg parses a command's collation option with mongod's
// errors (collation.ParseSpec's codes; TypeMismatch for a non-object).
func (r *Request) parseCollationArg(v bson.RawValue) (collationArg, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return collationArg{}, mongoerr.Newf(mongoerr.TypeMismatch, "collation must be an object")
	}
	if len(d) <= 5 {
		return collationArg{}, nil
	}
	s, simple, err := collation.ParseSpec(d)
	if err != nil {
		return collationArg{}, err
	}
	if simple {
		return collationArg{given: true}, nil
	}
	return collationArg{given: true, coll: r.Env.ext().collator(s)}, nil
}

// stmtCollation resolves a write statement's collation option (kept as
// sent; Type 0 when absent) against coll into env: it selects the
// documents, and updaterWithCollation gives it to the update's operators.
func (r *Request) stmtCollation(coll *storage.Collection, v bson.RawValue, env *match.Env) error {
	var a collationArg
	if v.Type != 0 {
		var err error
		if a, err = r.parseCollationArg(v); err != nil {
			return err
		}
	}
	env.Collation = r.collationFor(coll, a)
	return nil
}

// checkCollation validates a collation option the command does not use
// further (planCacheClear's).
func checkCollation(v bson.RawValue) error {
	d, ok := v.DocumentOK()
	if !ok {
		return mongoerr.Newf(mongoerr.TypeMismatch, "collation must be an object")
	}
	if len(d) <= 5 {
		return nil
	}
	_, _, err := collation.ParseSpec(d)
	return err
}

// collationFor returns the collator an operation on c runs under: the
// command's collation when it named one, else the collection's default
// (nil: simple).
func (r *Request) collationFor(c *storage.Collection, a collationArg) *collation.Collator {
	if a.given {
		return a.coll
	}
	return r.Env.ext().defaultCollation(c)
}

// collator returns the shared collator of a parsed spec; collators are
// immutable and safe for concurrent use, so one per spec is kept.
func (x *envExt) collator(s collation.Spec) *collation.Collator {
	key := string(s.Document())
	if c, ok := x.collators.Load(key); ok {
		return c.(*collation.Collator)
	}
	c, _ := x.collators.LoadOrStore(key, collation.New(s))
	return c.(*collation.Collator)
}

// defaultCollation returns c's default collation (its create option
// collation), nil for none or for a missing collection.
func (x *envExt) defaultCollation(c *storage.Collection) *collation.Collator {
	if c == nil {
		return nil
	}
	v, err := c.Options.LookupErr("collation")
	if err != nil || v.Type != bson.TypeEmbeddedDocument {
		return nil
	}
	s, simple, err := collation.ParseSpec(v.Document())
	if err != nil || simple {
		return nil
	}
	return x.collator(s)
}

// createCollationOption validates create's collation and appends the
// normalised spec to the collection options, as listCollections shows it
// (nothing for {locale: "simple"} or an empty document).
// https://www.mongodb.com/docs/v7.0/reference/method/db.createCollection/
func createCollationOption(opts bson.D, v bson.RawValue) (bson.D, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'create.collation' is the wrong type '%s', expected type 'object'", typeName(v.Type))
	}
	if len(d) <= 5 {
		return opts, nil
	}
	s, simple, err := collation.ParseSpec(d)
	if err != nil || simple {
		return opts, err
	}
	return append(opts, bson.E{Key: "collation", Value: s.Document()}), nil
}

// idIndexDoc is the idIndex listCollections shows for c: its _id index's
// spec, with the collation it inherited.
func idIndexDoc(c *storage.Collection) bson.Raw {
	if ix := c.IndexByName("_id_"); ix != nil && ix.Def != nil {
		return ix.Def.Spec().Doc()
	}
	return storage.IDIndexSpec
}

// inheritCollation gives an index spec that names no collation the
// collection's default, as mongod's createIndexes does.
// https://www.mongodb.com/docs/v7.0/reference/collation/#collation-and-index-use
func inheritCollation(c *storage.Collection, sp index.Spec) index.Spec {
	if sp.CollationGiven || c == nil {
		return sp
	}
	v, err := c.Options.LookupErr("collation")
	if err != nil || v.Type != bson.TypeEmbeddedDocument {
		return sp
	}
	sp.Collation = v.Document()
	return sp
}

// viewCollation returns the collation an operation on the view ns runs
// under: the view's default. A command collation other than the view's
// is OptionNotSupportedOnView (167), as in mongod.
// https://www.mongodb.com/docs/v7.0/core/views/#collation-behavior
func (r *Request) viewCollation(ns string, a collationArg) (*collation.Collator, error) {
	vc := r.Env.ext().defaultCollation(r.collection(ns))
	if a.given && !collation.Equal(a.coll, vc) {
		return nil, mongoerr.New(mongoerr.OptionNotSupportedOnView, "Cannot override a view's default collation")
	}
	return vc, nil
}

// splitViewCollation separates create's collation option, which a view
// keeps as its default collation, from the other options.
func splitViewCollation(opts bson.D) (other, coll bson.D) {
	for _, e := range opts {
		if e.Key == "collation" {
			coll = append(coll, e)
		} else {
			other = append(other, e)
		}
	}
	return other, coll
}

// updaterWithCollation makes an update document's operators compare
// under the statement's collation (update.WithCollation); pipeline
// updates are unchanged.
func updaterWithCollation(u updater, c *collation.Collator) updater {
	if d, ok := u.(docUpdater); ok && c != nil {
		return docUpdater{d.u.WithCollation(c)}
	}
	return u
}
