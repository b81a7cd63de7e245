package agg

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/timeseries"
)

func init() { register("$_internalUnpackBucket", 0, parseUnpackBucket) }

// stageUnpackBucket is {$_internalUnpackBucket: {timeField, metaField,
// bucketMaxSpanSeconds}}, the first stage of a time series' view: it
// turns each bucket document into its measurements. A $match that
// follows it is absorbed as its eventFilter, and the bucket-level form of
// that filter (timeseries.BucketFilter) moves ahead of it, where the
// query layer runs it against the buckets with their indexes, as mongod's
// DocumentSourceInternalUnpackBucket::doOptimizeAt does.
type stageUnpackBucket struct {
	opts    *timeseries.Options
	event   []*Filter // the absorbed $match filters
	evSpecs []bson.Raw
}

// parseUnpackBucket parses the stage: 5346500 when the spec is not a
// document, 5346504 for a timeField that is missing or not a string,
// 5346505 for a metaField that is not a string, 5510600 for a bad
// bucketMaxSpanSeconds, 5346506 for an unknown field.
func parseUnpackBucket(pc *parseCtx, spec bson.RawValue) (stage, error) {
	d, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.Code(5346500), "$_internalUnpackBucket specification must be an object, got: "+bsonkit.TypeName(spec.Type))
	}
	o := &timeseries.Options{}
	s := &stageUnpackBucket{opts: o}
	var err error
	bsonkit.ForEach(d, func(k string, v bson.RawValue) bool {
		switch k {
		case "timeField":
			t, ok := v.StringValueOK()
			if !ok {
				err = mongoerr.New(mongoerr.Code(5346504), "timeField field must be a string, got: "+bsonkit.TypeName(v.Type))
			}
			o.TimeField = t
		case "metaField":
			m, ok := v.StringValueOK()
			if !ok {
				err = mongoerr.New(mongoerr.Code(5346505), "metaField field must be a string, got: "+bsonkit.TypeName(v.Type))
			}
			o.MetaField = m
		case "bucketMaxSpanSeconds":
			n, ok := bsonkit.ExactInt64(v)
			if !ok || n < 1 {
				err = mongoerr.New(mongoerr.Code(5510600), "bucketMaxSpanSeconds field must be an integer greater than zero")
			}
			o.MaxSpan = n
		case "eventFilter":
			ev, ok := v.DocumentOK()
			if !ok {
				err = mongoerr.New(mongoerr.Code(5346506), "eventFilter must be an object")
				return false
			}
			var f *Filter
			if f, err = compileFilter(ev, pc.scope, pc.vars, pc.opts.Now); err == nil {
				s.event, s.evSpecs = append(s.event, f), append(s.evSpecs, ev)
			}
		case "include", "exclude", "assumeNoMixedSchemaData", "wholeBucketFilter", "bucketRoundingSeconds", "usesExtendedRange", "fixedBuckets", "computedMetaProjFields":
		default:
			err = mongoerr.New(mongoerr.Code(5346506), "unrecognized parameter to $_internalUnpackBucket: "+k)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if o.TimeField == "" {
		return nil, mongoerr.New(mongoerr.Code(5346504), "The $_internalUnpackBucket stage requires a timeField parameter")
	}
	if o.MaxSpan == 0 {
		o.MaxSpan = 3600
	}
	o.Rounding = o.MaxSpan
	return s, nil
}

// name returns the stage name.
func (s *stageUnpackBucket) name() string { return "$_internalUnpackBucket" }

// explain shows the stage as mongod 7.0 does, with the absorbed filter as
// eventFilter.
func (s *stageUnpackBucket) explain() bson.D {
	d := bson.D{{Key: "exclude", Value: bson.A{}}, {Key: "timeField", Value: s.opts.TimeField}}
	if s.opts.MetaField != "" {
		d = append(d, bson.E{Key: "metaField", Value: s.opts.MetaField})
	}
	d = append(d, bson.E{Key: "bucketMaxSpanSeconds", Value: int32(s.opts.MaxSpan)}, bson.E{Key: "assumeNoMixedSchemaData", Value: true})
	switch len(s.evSpecs) {
	case 0:
	case 1:
		d = append(d, bson.E{Key: "eventFilter", Value: s.evSpecs[0]})
	default:
		arr := bson.A{}
		for _, e := range s.evSpecs {
			arr = append(arr, e)
		}
		d = append(d, bson.E{Key: "eventFilter", Value: bson.D{{Key: "$and", Value: arr}}})
	}
	return bson.D{{Key: "$_internalUnpackBucket", Value: d}}
}

// absorb takes the $match m that follows the stage: the measurement
// filter joins the eventFilter and the bucket-level filter, when there is
// one, goes first.
func (s *stageUnpackBucket) absorb(m *stageMatch) []stage {
	n := *s
	n.event = append(append([]*Filter(nil), s.event...), m.filters...)
	n.evSpecs = append(append([]bson.Raw(nil), s.evSpecs...), m.spec)
	bf := s.opts.BucketFilter(m.spec)
	if bf == nil {
		return []stage{&n}
	}
	f, err := compileFilter(bf, expr.NewScope(), nil, time.Time{})
	if err != nil {
		return []stage{&n}
	}
	return []stage{&stageMatch{spec: bf, filters: []*Filter{f}}, &n}
}

// open unpacks each bucket of in and passes the measurements that match
// the eventFilter.
func (s *stageUnpackBucket) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	c := rc.exprCtx()
	var u *timeseries.Unpacker
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		for {
			if u != nil {
				d := u.Next()
				if d == nil {
					u = nil
					continue
				}
				ok := true
				for _, f := range s.event {
					m, err := f.Match(c, d)
					if err != nil {
						return nil, err
					}
					if !m {
						ok = false
						break
					}
				}
				if ok {
					return d, nil
				}
				continue
			}
			bd, err := in.Next(ctx)
			if err != nil || bd == nil {
				return nil, err
			}
			b, err := s.opts.Decode(bd)
			if err != nil {
				return nil, err
			}
			u = s.opts.Unpack(b, nil)
		}
	}, close: in.Close}, nil
}
