package command

import (
	"context"
	"runtime"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/admission"
)

// Reads and writes run on a ticket from the engine's admission gate
// (package admission): at most Config.Tickets of them execute at once,
// and a waiting read is admitted before a waiting write, so that point
// reads keep their latency when more clients than CPUs write. Every
// other command (the handshake, DDL, administration, commitTransaction
// and abortTransaction, which a waiting write may need to finish) runs
// without one, as mongod exempts such operations from its tickets.

// newGate returns the gate for Config.Tickets.
func newGate(tickets int) *admission.Gate {
	if tickets == 0 {
		tickets = 2 * runtime.GOMAXPROCS(0)
	}
	return admission.New(tickets)
}

// admissionClass returns the queue command name waits in, or false for
// a command that runs without a ticket.
func admissionClass(name string) (admission.Class, bool) {
	switch name {
	case "find", "getMore", "count", "distinct", "aggregate", "explain":
		return admission.Read, true
	case "insert", "update", "delete", "findAndModify":
		return admission.Write, true
	}
	return 0, false
}

// runAdmitted runs h for r under the failCommand failpoint (runFailCommand)
// once r holds a ticket, when its command needs one. A command run inside
// another (which already holds one) does not queue again.
func (e *Env) runAdmitted(ctx context.Context, r *Request, h handler) (bson.D, error) {
	class, ok := admissionClass(r.Name)
	if !ok || e.gate == nil || admission.FromContext(ctx) != nil {
		return e.runFailCommand(ctx, r, h)
	}
	t, err := e.gate.Acquire(ctx, class)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	return e.runFailCommand(admission.NewContext(ctx, t), r, h)
}
