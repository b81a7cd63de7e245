package versioning

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/internal/jsonschema"
)

// Live is one version still present in the collection.
type Live struct {
	Version int       // the version (documents without the field count as Config.Missing)
	Count   int64     // documents at that version
	Oldest  time.Time // the oldest one's TimeField or ObjectID time; zero when unknown
}

// Report lists the versions still live, oldest first, so that a migration
// gets finished: it is done when only the newest is left.
type Report struct {
	Latest int
	Live   []Live
}

// Finished reports whether every document is at the newest version.
func (r Report) Finished() bool {
	for _, l := range r.Live {
		if l.Version != r.Latest && l.Count > 0 {
			return false
		}
	}
	return true
}

// Versions returns the live version numbers, oldest first.
func (r Report) Versions() []int {
	out := make([]int, 0, len(r.Live))
	for _, l := range r.Live {
		out = append(out, l.Version)
	}
	return out
}

// String returns one line per live version: "version 1: 120 documents,
// oldest 2025-03-02 (274 days)".
func (r Report) String() string {
	if len(r.Live) == 0 {
		return "no documents"
	}
	var b strings.Builder
	for i, l := range r.Live {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "version %d: %d documents", l.Version, l.Count)
		if !l.Oldest.IsZero() {
			fmt.Fprintf(&b, ", oldest %s (%d days)", l.Oldest.Format("2006-01-02"), int(time.Since(l.Oldest).Hours()/24))
		}
		if l.Version == r.Latest {
			b.WriteString(" (newest)")
		}
	}
	return b.String()
}

// Report counts the documents at each version with one $group, and finds
// each version's oldest document.
func (s *Store[T]) Report(ctx context.Context) (Report, error) {
	r := Report{Latest: s.Latest()}
	group := bson.D{
		{Key: "_id", Value: bson.D{{Key: "$ifNull", Value: bson.A{"$" + s.cfg.Field, s.cfg.Missing}}}},
		{Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}},
		{Key: "minId", Value: bson.D{{Key: "$min", Value: "$_id"}}},
	}
	if s.cfg.TimeField != "" {
		group = append(group, bson.E{Key: "oldest", Value: bson.D{{Key: "$min", Value: "$" + s.cfg.TimeField}}})
	}
	cur, err := s.coll.Aggregate(ctx, bson.A{
		bson.D{{Key: "$group", Value: group}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		return r, err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		v, ok := cur.Current.Lookup("_id").AsInt64OK()
		if !ok {
			return r, fmt.Errorf("versioning: report: %s %v: %w", s.cfg.Field, cur.Current.Lookup("_id"), ErrUnknownVersion)
		}
		n, _ := cur.Current.Lookup("n").AsInt64OK()
		l := Live{Version: int(v), Count: n}
		if d, ok := cur.Current.Lookup("oldest").DateTimeOK(); ok {
			l.Oldest = time.UnixMilli(d).UTC()
		} else if oid, ok := cur.Current.Lookup("minId").ObjectIDOK(); ok && s.cfg.TimeField == "" {
			l.Oldest = oid.Timestamp().UTC()
		}
		r.Live = append(r.Live, l)
	}
	return r, cur.Err()
}

// Schema returns the $jsonSchema accepting the given versions: a oneOf
// with one branch per version, {<field>: {enum: [n]}} and, where the
// Version has a Schema value, the fields its struct requires. The branch
// of Config.Missing accepts documents without the field.
func (s *Store[T]) Schema(versions ...int) (bson.D, error) {
	branches := bson.A{}
	for _, n := range versions {
		if n < s.first() || n > s.Latest() {
			return nil, fmt.Errorf("versioning: schema: version %d: %w", n, ErrUnknownVersion)
		}
		props := bson.D{{Key: s.cfg.Field, Value: bson.D{{Key: "enum", Value: bson.A{n}}}}}
		required := bson.A{}
		if n != s.cfg.Missing {
			required = append(required, s.cfg.Field)
		}
		if v := s.version(n); v.Schema != nil {
			obj, err := jsonschema.Object(typeOf(v.Schema), s.cfg.Field)
			if err != nil {
				return nil, err
			}
			for _, e := range obj {
				switch e.Key {
				case "properties":
					props = append(props, e.Value.(bson.D)...)
				case "required":
					required = append(required, e.Value.(bson.A)...)
				}
			}
		}
		branch := bson.D{{Key: "properties", Value: props}}
		if len(required) > 0 {
			branch = append(branch, bson.E{Key: "required", Value: required})
		}
		branches = append(branches, branch)
	}
	return bson.D{{Key: "bsonType", Value: "object"}, {Key: "oneOf", Value: branches}}, nil
}

// EnsureValidator installs the validator the migration's state calls for
// and returns the validation level it chose: while several versions are
// live, a oneOf of the live versions (and the newest) at level
// "moderate", so an update of a document already invalid is not refused;
// once only the newest is live, the newest version's schema alone at
// level "strict". Run it again when Migrate finishes. action is "error"
// or "warn".
func (s *Store[T]) EnsureValidator(ctx context.Context, action string) (string, error) {
	rep, err := s.Report(ctx)
	if err != nil {
		return "", err
	}
	versions := rep.Versions()
	if len(versions) == 0 || versions[len(versions)-1] != s.Latest() {
		versions = append(versions, s.Latest())
	}
	level := "moderate"
	if len(versions) == 1 {
		level = "strict"
	}
	schema, err := s.Schema(versions...)
	if err != nil {
		return "", err
	}
	val := bson.D{{Key: "$jsonSchema", Value: schema}}
	if action == "" {
		action = "error"
	}
	err = s.coll.Database().CreateCollection(ctx, s.coll.Name(), options.CreateCollection().
		SetValidator(val).SetValidationLevel(level).SetValidationAction(action))
	var ce mongo.CommandError
	if err == nil {
		return level, nil
	}
	if !errors.As(err, &ce) || ce.Code != 48 { // NamespaceExists
		return "", err
	}
	return level, s.coll.Database().RunCommand(ctx, bson.D{
		{Key: "collMod", Value: s.coll.Name()}, {Key: "validator", Value: val},
		{Key: "validationLevel", Value: level}, {Key: "validationAction", Value: action},
	}).Err()
}
