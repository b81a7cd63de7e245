package command

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/admission"
)

// maxConnections is the connection limit serverStatus reports as
// current + available (mongod's default net.maxIncomingConnections).
const maxConnections = 838860

// opKinds are serverStatus opcounters' fields, in mongod's order.
var opKinds = [...]string{"insert", "query", "update", "delete", "getmore", "command"}

// serverStats are the counters serverStatus reports. Every one is an
// atomic, so the request path never takes a lock to count.
type serverStats struct {
	ops [len(opKinds)]atomic.Int64

	bytesIn, bytesOut, requests atomic.Int64

	docsInserted, docsUpdated, docsDeleted, docsReturned atomic.Int64

	userAsserts atomic.Int64
}

// opIndex returns kind's index in opKinds, or -1.
func opIndex(kind string) int {
	for i, k := range opKinds {
		if k == kind {
			return i
		}
	}
	return -1
}

// countOp counts one command of kind for opcounters. Inserts, updates and
// deletes are counted per document or statement by observe instead, as
// mongod counts them.
func (s *serverStats) countOp(kind string) {
	switch kind {
	case "insert", "update", "delete":
		return
	}
	if i := opIndex(kind); i >= 0 {
		s.ops[i].Add(1)
	}
}

// observe counts a finished command: opcounters' inserts (per document),
// updates and deletes (per statement), metrics.document from its reply,
// and asserts.user for an error.
func (s *serverStats) observe(name string, body bson.Raw, reply bson.D, err error) {
	if err != nil {
		s.userAsserts.Add(1)
	}
	statements := func(field string) int64 {
		v, e := body.LookupErr(field)
		if e != nil {
			return 0
		}
		arr, ok := v.ArrayOK()
		if !ok {
			return 0
		}
		vals, _ := arr.Values()
		return int64(len(vals))
	}
	switch name {
	case "insert":
		s.ops[0].Add(statements("documents"))
		s.docsInserted.Add(replyInt(reply, "n"))
	case "update":
		s.ops[2].Add(statements("updates"))
		s.docsUpdated.Add(replyInt(reply, "nModified"))
	case "delete":
		s.ops[3].Add(statements("deletes"))
		s.docsDeleted.Add(replyInt(reply, "n"))
	case "find", "aggregate", "getMore":
		s.docsReturned.Add(replyBatchLen(reply))
	}
}

// replyInt returns the integer reply field key, or 0.
func replyInt(reply bson.D, key string) int64 {
	for _, e := range reply {
		if e.Key != key {
			continue
		}
		switch v := e.Value.(type) {
		case int32:
			return int64(v)
		case int64:
			return v
		case int:
			return int64(v)
		}
	}
	return 0
}

// replyBatchLen returns the length of a cursor reply's first or next batch.
func replyBatchLen(reply bson.D) int64 {
	for _, e := range reply {
		if e.Key != "cursor" {
			continue
		}
		cur, ok := e.Value.(bson.D)
		if !ok {
			return 0
		}
		for _, f := range cur {
			if f.Key == "firstBatch" || f.Key == "nextBatch" {
				return int64(batchLen(f.Value))
			}
		}
	}
	return 0
}

// NoteNetwork counts one request of in bytes answered with out bytes
// (0 when the client asked for no reply), for serverStatus' network
// section. The server calls it for every message.
func (e *Env) NoteNetwork(in, out int) {
	e.stats.requests.Add(1)
	e.stats.bytesIn.Add(int64(in))
	e.stats.bytesOut.Add(int64(out))
}

// activeConnections counts the connections running an operation now.
func (e *Env) activeConnections() int32 {
	p := e.inprog
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[int64]bool{}
	for _, op := range p.ops {
		if op.r.Conn != nil {
			seen[op.r.Conn.ID] = true
		}
	}
	return int32(len(seen))
}

// residentMiB returns the process's resident and virtual memory in MiB,
// from /proc on Linux and from the Go runtime elsewhere.
func residentMiB(ms *runtime.MemStats) (resident, virtual int32) {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 2 {
			vp, err1 := strconv.ParseInt(f[0], 10, 64)
			rp, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 == nil && err2 == nil {
				page := int64(os.Getpagesize())
				return int32(rp * page >> 20), int32(vp * page >> 20)
			}
		}
	}
	return int32(ms.Sys >> 20), int32(ms.Sys >> 20)
}

// runServerStatus reports the sections monitoring tools read: uptime,
// connections, network, opcounters (and opcountersRepl, all zero on one
// node), asserts, mem, metrics (cursor, document, ttl), the storage
// engine and WiredTiger-like cache figures from Pebble's metrics.
// https://www.mongodb.com/docs/manual/reference/command/serverStatus/
func runServerStatus(ctx context.Context, r *Request) (bson.D, error) {
	e := r.Env
	up := time.Since(e.started)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	ops, repl := bson.D{}, bson.D{}
	for i, k := range opKinds {
		ops = append(ops, bson.E{Key: k, Value: e.stats.ops[i].Load()})
		repl = append(repl, bson.E{Key: k, Value: int64(0)})
	}
	cur := e.connCurrent.Load()
	host, _ := os.Hostname()
	res, virt := residentMiB(&ms)
	cs := e.Store.CacheStats()
	wal := e.Store.WALStats()
	disk := e.Store.Disk()
	d := bson.D{
		{Key: "host", Value: host},
		{Key: "version", Value: Version},
		{Key: "process", Value: "formwork"},
		{Key: "pid", Value: int64(os.Getpid())},
		{Key: "uptime", Value: up.Seconds()},
		{Key: "uptimeMillis", Value: up.Milliseconds()},
		{Key: "uptimeEstimate", Value: int64(up.Seconds())},
		{Key: "localTime", Value: bson.NewDateTimeFromTime(time.Now())},
		{Key: "asserts", Value: bson.D{
			{Key: "regular", Value: int32(0)},
			{Key: "warning", Value: int32(0)},
			{Key: "msg", Value: int32(0)},
			{Key: "user", Value: int32(e.stats.userAsserts.Load())},
			{Key: "tripwire", Value: int32(0)},
			{Key: "rollovers", Value: int32(0)},
		}},
		{Key: "connections", Value: bson.D{
			{Key: "current", Value: int32(cur)},
			{Key: "available", Value: int32(maxConnections - cur)},
			{Key: "totalCreated", Value: int32(e.nextCID.Load())},
			{Key: "rejected", Value: int32(0)},
			{Key: "active", Value: e.activeConnections()},
		}},
		{Key: "network", Value: bson.D{
			{Key: "bytesIn", Value: e.stats.bytesIn.Load()},
			{Key: "bytesOut", Value: e.stats.bytesOut.Load()},
			{Key: "physicalBytesIn", Value: e.stats.bytesIn.Load()},
			{Key: "physicalBytesOut", Value: e.stats.bytesOut.Load()},
			{Key: "numRequests", Value: e.stats.requests.Load()},
		}},
		{Key: "opcounters", Value: ops},
		{Key: "opcountersRepl", Value: repl},
		{Key: "mem", Value: bson.D{{Key: "bits", Value: int32(64)}, {Key: "resident", Value: res}, {Key: "virtual", Value: virt}, {Key: "supported", Value: true}}},
		{Key: "metrics", Value: bson.D{
			{Key: "cursor", Value: bson.D{
				{Key: "timedOut", Value: e.Cursors.timedOut.Load()},
				{Key: "open", Value: bson.D{
					{Key: "noTimeout", Value: int64(0)},
					{Key: "pinned", Value: int64(0)},
					{Key: "total", Value: int64(e.Cursors.Open())},
				}},
			}},
			{Key: "document", Value: bson.D{
				{Key: "deleted", Value: e.stats.docsDeleted.Load()},
				{Key: "inserted", Value: e.stats.docsInserted.Load()},
				{Key: "returned", Value: e.stats.docsReturned.Load()},
				{Key: "updated", Value: e.stats.docsUpdated.Load()},
			}},
			{Key: "ttl", Value: bson.D{{Key: "deletedDocuments", Value: e.ttl.deleted.Load()}, {Key: "passes", Value: e.ttl.passes.Load()}}},
		}},
		{Key: "storageEngine", Value: bson.D{{Key: "name", Value: "formwork"}, {Key: "supportsCommittedReads", Value: true}, {Key: "persistent", Value: e.Store.Durable()}}},
		// Divergence: the storage engine is Pebble, not WiredTiger; this
		// section carries the cache figures that have a Pebble equivalent
		// (block cache capacity and use, memtables as dirty bytes, block
		// reads as pages read) under WiredTiger's names, so that
		// monitoring tools' cache panels work.
		{Key: "wiredTiger", Value: bson.D{
			{Key: "cache", Value: bson.D{
				{Key: "maximum bytes configured", Value: cs.ConfiguredBytes},
				{Key: "bytes currently in the cache", Value: cs.CachedBytes + cs.DirtyBytes},
				{Key: "tracked dirty bytes in the cache", Value: cs.DirtyBytes},
				{Key: "pages requested from the cache", Value: cs.Hits + cs.Misses},
				{Key: "pages read into cache", Value: cs.Misses},
				{Key: "pages written from cache", Value: cs.Flushes + cs.Compactions},
			}},
			{Key: "block-manager", Value: bson.D{{Key: "bytes on disk", Value: int64(cs.DiskBytes)}}},
			// The write-ahead log: durable writes (log write
			// operations) and the fdatasyncs that carried them, several
			// writes per sync under concurrency (group commit).
			{Key: "log", Value: bson.D{
				{Key: "log write operations", Value: wal.Commits},
				{Key: "log sync operations", Value: wal.Syncs},
				{Key: "log sync time duration (usecs)", Value: wal.SyncMicros},
				{Key: "log bytes written", Value: int64(wal.BytesWritten)},
			}},
			{Key: "formwork", Value: bson.D{
				{Key: "disk available bytes", Value: int64(disk.AvailBytes)},
				{Key: "writes refused: disk full", Value: disk.Full},
			}},
		}},
	}
	if e.gate != nil {
		d = append(d, bson.E{Key: "queues", Value: bson.D{{Key: "execution", Value: bson.D{
			{Key: "read", Value: ticketStats(e.gate.Stats(admission.Read))},
			{Key: "write", Value: ticketStats(e.gate.Stats(admission.Write))},
		}}}})
	}
	if !e.Config.Standalone {
		d = append(d, bson.E{Key: "repl", Value: bson.D{
			{Key: "hosts", Value: bson.A{e.Config.Host}},
			{Key: "setName", Value: e.Config.SetName},
			{Key: "isWritablePrimary", Value: true},
			{Key: "secondary", Value: false},
			{Key: "primary", Value: e.Config.Host},
			{Key: "me", Value: e.Config.Host},
		}})
	}
	return d, nil
}

// ticketStats is one class of serverStatus queues.execution, as mongod
// 7.0 reports its read and write tickets. Formwork's two classes share
// one pool (admission.go), so available and totalTickets are the pool's.
func ticketStats(s admission.ClassStats) bson.D {
	return bson.D{
		{Key: "out", Value: s.Out},
		{Key: "available", Value: s.Available},
		{Key: "totalTickets", Value: s.TotalTickets},
		{Key: "addedToQueue", Value: s.AddedToQueue},
		{Key: "removedFromQueue", Value: s.RemovedFromQueue},
		{Key: "queueLength", Value: s.QueueLength},
		{Key: "startedProcessing", Value: s.StartedProcessing},
		{Key: "processing", Value: s.Processing},
		{Key: "finishedProcessing", Value: s.FinishedProcessing},
		{Key: "totalTimeProcessingMicros", Value: s.TotalTimeProcessingMicros},
		{Key: "canceled", Value: s.Canceled},
		{Key: "newAdmissions", Value: s.NewAdmissions},
		{Key: "totalTimeQueuedMicros", Value: s.TotalTimeQueuedMicros},
	}
}
