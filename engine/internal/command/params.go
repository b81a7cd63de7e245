package command

import (
	"sort"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// parameters are the server parameters getParameter and setParameter read
// and change. Only parameters whose effect the engine implements are
// settable.
type parameters struct {
	mu     sync.Mutex
	values map[string]any
	// settable lists the parameters setParameter may change.
	settable map[string]bool
}

func newParameters() *parameters {
	return &parameters{
		values: map[string]any{
			"featureCompatibilityVersion":                  bson.D{{Key: "version", Value: "7.0"}},
			"internalQueryMaxBlockingSortMemoryUsageBytes": int64(100 * 1024 * 1024),
			"allowDiskUseByDefault":                        true,
			"maxBSONDepth":                                 int32(200),
			"cursorTimeoutMillis":                          int64(600000),
			"authenticationMechanisms":                     bson.A{},
			"logLevel":                                     int32(0),
			"quiet":                                        false,
			"notablescan":                                  false,
			"requireApiVersion":                            false,
			"transactionLifetimeLimitSeconds":              int32(60),
			"transactionSizeLimitBytes":                    int64(storage.DefaultTxnLimit),
			// Memory limits of the aggregation stages (agg.Limits).
			"internalDocumentSourceGroupMaxMemoryBytes":           int64(100 * 1024 * 1024),
			"internalDocumentSourceBucketAutoMaxMemoryBytes":      int64(100 * 1024 * 1024),
			"internalDocumentSourceSetWindowFieldsMaxMemoryBytes": int64(100 * 1024 * 1024),
			"internalDocumentSourceGraphLookupMaxMemoryBytes":     int64(100 * 1024 * 1024),
			"internalQueryMaxAllowedDensifyDocs":                  int32(500000),
		},
		settable: map[string]bool{
			"transactionLifetimeLimitSeconds":                     true,
			"transactionSizeLimitBytes":                           true,
			"internalQueryMaxBlockingSortMemoryUsageBytes":        true,
			"allowDiskUseByDefault":                               true,
			"logLevel":                                            true,
			"quiet":                                               true,
			"internalDocumentSourceGroupMaxMemoryBytes":           true,
			"internalDocumentSourceBucketAutoMaxMemoryBytes":      true,
			"internalDocumentSourceSetWindowFieldsMaxMemoryBytes": true,
			"internalDocumentSourceGraphLookupMaxMemoryBytes":     true,
			"internalQueryMaxAllowedDensifyDocs":                  true,
		},
	}
}

// Int returns a numeric parameter.
func (p *parameters) Int(name string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch v := p.values[name].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	}
	return 0
}

func (p *parameters) get(names []string, all bool) (bson.D, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out bson.D
	if all {
		keys := make([]string, 0, len(p.values))
		for k := range p.values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		names = keys
	}
	for _, n := range names {
		v, ok := p.values[n]
		if !ok {
			continue
		}
		out = append(out, bson.E{Key: n, Value: v})
	}
	if len(out) == 0 {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "no option found to get")
	}
	return out, nil
}

func (p *parameters) set(name string, v bson.RawValue) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, known := p.values[name]
	if !known {
		return nil, mongoerr.Newf(mongoerr.InvalidOptions, "attempted to set unrecognized parameter [%s], use help:true to see options ", name)
	}
	if !p.settable[name] {
		return nil, mongoerr.Newf(mongoerr.IllegalOperation, "not allowed to change [%s] at runtime", name)
	}
	switch old.(type) {
	case bool:
		b, ok := asBool(v)
		if !ok {
			return nil, mongoerr.Newf(mongoerr.BadValue, "Invalid value for %s: expected a boolean", name)
		}
		p.values[name] = b
	case int64, int32:
		n, ok := asInt(v)
		if !ok || n < 0 {
			return nil, mongoerr.Newf(mongoerr.BadValue, "Invalid value for %s: expected a non-negative integer", name)
		}
		if _, is32 := old.(int32); is32 {
			if n > 1<<31-1 {
				return nil, mongoerr.Newf(mongoerr.BadValue, "Invalid value for %s: out of range for a 32-bit integer", name)
			}
			p.values[name] = int32(n)
		} else {
			p.values[name] = n
		}
	}
	return old, nil
}
