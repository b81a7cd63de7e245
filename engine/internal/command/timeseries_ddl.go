package command

import (
	"strings"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// dropTimeseriesBuckets drops the buckets of c when c is a time series,
// as dropping a time series drops both of its namespaces.
func dropTimeseriesBuckets(w *storage.Writer, c *storage.Collection) error {
	ts := tsOf(c)
	if ts == nil || w.Collection(ts.bucketsNS) == nil {
		return nil
	}
	return w.DropCollection(ts.bucketsNS)
}

// checkRenameTimeseries refuses what mongod 7.0 refuses: renaming a time
// series (a view over its buckets: CommandNotSupportedOnView), renaming
// its buckets collection (IllegalOperation), or renaming over either.
func (e *Env) checkRenameTimeseries(from, to string) error {
	for _, ns := range []string{from, to} {
		if e.tsColl(ns) != nil {
			return mongoerr.Newf(mongoerr.CommandNotSupportedOnView, "cannot rename view: %s", ns)
		}
		if _, coll := storage.SplitNS(ns); strings.HasPrefix(coll, bucketsPrefix) && e.Store.Collection(ns) != nil {
			return mongoerr.Newf(mongoerr.IllegalOperation, "Renaming system.buckets collections is not allowed: %s", ns)
		}
	}
	return nil
}
