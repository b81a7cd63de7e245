package archive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// JobsCollection is the collection of the live database where runs
// record their progress, one document per archived collection.
const JobsCollection = pattern.JobsCollection

// Archiver moves documents of type T older than a cutoff from a live
// collection to an archive collection, in the same or another database.
// T is the user's struct (bson tags respected) or bson.D. It holds no
// state besides its configuration and is safe for concurrent use, but
// two Runs on one collection at once share one progress record: run one
// at a time.
type Archiver[T any] struct {
	live    *mongo.Collection
	archive *mongo.Collection
	jobs    *mongo.Collection
	cfg     Config
	hook    func(point string) // test hook, called at each kill point
}

// New returns an Archiver from live into archive. archive may be in
// another database of the same deployment ($merge writes across
// databases; a sharded cluster needs that database to exist). It returns
// cfg.Validate's error, which wraps ErrInvalidConfig.
func New[T any](live, archive *mongo.Collection, cfg Config) (*Archiver[T], error) {
	if live == nil || archive == nil {
		return nil, fmt.Errorf("archive: new: %w: nil collection", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if live.Database().Name() == archive.Database().Name() && live.Name() == archive.Name() {
		return nil, fmt.Errorf("archive: new: %w: live and archive are the same collection", ErrInvalidConfig)
	}
	return &Archiver[T]{live: live, archive: archive, cfg: cfg.withDefaults(),
		jobs: live.Database().Collection(JobsCollection)}, nil
}

// Config returns the configuration, with defaults filled in.
func (a *Archiver[T]) Config() Config { return a.cfg }

// Live returns the live collection.
func (a *Archiver[T]) Live() *mongo.Collection { return a.live }

// Archive returns the archive collection.
func (a *Archiver[T]) Archive() *mongo.Collection { return a.archive }

// Name says which archive this is: "archive <db>.<coll> -> <db>.<coll>".
func (a *Archiver[T]) Name() string {
	return "archive " + ns(a.live) + " -> " + ns(a.archive)
}

// ns returns a collection's namespace.
func ns(c *mongo.Collection) string { return c.Database().Name() + "." + c.Name() }

// jobID is the _id of this collection's progress record.
func (a *Archiver[T]) jobID() string { return "archive " + ns(a.live) }

// EnsureIndexes creates {<Field>: 1} on the live collection (it drives
// the oldest-first slice search, the copy's $match and the delete) and on
// the archive (it drives Archived, Export and ProvenDelete). It is
// idempotent.
func (a *Archiver[T]) EnsureIndexes(ctx context.Context) error {
	for _, c := range []*mongo.Collection{a.live, a.archive} {
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: a.cfg.Field, Value: 1}}}); err != nil {
			return fmt.Errorf("archive: ensure indexes on %s: %w", ns(c), err)
		}
	}
	return nil
}

// Get reads the document id as a T, from the live collection or, when it
// is not there, from the archive; archived says which. It wraps
// ErrNotFound.
func (a *Archiver[T]) Get(ctx context.Context, id any) (doc T, archived bool, err error) {
	for i, c := range []*mongo.Collection{a.live, a.archive} {
		err = c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		if err == nil {
			return doc, i == 1, nil
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return doc, false, fmt.Errorf("archive: get %v: %w", id, err)
		}
	}
	return doc, false, fmt.Errorf("archive: get %v: %w", id, ErrNotFound)
}

// maxRead bounds the documents Archived returns in one call.
const maxRead = 100_000

// Archived reads the archived documents whose Field is in [from, to), in
// Field then _id order, through the archive's {<Field>: 1} index; at most
// limit (1 to 100,000; 0 is 100,000).
func (a *Archiver[T]) Archived(ctx context.Context, from, to time.Time, limit int) ([]T, error) {
	if limit <= 0 || limit > maxRead {
		limit = maxRead
	}
	cur, err := a.archive.Find(ctx, a.rangeFilter(from, to, false),
		options.Find().SetSort(bson.D{{Key: a.cfg.Field, Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("archive: archived: %w", err)
	}
	var out []T
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("archive: archived: %w", err)
	}
	return out, nil
}

// rangeFilter is {<Field>: {$gte: from, $lt: to}}, with Config.Filter
// when withFilter (the live side; the archive holds only what passed it).
func (a *Archiver[T]) rangeFilter(from, to time.Time, withFilter bool) bson.D {
	r := bson.D{}
	if !from.IsZero() {
		r = append(r, bson.E{Key: "$gte", Value: from})
	}
	r = append(r, bson.E{Key: "$lt", Value: to})
	f := bson.D{{Key: a.cfg.Field, Value: r}}
	if withFilter && len(a.cfg.Filter) > 0 {
		f = bson.D{{Key: "$and", Value: bson.A{f, a.cfg.Filter}}}
	}
	return f
}

// copyPipeline is the slice's copy: $match, the Embed lookups, $merge
// into the archive on _id.
func (a *Archiver[T]) copyPipeline(match bson.D) mongo.Pipeline {
	p := mongo.Pipeline{{{Key: "$match", Value: match}}}
	for _, e := range a.cfg.Embed {
		ff := e.ForeignField
		if ff == "" {
			ff = "_id"
		}
		lk := bson.D{{Key: "from", Value: e.From}, {Key: "localField", Value: e.LocalField},
			{Key: "foreignField", Value: ff}}
		if len(e.Fields) > 0 {
			proj := bson.D{}
			for _, f := range e.Fields {
				proj = append(proj, bson.E{Key: f, Value: 1})
			}
			lk = append(lk, bson.E{Key: "pipeline", Value: bson.A{bson.D{{Key: "$project", Value: proj}}}})
		}
		lk = append(lk, bson.E{Key: "as", Value: e.As})
		p = append(p, bson.D{{Key: "$lookup", Value: lk}},
			bson.D{{Key: "$set", Value: bson.D{{Key: e.As, Value: bson.D{{Key: "$ifNull", Value: bson.A{
				bson.D{{Key: "$first", Value: "$" + e.As}}, nil}}}}}}})
	}
	return append(p, bson.D{{Key: "$merge", Value: bson.D{
		{Key: "into", Value: bson.D{{Key: "db", Value: a.archive.Database().Name()}, {Key: "coll", Value: a.archive.Name()}}},
		{Key: "on", Value: "_id"},
		{Key: "whenMatched", Value: a.cfg.WhenMatched.String()},
		{Key: "whenNotMatched", Value: "insert"},
	}}})
}

// zeroTime is the open lower bound of a range filter.
var zeroTime time.Time
