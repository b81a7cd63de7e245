package command

import (
	"context"
	"net"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("shutdown", &spec{run: runShutdown, adminOnly: true, help: "stop the server: finish the operations in progress, then close the storage"})
}

// defaultShutdownWait is how long shutdown waits for operations in
// progress when timeoutSecs is not given (mongod's default).
const defaultShutdownWait = 15 * time.Second

// runShutdown stops the engine, from a local client only unless access
// control is on (as mongod's localHostOnlyIfNoAuth; with --auth the
// shutdown privilege decides, authz_table.go). New commands are refused
// with ShutdownInProgress at once; the operations already running get up
// to timeoutSecs to finish (none with force: true); then the engine
// closes every connection, this one included without a reply (mongod
// exits), and closes the storage.
// https://www.mongodb.com/docs/manual/reference/command/shutdown/
func runShutdown(ctx context.Context, r *Request) (bson.D, error) {
	force := false
	wait := defaultShutdownWait
	if err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "force":
			b, ok := asBool(v)
			if !ok {
				return mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'shutdown.force' is the wrong type '%s', expected types '[bool, long, int, decimal, double']", typeName(v.Type))
			}
			force = b
		case "timeoutSecs":
			n, ok := asInt(v)
			if !ok || !isNumber(v) {
				return mongoerr.Newf(mongoerr.TypeMismatch, "BSON field 'shutdown.timeoutSecs' is the wrong type '%s', expected type 'long'", typeName(v.Type))
			}
			wait = time.Duration(max(n, 0)) * time.Second
		default:
			return errUnknown
		}
		return nil
	}); err != nil {
		return nil, err
	}
	e := r.Env
	if !r.Env.Config.Auth && !isLocalClient(r.Conn.Remote) {
		return nil, mongoerr.New(mongoerr.Unauthorized, "shutdown must run from localhost when running db without auth")
	}
	if e.Config.OnShutdown == nil {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "shutdown is not available in this embedding: close the engine instead")
	}
	if !e.shuttingDown.CompareAndSwap(false, true) {
		return nil, mongoerr.New(mongoerr.ShutdownInProgress, "shutdown already in progress")
	}
	e.log.Info("Received shutdown command", "force", force, "timeoutSecs", int64(wait/time.Second))
	if !force {
		deadline := time.Now().Add(wait)
		for e.inprog.busy(r) > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	r.Conn.closeRequested.Store(true)
	go e.Config.OnShutdown()
	return nil, mongoerr.New(mongoerr.InterruptedAtShutdown, "interrupted at shutdown")
}

// busy counts the operations in progress other than self and awaitable
// hellos (which wait for a topology change that will not come).
func (p *inProgress) busy(self *Request) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, op := range p.ops {
		if op.r == self || op.r.Name == "hello" || op.r.Name == "isMaster" {
			continue
		}
		n++
	}
	return n
}

// isLocalClient reports whether remote, a connection's peer address, is
// this host: a loopback address or an in-process pipe.
func isLocalClient(remote string) bool {
	if remote == "pipe" {
		return true
	}
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuseDuringShutdown answers every command but shutdown with
// ShutdownInProgress once shutdown began.
func (e *Env) refuseDuringShutdown(r *Request) error {
	if e.shuttingDown.Load() && r.Name != "shutdown" {
		return mongoerr.New(mongoerr.ShutdownInProgress, "The server is in quiesce mode and will shut down")
	}
	return nil
}
