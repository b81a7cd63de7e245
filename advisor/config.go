package advisor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Thresholds are the figures at which checks report. Zero fields take
// the defaults of DefaultThresholds, which come from the catalogue
// (/docs/CATALOGUE.md); each field names the checks that read it.
type Thresholds struct {
	// ArrayLen is the array length past which an array is unbounded
	// (unbounded-array: 95th percentile ≥ ArrayLen; outlier-skew: maximum
	// ≥ ArrayLen while the 95th percentile is below it). The catalogue's
	// "arrays past a few hundred elements": 200.
	ArrayLen int `json:"arrayLen"`
	// OutlierRatio is how many times the 95th percentile the longest
	// array must be for outlier-skew: 10.
	OutlierRatio float64 `json:"outlierRatio"`
	// HotShape is the number of executions that makes a shape hot
	// (lookup-hot, repeated-group, offset-pagination, pipeline-stage-order,
	// blocking-sort, esr-violation): 20.
	HotShape int64 `json:"hotShape"`
	// HotCounter is the number of $inc updates of one shape on _id that
	// makes a hot counter (hot-counter): 1000.
	HotCounter int64 `json:"hotCounter"`
	// EventDocs is the number of documents past which a collection of
	// small dated documents is an event log (event-per-document): 10000.
	EventDocs int64 `json:"eventDocs"`
	// EventDocBytes is the median document size under which a dated
	// document is one event (event-per-document): 512 bytes.
	EventDocBytes int64 `json:"eventDocBytes"`
	// SparseShare is the presence under which a top-level field is sparse
	// (sparse-attributes): 0.1 of the sampled documents.
	SparseShare float64 `json:"sparseShare"`
	// SparseFields is the number of sparse fields past which a collection
	// wants the attribute pattern (sparse-attributes): 10.
	SparseFields int `json:"sparseFields"`
	// CommonKeyShare is the share of documents past which a key of a k/v
	// array belongs at top level (attribute-overuse): 0.9.
	CommonKeyShare float64 `json:"commonKeyShare"`
	// NumericStringShare is the share of a key's values that are numbers
	// stored as strings past which attribute-numeric-strings reports:
	// 0.5.
	NumericStringShare float64 `json:"numericStringShare"`
	// ColdDays is the age in days past which a document is cold
	// (cold-data-in-hot-index): 365.
	ColdDays int `json:"coldDays"`
	// ColdShare is the share of cold documents past which
	// cold-data-in-hot-index reports: 0.5.
	ColdShare float64 `json:"coldShare"`
	// ColdDocs is the collection size under which archiving is not worth
	// it (cold-data-in-hot-index): 10000 documents.
	ColdDocs int64 `json:"coldDocs"`
	// ScanKeys is the number of keys plus documents examined per
	// execution past which a regex scan is reported
	// (unanchored-path-regex): 1000.
	ScanKeys int64 `json:"scanKeys"`
	// DriftShare is the share of sampled copies that differ from their
	// source past which volatile-extended-reference reports: 0.05.
	DriftShare float64 `json:"driftShare"`
	// PositionalArrayLen is the median array length past which a
	// positional update rewrites a large array
	// (positional-update-large-array): 100.
	PositionalArrayLen int `json:"positionalArrayLen"`
	// Skip is the skip past which a shape pages by offset
	// (offset-pagination): 1000.
	Skip int64 `json:"skip"`
	// DocWarnBytes and DocErrorBytes are the document sizes past which
	// large-documents warns and errs: 2 MB and 8 MiB (half of 16 MiB).
	DocWarnBytes  int64 `json:"docWarnBytes"`
	DocErrorBytes int64 `json:"docErrorBytes"`
	// Indexes is the number of indexes on one collection past which
	// index-limit warns (the limit is 64): 50.
	Indexes int `json:"indexes"`
	// Discriminators is the largest number of distinct values a field may
	// have to count as a discriminator (mixed-shapes,
	// schema-versions-live): 20.
	Discriminators int `json:"discriminators"`
}

// DefaultThresholds returns the catalogue's defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{
		ArrayLen:           200,
		OutlierRatio:       10,
		HotShape:           20,
		HotCounter:         1000,
		EventDocs:          10000,
		EventDocBytes:      512,
		SparseShare:        0.1,
		SparseFields:       10,
		CommonKeyShare:     0.9,
		NumericStringShare: 0.5,
		ColdDays:           365,
		ColdShare:          0.5,
		ColdDocs:           10000,
		ScanKeys:           1000,
		DriftShare:         0.05,
		PositionalArrayLen: 100,
		Skip:               1000,
		DocWarnBytes:       2_000_000,
		DocErrorBytes:      8 << 20,
		Indexes:            50,
		Discriminators:     20,
	}
}

// withDefaults fills t's zero fields from DefaultThresholds.
func (t Thresholds) withDefaults() Thresholds {
	d := DefaultThresholds()
	setI := func(v *int, dv int) {
		if *v == 0 {
			*v = dv
		}
	}
	setI64 := func(v *int64, dv int64) {
		if *v == 0 {
			*v = dv
		}
	}
	setF := func(v *float64, dv float64) {
		if *v == 0 {
			*v = dv
		}
	}
	setI(&t.ArrayLen, d.ArrayLen)
	setF(&t.OutlierRatio, d.OutlierRatio)
	setI64(&t.HotShape, d.HotShape)
	setI64(&t.HotCounter, d.HotCounter)
	setI64(&t.EventDocs, d.EventDocs)
	setI64(&t.EventDocBytes, d.EventDocBytes)
	setF(&t.SparseShare, d.SparseShare)
	setI(&t.SparseFields, d.SparseFields)
	setF(&t.CommonKeyShare, d.CommonKeyShare)
	setF(&t.NumericStringShare, d.NumericStringShare)
	setI(&t.ColdDays, d.ColdDays)
	setF(&t.ColdShare, d.ColdShare)
	setI64(&t.ColdDocs, d.ColdDocs)
	setI64(&t.ScanKeys, d.ScanKeys)
	setF(&t.DriftShare, d.DriftShare)
	setI(&t.PositionalArrayLen, d.PositionalArrayLen)
	setI64(&t.Skip, d.Skip)
	setI64(&t.DocWarnBytes, d.DocWarnBytes)
	setI64(&t.DocErrorBytes, d.DocErrorBytes)
	setI(&t.Indexes, d.Indexes)
	setI(&t.Discriminators, d.Discriminators)
	return t
}

// coldAge returns ColdDays as a duration.
func (t Thresholds) coldAge() time.Duration { return time.Duration(t.ColdDays) * 24 * time.Hour }

// Set sets the threshold named by its JSON name (e.g. "arrayLen") from
// text, as the CLI's --threshold name=value does.
func (t *Thresholds) Set(name, value string) error {
	known := false
	b, _ := json.Marshal(t)
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	for k := range m {
		if strings.EqualFold(k, name) {
			name, known = k, true
		}
	}
	if !known {
		return fmt.Errorf("advisor: unknown threshold %q", name)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(fmt.Sprintf("{%q: %s}", name, value))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(t); err != nil {
		return fmt.Errorf("advisor: threshold %s=%s: %w", name, value, err)
	}
	return nil
}

// ThresholdList returns "name=default" for every threshold, for help text.
func ThresholdList() string {
	b, _ := json.Marshal(DefaultThresholds())
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.Decode(&m)
	var out []string
	for k, v := range m {
		out = append(out, k+"="+string(v))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
