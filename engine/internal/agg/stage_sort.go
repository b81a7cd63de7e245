package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
)

func init() { register("$sort", 0, parseSort) }

// stageSort is {$sort: spec}, optionally bounded by a following $limit
// (a top-k sort, as mongod coalesces them). Ties keep input order.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/sort/
type stageSort struct {
	spec  bson.Raw
	ord   *order.Order
	limit int64 // 0: none
}

// parseSort parses $sort: 15973 when the spec is not a document, 15976
// when it is empty, then order's codes.
func parseSort(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.Code(15973), "the $sort key specification must be an object")
	}
	if len(mustElems(doc)) == 0 {
		return nil, mongoerr.New(mongoerr.Code(15976), "$sort stage must have at least one sort key")
	}
	o, err := order.Compile(doc)
	if err != nil {
		return nil, err
	}
	if _, nat := o.Natural(); nat {
		return nil, mongoerr.New(mongoerr.Code(17312), "$meta is the only expression supported by $sort right now")
	}
	o = o.WithCollation(pc.opts.Collation)
	return &stageSort{spec: doc, ord: o}, nil
}

func (s *stageSort) name() string { return "$sort" }

func (s *stageSort) explain() bson.D {
	d := bson.D{{Key: "sortKey", Value: s.spec}}
	if s.limit > 0 {
		d = append(d, bson.E{Key: "limit", Value: s.limit})
	}
	return bson.D{{Key: "$sort", Value: d}}
}

func (s *stageSort) deps(d *depSet) bool {
	d.add(s.ord.Paths()...)
	return false
}

// newSorter returns a sorter under the sort memory limit.
func newSorter(rc *runCtx, less func(a, b bson.Raw) bool, lim int64, what string) *sorter {
	return &sorter{less: less, limit: lim, disk: rc.opts.AllowDiskUse, dir: rc.opts.TempDir, what: what, st: rc.st}
}

func (s *stageSort) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	srt := newSorter(rc, func(a, b bson.Raw) bool { return s.ord.Compare(a, b) < 0 }, limit(rc.opts.Limits.Sort), "Sort")
	srt.topK = s.limit
	var out Source
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if out == nil {
			for {
				d, err := in.Next(ctx)
				if err != nil {
					return nil, err
				}
				if d == nil {
					break
				}
				if _, err := s.ord.Key(d); err != nil {
					return nil, err
				}
				if err := srt.add(d); err != nil {
					return nil, err
				}
			}
			var err error
			if out, err = srt.finish(); err != nil {
				return nil, err
			}
			if srt.st != nil {
				srt.st.extra = append(srt.st.extra, bson.E{Key: "totalDataSizeSortedBytesEstimate", Value: srt.total})
			}
		}
		return out.Next(ctx)
	}, close: func() {
		in.Close()
		if out != nil {
			out.Close()
		}
		srt.close()
	}}, nil
}
