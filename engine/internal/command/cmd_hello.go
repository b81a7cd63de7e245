package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

func init() {
	register("hello", &spec{run: runHello, apiV1: true, help: "describe the server's role and limits"})
	register("isMaster", &spec{run: runHello, help: "legacy name of hello"})
}

// Wire versions: 21 is MongoDB 7.0.
const (
	minWireVersion = 0
	maxWireVersion = 21
)

// runHello answers hello and isMaster. By default the server describes
// itself as the primary of a one-member replica set so that drivers use
// sessions and retryable writes.
//
// Divergence: the reply has no topologyVersion, so drivers monitor the
// server by polling rather than with awaitable hellos. A one-node topology
// never changes, and an awaitable hello that a driver sends while opening
// its monitoring connection cannot be cancelled by the driver, which made
// client Disconnect wait for the full maxAwaitTimeMS.
// https://www.mongodb.com/docs/manual/reference/command/hello/
func runHello(ctx context.Context, r *Request) (bson.D, error) {
	var (
		helloOk bool
		client  bson.Raw
		// authentication fields, answered by helloAuth (cmd_sasl.go)
		mechsFor    string
		speculative bool
		specDoc     bson.Raw
	)
	err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "helloOk":
			helloOk, err = wantBool(r.Name, k, v)
		case "client":
			client, err = wantDoc(r.Name, k, v)
		case "topologyVersion":
			_, err = wantDoc(r.Name, k, v)
		case "maxAwaitTimeMS":
			_, err = wantNonNegative(r.Name, k, v)
		case "compression":
			// No compressor is offered: the reply names none.
		case "saslSupportedMechs":
			mechsFor, err = wantString(r.Name, k, v)
		case "speculativeAuthenticate":
			specDoc, err = wantDoc(r.Name, k, v)
			speculative = true
		case "loadBalanced":
			if on, _ := asBool(v); on {
				return mongoerr.New(mongoerr.Code(50701 /* not a load balancer */), "The server is not configured for load balanced connections")
			}
		default:
			// hello's IDL is not strict: drivers add fields (hostInfo,
			// internalClient, backpressure, ...) that older servers ignore.
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if client != nil {
		if r.Conn.handshakeDone {
			return nil, mongoerr.New(mongoerr.ClientMetadataCannotBeMutated, "The client metadata document may only be sent in the first hello")
		}
		r.Conn.Client = client
	}
	r.Conn.handshakeDone = true
	e := r.Env
	d := bson.D{}
	if helloOk {
		d = append(d, bson.E{Key: "helloOk", Value: true})
	}
	if !e.Config.Standalone {
		d = append(d,
			bson.E{Key: "hosts", Value: bson.A{e.Config.Host}},
			bson.E{Key: "setName", Value: e.Config.SetName},
			bson.E{Key: "setVersion", Value: int32(1)})
	}
	if r.Name == "hello" {
		d = append(d, bson.E{Key: "isWritablePrimary", Value: true})
	} else {
		d = append(d, bson.E{Key: "ismaster", Value: true})
	}
	if !e.Config.Standalone {
		ts := e.clock.current()
		d = append(d,
			bson.E{Key: "secondary", Value: false},
			bson.E{Key: "primary", Value: e.Config.Host},
			bson.E{Key: "me", Value: e.Config.Host},
			bson.E{Key: "electionId", Value: electionID},
			bson.E{Key: "lastWrite", Value: bson.D{
				{Key: "opTime", Value: bson.D{{Key: "ts", Value: ts}, {Key: "t", Value: int64(1)}}},
				{Key: "lastWriteDate", Value: bson.NewDateTimeFromTime(time.Unix(int64(ts.T), 0))},
				{Key: "majorityOpTime", Value: bson.D{{Key: "ts", Value: ts}, {Key: "t", Value: int64(1)}}},
				{Key: "majorityWriteDate", Value: bson.NewDateTimeFromTime(time.Unix(int64(ts.T), 0))},
			}})
	}
	d = append(d,
		bson.E{Key: "maxBsonObjectSize", Value: int32(wire.MaxDocumentSize)},
		bson.E{Key: "maxMessageSizeBytes", Value: int32(wire.MaxMessageSize)},
		bson.E{Key: "maxWriteBatchSize", Value: int32(maxWriteBatch)},
		bson.E{Key: "localTime", Value: bson.NewDateTimeFromTime(time.Now())},
		bson.E{Key: "logicalSessionTimeoutMinutes", Value: r.Env.sessionTimeoutMinutes()},
		bson.E{Key: "connectionId", Value: int32(r.Conn.ID)},
		bson.E{Key: "minWireVersion", Value: int32(minWireVersion)},
		bson.E{Key: "maxWireVersion", Value: int32(maxWireVersion)},
		bson.E{Key: "readOnly", Value: false})
	if mechsFor != "" || speculative {
		return e.helloAuth(r, mechsFor, specDoc, d)
	}
	return d, nil
}

var electionID = func() bson.ObjectID {
	id, _ := bson.ObjectIDFromHex("7fffffff0000000000000001")
	return id
}()
