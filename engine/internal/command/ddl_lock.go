package command

import (
	"strings"

	"github.com/formworkdb/formwork/engine/internal/storage"
)

// DDL commands wait behind open transactions holding documents of the
// collections they change, as mongod's exclusive collection lock makes
// them, bounded by the command's maxTimeMS (ctx) and by the transaction's
// lifetime limit (storage.Store.WriteExclusive).

// lockNS names the collections ns and its time-series buckets collection
// (system.buckets.<coll>) for storage.Store.WriteExclusive.
func lockNS(nss ...string) func(c *storage.Collection) bool {
	return func(c *storage.Collection) bool {
		for _, ns := range nss {
			db, coll := storage.SplitNS(ns)
			if c.NS == ns || c.NS == db+".system.buckets."+coll {
				return true
			}
		}
		return false
	}
}

// lockDB names every collection of database db.
func lockDB(db string) func(c *storage.Collection) bool {
	return func(c *storage.Collection) bool { return strings.HasPrefix(c.NS, db+".") }
}
