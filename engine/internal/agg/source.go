package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// sliceSource yields the documents of a slice in order.
type sliceSource struct {
	docs []bson.Raw
	i    int
}

// NewSliceSource returns a Source over docs, which it does not copy.
func NewSliceSource(docs []bson.Raw) Source { return &sliceSource{docs: docs} }

func (s *sliceSource) Next(ctx context.Context) (bson.Raw, error) {
	if s.i >= len(s.docs) {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := s.docs[s.i]
	s.i++
	return d, nil
}

func (s *sliceSource) Close() { s.docs = nil }

// funcSource adapts a next function and a close function to Source.
type funcSource struct {
	next  func(ctx context.Context) (bson.Raw, error)
	close func()
}

func (f *funcSource) Next(ctx context.Context) (bson.Raw, error) { return f.next(ctx) }

func (f *funcSource) Close() {
	if f.close != nil {
		f.close()
		f.close = nil
	}
}

// drain reads all of src into a slice, closing it.
func drain(ctx context.Context, src Source) ([]bson.Raw, error) {
	defer src.Close()
	var out []bson.Raw
	for {
		d, err := src.Next(ctx)
		if err != nil || d == nil {
			return out, err
		}
		out = append(out, d)
	}
}

// Drain reads every document of src and closes it; a convenience for
// hosts and tests.
func Drain(ctx context.Context, src Source) ([]bson.Raw, error) { return drain(ctx, src) }
