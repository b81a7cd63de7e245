package bucket

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Load inserts es as new buckets of the owner, Size elements each (the
// last may hold fewer), in order, with one insertMany, and returns their
// _ids: the bulk load of a history, and how Repair moves elements. It
// does not look for an open bucket, so a load may leave the owner with a
// partly filled bucket besides its open one (see "Two open buckets" in
// the package documentation). With Config.Time each bucket's bounds and
// openedAt come from its elements.
func (s *Store[E]) Load(ctx context.Context, owner any, es []E) ([]any, error) {
	var docs []any
	var ids []any
	for from := 0; from < len(es); from += s.cfg.Size {
		chunk := es[from:min(from+s.cfg.Size, len(es))]
		var span timeSpan
		for _, e := range chunk {
			var err error
			if span, err = s.inspect(e, span); err != nil {
				return nil, fmt.Errorf("bucket: load: %w", err)
			}
		}
		id := bson.NewObjectID()
		d := bson.D{{Key: "_id", Value: id}, {Key: s.cfg.Owner, Value: owner},
			{Key: s.cfg.Count, Value: int32(len(chunk))}, {Key: s.cfg.Elements, Value: chunk}}
		if s.cfg.Time != "" {
			d = append(d, bson.E{Key: s.cfg.OpenedAt, Value: span.min},
				bson.E{Key: s.cfg.MinTime, Value: span.min}, bson.E{Key: s.cfg.MaxTime, Value: span.max})
		} else {
			d = append(d, bson.E{Key: s.cfg.OpenedAt, Value: s.cfg.Clock().UTC()})
		}
		docs, ids = append(docs, d), append(ids, id)
	}
	if len(docs) == 0 {
		return nil, nil
	}
	if _, err := s.coll.InsertMany(ctx, docs); err != nil {
		return nil, fmt.Errorf("bucket: load: %w", err)
	}
	return ids, nil
}
