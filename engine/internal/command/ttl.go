package command

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// ttlStats counts the TTL monitor's work for serverStatus.
type ttlStats struct {
	passes  atomic.Int64
	deleted atomic.Int64
}

// ExpireTTL runs one pass of the TTL monitor: every document whose TTL
// index field holds a date (or an array whose earliest date) older than
// expireAfterSeconds before now is deleted. It returns how many documents
// it deleted.
// https://www.mongodb.com/docs/manual/core/index-ttl/
func (e *Env) ExpireTTL(ctx context.Context, now time.Time) (int64, error) {
	e.ttl.passes.Add(1)
	var total int64
	for _, c := range e.Store.Collections("") {
		for _, ix := range c.Indexes {
			sp := ix.Def.Spec()
			if sp.ExpireAfterSeconds == nil || len(sp.Fields) != 1 || sp.IsID() {
				continue
			}
			cutoff := now.Add(-time.Duration(*sp.ExpireAfterSeconds) * time.Second)
			n, err := e.expireIndex(ctx, c.NS, ix.Name, strings.Split(sp.Fields[0].Path, "."), sp.Fields[0].Desc, cutoff)
			if err != nil {
				return total, err
			}
			total += n
		}
	}
	n, err := e.expireTimeseries(ctx, now)
	total += n
	e.ttl.deleted.Add(total)
	return total, err
}

func (e *Env) expireIndex(ctx context.Context, ns, name string, path []string, desc bool, cutoff time.Time) (int64, error) {
	var n int64
	err := e.Store.Write(func(w *storage.Writer) error {
		c := w.Collection(ns)
		if c == nil {
			return nil
		}
		ix := c.IndexByName(name)
		if ix == nil {
			return nil
		}
		lo, hi := keystring.TypeRange(bson.TypeDateTime, desc)
		rd := w.Reader()
		es, err := rd.IndexScan(c, ix, lo, hi, false)
		if err != nil {
			return err
		}
		seen := map[int64]bool{}
		var rids []int64
		for es.Next() {
			rid, err := es.RecordID()
			if err != nil {
				es.Close()
				return err
			}
			if !seen[rid] {
				seen[rid] = true
				rids = append(rids, rid)
			}
		}
		es.Close()
		for _, rid := range rids {
			if err := ctx.Err(); err != nil {
				return err
			}
			doc, err := rd.Fetch(c, rid)
			if err != nil {
				return err
			}
			if doc == nil || !expired(doc, path, cutoff) {
				continue
			}
			// A document an open transaction holds is write-conflicted:
			// mongod's TTL monitor skips it and deletes it on a later
			// pass, rather than make the transaction fail at commit.
			if w.Held(c, rid) {
				continue
			}
			if err := w.Delete(c, rid, doc); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// expired reports whether the earliest date at path is before cutoff.
func expired(doc bson.Raw, path []string, cutoff time.Time) bool {
	var dates []bson.RawValue
	collectDistinct(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, path, &dates)
	limit := cutoff.UnixMilli()
	for _, v := range dates {
		if v.Type == bson.TypeDateTime && v.DateTime() <= limit {
			return true
		}
	}
	return false
}
