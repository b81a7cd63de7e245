package command

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// This file owns document validation: the validator, validationLevel and
// validationAction options of create and collMod, and the check every
// write (insert, update, findAndModify, $merge, $out) makes before it
// stages a document.
// https://www.mongodb.com/docs/v7.0/core/schema-validation/

// isValidationOption reports whether k is one of the collection options
// this file owns.
func isValidationOption(k string) bool {
	return k == "validator" || k == "validationLevel" || k == "validationAction"
}

// parseValidationOption checks one validation option of command cmd
// (create or collMod) on namespace ns and returns the element to store in
// the collection's options, or nil for an empty validator, which mongod
// does not keep. Errors: TypeMismatch for a wrong type, BadValue for an
// unknown level or action, InvalidOptions for a validator in the admin,
// local or config database, the validator's compile errors.
func parseValidationOption(cmd, ns, k string, v bson.RawValue) (*bson.E, error) {
	switch k {
	case "validator":
		d, err := wantDoc(cmd, k, v)
		if err != nil {
			return nil, err
		}
		if len(d) <= 5 {
			return nil, nil
		}
		if db, _ := storage.SplitNS(ns); db == "admin" || db == "local" || db == "config" {
			return nil, mongoerr.Newf(mongoerr.InvalidOptions, "Document validators are not allowed on collection %s in the %s internal database", ns, db)
		}
		if _, err := match.Compile(d); err != nil {
			return nil, err
		}
		return &bson.E{Key: k, Value: d}, nil
	case "validationLevel", "validationAction":
		s, err := wantString(cmd, k, v)
		if err != nil {
			return nil, err
		}
		ok := s == "off" || s == "strict" || s == "moderate"
		if k == "validationAction" {
			ok = s == "error" || s == "warn"
		}
		if !ok {
			return nil, mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field '%s.%s' is not a valid value.", s, cmd, k)
		}
		return &bson.E{Key: k, Value: s}, nil
	}
	return nil, errUnknown
}

// setValidationOptions returns opts (a collection's stored options) with
// the validation options of changes set, replaced or, for an empty
// validator (nil value), removed; other options keep their order.
func setValidationOptions(opts bson.Raw, changes map[string]*bson.E) (bson.Raw, error) {
	var out bson.D
	seen := map[string]bool{}
	elems, _ := opts.Elements()
	for _, e := range elems {
		ch, ok := changes[e.Key()]
		if !ok {
			out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
			continue
		}
		seen[e.Key()] = true
		if ch != nil {
			out = append(out, *ch)
		}
	}
	for _, k := range []string{"validator", "validationLevel", "validationAction"} {
		if ch, ok := changes[k]; ok && !seen[k] && ch != nil {
			out = append(out, *ch)
		}
	}
	if len(out) == 0 {
		return bson.Raw{5, 0, 0, 0, 0}, nil
	}
	return bson.Marshal(out)
}

// collValidator is a collection's compiled validation settings.
type collValidator struct {
	opts    bson.Raw // the options they were compiled from
	filter  *match.Filter
	level   string // "strict", "moderate" or "off"
	action  string // "error" or "warn"
	hasExpr bool   // the filter has an $expr: compiled per command for $$NOW
	// forNow is the latest compilation for a command's $$NOW (now),
	// guarded by validators.mu.
	forNow *collValidator
	now    time.Time
}

// validators caches compiled validators by namespace; an entry is used
// only while the collection's options are byte-for-byte the ones it was
// compiled from. It is safe for concurrent use.
type validators struct {
	mu sync.Mutex
	m  map[string]*collValidator
}

// maxCachedValidators bounds the cache; it is cleared when full.
const maxCachedValidators = 4096

// validatorOf returns c's compiled validation settings, nil when c has no
// validator. Validators were checked when stored, so an error here means
// the catalog holds one this build cannot compile.
func (r *Request) validatorOf(c *storage.Collection) (*collValidator, error) {
	if c == nil || len(c.Options) <= 5 {
		return nil, nil
	}
	vs := &r.Env.validators
	vs.mu.Lock()
	cv := vs.m[c.NS]
	vs.mu.Unlock()
	if cv == nil || !bytes.Equal(cv.opts, c.Options) {
		var err error
		if cv, err = compileValidator(c.Options, match.Env{}); err != nil || cv == nil {
			return nil, err
		}
		vs.mu.Lock()
		if vs.m == nil || len(vs.m) >= maxCachedValidators {
			vs.m = map[string]*collValidator{}
		}
		vs.m[c.NS] = cv
		vs.mu.Unlock()
	}
	if cv.hasExpr {
		return r.exprValidator(cv)
	}
	return cv, nil
}

// exprValidator returns cv compiled for this command's $$NOW: the last
// such compilation of cv when it was for the same instant, so a batch
// compiles once.
func (r *Request) exprValidator(cv *collValidator) (*collValidator, error) {
	vs := &r.Env.validators
	vs.mu.Lock()
	last := cv.forNow
	vs.mu.Unlock()
	if last != nil && last.now.Equal(r.start) {
		return last, nil
	}
	nc, err := compileValidator(cv.opts, match.Env{Now: r.start, ClusterTime: r.Env.clock.current()})
	if err != nil || nc == nil {
		return nc, err
	}
	nc.now = r.start
	vs.mu.Lock()
	cv.forNow = nc
	vs.mu.Unlock()
	return nc, nil
}

// compileValidator compiles the validation settings of a collection's
// options, nil when there is no validator.
func compileValidator(opts bson.Raw, env match.Env) (*collValidator, error) {
	cv := &collValidator{opts: opts, level: "strict", action: "error"}
	doc, ok := opts.Lookup("validator").DocumentOK()
	if !ok || len(doc) <= 5 {
		return nil, nil
	}
	if s, ok := opts.Lookup("validationLevel").StringValueOK(); ok {
		cv.level = s
	}
	if s, ok := opts.Lookup("validationAction").StringValueOK(); ok {
		cv.action = s
	}
	f, err := match.CompileEnv(doc, env)
	if err != nil {
		return nil, err
	}
	cv.filter = f
	cv.hasExpr = hasExpr(f.View(), 0)
	return cv, nil
}

// hasExpr reports whether a filter's tree holds an $expr.
func hasExpr(n *match.Node, depth int) bool {
	if n.Kind == match.KindExpr || depth > 200 {
		return true
	}
	for _, c := range n.Children {
		if hasExpr(c, depth+1) {
			return true
		}
	}
	return false
}

// validateWrite checks doc, about to be stored in c, against c's
// validator. old is the document an update replaces (nil for an insert):
// under validationLevel "moderate" an update of a document that already
// failed the validator is not checked. A failure is
// DocumentValidationFailure (121) with errInfo {failingDocumentId,
// details}, or, under validationAction "warn", a logged warning and no
// error. bypassDocumentValidation skips the check.
func (r *Request) validateWrite(c *storage.Collection, old, doc bson.Raw) error {
	// Bucket documents of a time series collection are the engine's own
	// encoding (see package timeseries); the validator listCollections
	// shows on system.buckets.* describes mongod's and is not applied.
	if r.bypassValidation || strings.Contains(c.NS, ".system.buckets.") {
		return nil
	}
	cv, err := r.validatorOf(c)
	if err != nil || cv == nil || cv.level == "off" {
		return err
	}
	if ok, err := cv.filter.MatchErr(doc); ok && err == nil {
		return nil
	}
	if old != nil && cv.level == "moderate" {
		if ok, err := cv.filter.MatchErr(old); !ok || err != nil {
			return nil
		}
	}
	info := bson.D{{Key: "failingDocumentId", Value: doc.Lookup("_id")}, {Key: "details", Value: cv.filter.Explain(doc)}}
	if cv.action == "warn" {
		r.Env.log.Warn("Document would fail validation", "namespace", c.NS, "document", doc.String(), "errInfo", mustExtJSON(info))
		return nil
	}
	return mongoerr.New(mongoerr.DocumentValidationFailure, "Document failed validation").With("errInfo", info)
}

// mustExtJSON renders d as relaxed Extended JSON for a log line.
func mustExtJSON(d bson.D) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// collModValidation applies collMod's validation options to ns. It
// returns NamespaceNotFound (26) when ns does not exist and
// InvalidOptions (72) for a view.
func (r *Request) collModValidation(ctx context.Context, ns string, changes map[string]*bson.E) error {
	return r.Env.Store.WriteExclusive(ctx, lockNS(ns), func(w *storage.Writer) error {
		c := w.Collection(ns)
		if c == nil {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns)
		}
		if viewOf(c) != nil {
			return mongoerr.New(mongoerr.InvalidOptions, "option not supported on a view: validator")
		}
		opts, err := setValidationOptions(c.Options, changes)
		if err != nil {
			return err
		}
		return w.SetOptions(ns, opts)
	})
}
