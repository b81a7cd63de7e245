package approx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Mode chooses when a Counter writes.
type Mode int

const (
	// Deterministic writes N on every N-th event of a key.
	Deterministic Mode = iota
	// Probabilistic writes N with probability 1/N on each event.
	Probabilistic
)

// String returns "deterministic" or "probabilistic".
func (m Mode) String() string {
	switch m {
	case Deterministic:
		return "deterministic"
	case Probabilistic:
		return "probabilistic"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Config describes one counter.
type Config struct {
	// Field is the counter field of the counter documents, e.g. "views".
	Field string
	// N is the step: one write adds N. 1 writes every event.
	N int
	// Mode is Deterministic or Probabilistic.
	Mode Mode
	// Rand is the random source of Probabilistic mode; nil seeds one from
	// the clock. The Counter owns it after New (it is not safe for
	// concurrent use, so the Counter serialises its use).
	Rand *rand.Rand
}

// Validate reports an empty, dotted or $-prefixed Field, "_id", N below
// 1, or an unknown Mode.
func (c Config) Validate() error {
	if c.Field == "" || c.Field == "_id" || strings.ContainsAny(c.Field, ".$") {
		return fmt.Errorf("approx: config: Field %q: must be a top-level field other than _id", c.Field)
	}
	if c.N < 1 {
		return fmt.Errorf("approx: config: N %d: must be at least 1", c.N)
	}
	if c.Mode != Deterministic && c.Mode != Probabilistic {
		return fmt.Errorf("approx: config: unknown %v", c.Mode)
	}
	return nil
}

// Counter counts events per key in documents {_id: key, <Field>: n}. It
// is safe for concurrent use.
type Counter struct {
	coll   *mongo.Collection
	cfg    Config
	writes atomic.Int64

	mu      sync.Mutex
	pending map[string]int64 // events not written yet, per key
	rng     *rand.Rand
}

// New returns a Counter writing to coll. It returns cfg.Validate's error.
func New(coll *mongo.Collection, cfg Config) (*Counter, error) {
	if coll == nil {
		return nil, errors.New("approx: new: nil collection")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := cfg.Rand
	if rng == nil {
		now := uint64(time.Now().UnixNano())
		rng = rand.New(rand.NewPCG(now, now>>17^0x9e3779b97f4a7c15))
	}
	return &Counter{coll: coll, cfg: cfg, pending: map[string]int64{}, rng: rng}, nil
}

// EnsureIndexes creates nothing: counters are read and written by _id
// only. It exists so that every pattern is set up the same way.
func (c *Counter) EnsureIndexes(ctx context.Context) error { return nil }

// Incr counts one event of key. In Deterministic mode it writes N on the
// key's N-th pending event; in Probabilistic mode with probability 1/N.
// On a failed write the amount stays pending (see the loss window in
// the package doc) and the error is returned.
func (c *Counter) Incr(ctx context.Context, key string) error {
	c.mu.Lock()
	var amount int64
	switch c.cfg.Mode {
	case Deterministic:
		c.pending[key]++
		if c.pending[key] >= int64(c.cfg.N) {
			amount = c.pending[key]
			delete(c.pending, key)
		}
	case Probabilistic:
		if c.rng.IntN(c.cfg.N) == 0 {
			amount = int64(c.cfg.N)
		}
		// A failed earlier write rides along with this one.
		if amount > 0 && c.pending[key] > 0 {
			amount += c.pending[key]
			delete(c.pending, key)
		}
	}
	c.mu.Unlock()
	if amount == 0 {
		return nil
	}
	if err := c.write(ctx, key, amount); err != nil {
		c.putBack(key, amount)
		return fmt.Errorf("approx: incr: %w", err)
	}
	return nil
}

// putBack returns amount to key's pending count after a failed write.
func (c *Counter) putBack(key string, amount int64) {
	c.mu.Lock()
	c.pending[key] += amount
	c.mu.Unlock()
}

// write adds amount to key's stored count.
func (c *Counter) write(ctx context.Context, key string, amount int64) error {
	filter := bson.D{{Key: "_id", Value: key}}
	upd := bson.D{{Key: "$inc", Value: bson.D{{Key: c.cfg.Field, Value: amount}}}}
	opts := options.UpdateOne().SetUpsert(true)
	c.writes.Add(1)
	_, err := c.coll.UpdateOne(ctx, filter, upd, opts)
	if mongo.IsDuplicateKeyError(err) {
		// Another upsert of the same new key won the insert; the document
		// exists now and the update applies.
		c.writes.Add(1)
		_, err = c.coll.UpdateOne(ctx, filter, upd, opts)
	}
	return err
}

// Flush writes every pending count, one unordered bulk write, and leaves
// nothing pending; call it on shutdown. Events counted while Flush runs
// stay pending for the next Flush. On error, the counts whose write
// failed are pending again.
func (c *Counter) Flush(ctx context.Context) error {
	c.mu.Lock()
	batch := c.pending
	c.pending = map[string]int64{}
	c.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	keys := make([]string, 0, len(batch))
	models := make([]mongo.WriteModel, 0, len(batch))
	for k, n := range batch {
		keys = append(keys, k)
		models = append(models, mongo.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: k}}).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: c.cfg.Field, Value: n}}}}).
			SetUpsert(true))
	}
	c.writes.Add(1)
	_, err := c.coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err == nil {
		return nil
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && bwe.WriteConcernError == nil && len(bwe.WriteErrors) > 0 {
		var retry []string
		for _, we := range bwe.WriteErrors {
			if we.Code == 11000 {
				retry = append(retry, keys[we.Index])
				continue
			}
			c.putBack(keys[we.Index], batch[keys[we.Index]])
		}
		// Lost upsert races: the documents exist now.
		var errs []error
		for _, k := range retry {
			if werr := c.write(ctx, k, batch[k]); werr != nil {
				c.putBack(k, batch[k])
				errs = append(errs, werr)
			}
		}
		if len(retry) == len(bwe.WriteErrors) && errs == nil {
			return nil
		}
		return fmt.Errorf("approx: flush: %w", errors.Join(append([]error{err}, errs...)...))
	}
	// Nothing says which writes applied: keep them all pending.
	for k, n := range batch {
		c.putBack(k, n)
	}
	return fmt.Errorf("approx: flush: %w", err)
}

// Pending returns the events of key counted by this Counter and not yet
// written.
func (c *Counter) Pending(key string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending[key]
}

// Writes returns the number of write commands this Counter has sent.
func (c *Counter) Writes() int64 { return c.writes.Load() }

// Get returns key's stored count, 0 when it has none: what every process
// sees, without this process's pending events.
func (c *Counter) Get(ctx context.Context, key string) (int64, error) {
	doc, err := c.coll.FindOne(ctx, bson.D{{Key: "_id", Value: key}},
		options.FindOne().SetProjection(bson.D{{Key: c.cfg.Field, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("approx: get: %w", err)
	}
	v, ok := doc.Lookup(c.cfg.Field).AsInt64OK()
	if !ok {
		return 0, fmt.Errorf("approx: get: %s of %q is not a number", c.cfg.Field, key)
	}
	return v, nil
}
