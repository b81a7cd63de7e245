package command

import (
	"math"
	"math/rand/v2"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// fpMode is how a failpoint decides whether it fires, as mongod's
// FailPoint::Mode.
type fpMode int

const (
	fpOff fpMode = iota
	fpAlwaysOn
	fpTimes  // fires on the next val evaluations, then turns off
	fpSkip   // lets the first val evaluations pass, then always fires
	fpRandom // fires with probability prob
)

// failPoint is one named fault-injection point, configured by
// configureFailPoint. It is safe for concurrent use.
type failPoint struct {
	mu           sync.Mutex
	mode         fpMode
	val          int64   // times left (fpTimes) or evaluations to skip (fpSkip)
	prob         float64 // fpRandom's activation probability
	data         bson.Raw
	timesEntered int64
}

// fpConfig is a parsed configureFailPoint request.
type fpConfig struct {
	mode fpMode
	val  int64
	prob float64
	data bson.Raw
}

// set installs cfg and returns how many times the failpoint had fired
// before, which configureFailPoint reports as count.
func (fp *failPoint) set(cfg fpConfig) int64 {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.mode, fp.val, fp.prob, fp.data = cfg.mode, cfg.val, cfg.prob, cfg.data
	return fp.timesEntered
}

// enabled reports, without evaluating anything, whether the failpoint is
// on at all; it keeps the common path to one lock.
func (fp *failPoint) enabled() bool {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	return fp.mode != fpOff
}

// evaluate decides whether the failpoint fires for one candidate. pred
// sees the data first; as in mongod, an evaluation that pred rejects
// consumes neither a time nor a skip. It returns the data when it fires.
func (fp *failPoint) evaluate(pred func(data bson.Raw) bool) (bson.Raw, bool) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if fp.mode == fpOff {
		return nil, false
	}
	if pred != nil && !pred(fp.data) {
		return nil, false
	}
	on := false
	switch fp.mode {
	case fpAlwaysOn:
		on = true
	case fpRandom:
		on = rand.Float64() < fp.prob
	case fpTimes:
		// {times: 0} still fires once, as mongod's counter does: it is
		// decremented first and turns the failpoint off at zero or below.
		fp.val--
		if fp.val <= 0 {
			fp.mode = fpOff
		}
		on = true
	case fpSkip:
		if fp.val <= 0 {
			on = true
		} else {
			fp.val--
		}
	}
	if on {
		fp.timesEntered++
	}
	return fp.data, on
}

// failPoints holds the engine's failpoints by name.
type failPoints struct {
	byName map[string]*failPoint
}

// failCommandFP is the failpoint that fails, blocks or disconnects
// commands (mongod's failCommand).
const failCommandFP = "failCommand"

// onPrimaryTransactionalWriteFP is the failpoint that interrupts a
// retryable write where it records its statement: it closes the
// connection after the write commits (the reply is lost, the retry finds
// the write done) or, with failBeforeCommitExceptionCode, fails it before
// anything commits.
const onPrimaryTransactionalWriteFP = "onPrimaryTransactionalWrite"

func newFailPoints() *failPoints {
	return &failPoints{byName: map[string]*failPoint{failCommandFP: {}, onPrimaryTransactionalWriteFP: {}, failGetMoreFP: {}}}
}

// parseFailPointConfig parses the mode and data of a configureFailPoint
// command with mongod's errors (FailPoint::parseBSON).
func parseFailPointConfig(body bson.Raw) (fpConfig, error) {
	var cfg fpConfig
	modeV, err := body.LookupErr("mode")
	if err != nil {
		return cfg, mongoerr.New(mongoerr.IllegalOperation, "When setting a failpoint, you must supply a 'mode'")
	}
	switch modeV.Type {
	case bson.TypeString:
		switch s := modeV.StringValue(); s {
		case "off":
			cfg.mode = fpOff
		case "alwaysOn":
			cfg.mode = fpAlwaysOn
		default:
			return cfg, mongoerr.Newf(mongoerr.BadValue, "unknown mode: %s", s)
		}
	case bson.TypeEmbeddedDocument:
		m := modeV.Document()
		if v, err := m.LookupErr("times"); err == nil {
			n, err := fpCount("times", v)
			if err != nil {
				return cfg, err
			}
			cfg.mode, cfg.val = fpTimes, n
		} else if v, err := m.LookupErr("skip"); err == nil {
			n, err := fpCount("skip", v)
			if err != nil {
				return cfg, err
			}
			cfg.mode, cfg.val = fpSkip, n
		} else if v, err := m.LookupErr("activationProbability"); err == nil {
			p, ok := numberOf(v)
			if !ok {
				return cfg, mongoerr.New(mongoerr.TypeMismatch, "the 'activationProbability' option to 'mode' must be a double between 0 and 1")
			}
			if !(p >= 0 && p <= 1) {
				return cfg, mongoerr.Newf(mongoerr.BadValue, "activationProbability must be between 0.0 and 1.0; found %v", p)
			}
			cfg.mode, cfg.prob = fpRandom, p
		} else {
			return cfg, mongoerr.New(mongoerr.BadValue, "'mode' must be one of 'off', 'alwaysOn', '{times:n}', '{skip:n}' or '{activationProbability:p}'")
		}
	default:
		return cfg, mongoerr.New(mongoerr.TypeMismatch, "'mode' must be a string or JSON object")
	}
	if v, err := body.LookupErr("data"); err == nil {
		d, ok := v.DocumentOK()
		if !ok {
			return cfg, mongoerr.New(mongoerr.TypeMismatch, "the 'data' option must be a JSON object")
		}
		cfg.data = append(bson.Raw(nil), d...)
	}
	return cfg, nil
}

// fpCount reads a times or skip count: an integral number from 0 to
// 2^31-1.
func fpCount(name string, v bson.RawValue) (int64, error) {
	f, ok := numberOf(v)
	if !ok {
		return 0, mongoerr.Newf(mongoerr.TypeMismatch, "\"%s\" had the wrong type. Expected number, found %s", name, typeName(v.Type))
	}
	if f != math.Trunc(f) {
		return 0, mongoerr.Newf(mongoerr.BadValue, "Expected field \"%s\" to have a value exactly representable as a 64-bit integer, but found %s: %v", name, name, f)
	}
	if f < 0 {
		return 0, mongoerr.Newf(mongoerr.BadValue, "'%s' option to 'mode' must be positive", name)
	}
	if f > math.MaxInt32 {
		return 0, mongoerr.Newf(mongoerr.BadValue, "'%s' option to 'mode' is too large", name)
	}
	return int64(f), nil
}
