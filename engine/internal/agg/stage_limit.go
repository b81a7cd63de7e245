package agg

import (
	"context"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("$limit", 0, parseLimit)
	register("$skip", 0, parseSkip)
}

// nonNegativeLong parses a $skip/$limit argument as mongod's
// parseIntegerElementToNonNegativeLong does; the error is its reason.
func nonNegativeLong(name string, v bson.RawValue) (int64, string) {
	show := fmt.Sprintf("%s: %s", name, showValue(v))
	var n int64
	switch v.Type {
	case bson.TypeInt32:
		n = int64(v.Int32())
	case bson.TypeInt64:
		n = v.Int64()
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, "Expected an integer: " + show
		}
		if f >= math.MaxInt64 || f < math.MinInt64 {
			return 0, "Cannot represent as a 64-bit integer: " + show
		}
		n = int64(f)
	case bson.TypeDecimal128:
		f, ok := decimalToFloat(v)
		if !ok || f != math.Trunc(f) {
			return 0, "Expected an integer: " + show
		}
		if f >= math.MaxInt64 || f < math.MinInt64 {
			return 0, "Cannot represent as a 64-bit integer: " + show
		}
		n = int64(f)
	default:
		return 0, "Expected a number in: " + show
	}
	if n < 0 {
		return 0, "Expected a non-negative number in: " + show
	}
	return n, ""
}

// stageLimit is {$limit: n}. https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/limit/
type stageLimit struct{ n int64 }

// parseLimit parses $limit: 5107201 for a non-integer or negative
// argument, 15958 for zero.
func parseLimit(_ *parseCtx, spec bson.RawValue) (stage, error) {
	n, why := nonNegativeLong("$limit", spec)
	if why != "" {
		return nil, mongoerr.New(mongoerr.Code(5107201), "invalid argument to $limit stage: "+why)
	}
	if n == 0 {
		return nil, mongoerr.New(mongoerr.Code(15958), "the limit must be positive")
	}
	return &stageLimit{n: n}, nil
}

func (s *stageLimit) name() string        { return "$limit" }
func (s *stageLimit) explain() bson.D     { return bson.D{{Key: "$limit", Value: s.n}} }
func (s *stageLimit) deps(d *depSet) bool { return false }

func (s *stageLimit) open(_ context.Context, _ *runCtx, in Source) (Source, error) {
	left := s.n
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if left <= 0 {
			return nil, nil
		}
		d, err := in.Next(ctx)
		if d != nil {
			left--
		}
		return d, err
	}, close: in.Close}, nil
}

// stageSkip is {$skip: n}. https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/skip/
type stageSkip struct{ n int64 }

// parseSkip parses $skip: 5107200 for a non-integer or negative argument.
func parseSkip(_ *parseCtx, spec bson.RawValue) (stage, error) {
	n, why := nonNegativeLong("$skip", spec)
	if why != "" {
		return nil, mongoerr.New(mongoerr.Code(5107200), "invalid argument to $skip stage: "+why)
	}
	return &stageSkip{n: n}, nil
}

func (s *stageSkip) name() string        { return "$skip" }
func (s *stageSkip) explain() bson.D     { return bson.D{{Key: "$skip", Value: s.n}} }
func (s *stageSkip) deps(d *depSet) bool { return false }

func (s *stageSkip) open(_ context.Context, _ *runCtx, in Source) (Source, error) {
	left := s.n
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		for left > 0 {
			d, err := in.Next(ctx)
			if err != nil || d == nil {
				return nil, err
			}
			left--
		}
		return in.Next(ctx)
	}, close: in.Close}, nil
}
