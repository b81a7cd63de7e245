package auth

import (
	"errors"

	"github.com/xdg-go/scram"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// MaxPayload bounds a SASL payload (I2); SCRAM messages are a few hundred
// bytes.
const MaxPayload = 64 << 10

// Lookup returns the stored credential of user for a mechanism, and false
// when the user or its credential for that mechanism does not exist.
type Lookup func(user string) (Credential, bool)

// Conversation is the server side of one SCRAM authentication: the
// client-first message (saslStart), the client-final message
// (saslContinue), and unless skipEmptyExchange an empty last exchange.
// It is used by one goroutine at a time.
type Conversation struct {
	mech      string
	sc        *scram.ServerConversation
	skipEmpty bool
	step      int
	done      bool
	failed    bool
}

// errFailed is returned once a conversation fails: the client learns
// only that authentication failed, as from mongod.
var errFailed = mongoerr.New(mongoerr.AuthenticationFailed, "Authentication failed.")

// ErrAuthenticationFailed is the error every failed conversation reports.
var ErrAuthenticationFailed error = errFailed

// NewConversation starts a conversation for mech with the credentials
// that lookup finds. It returns MechanismUnavailable for a mechanism the
// engine does not offer.
func NewConversation(mech string, lookup Lookup, skipEmptyExchange bool) (*Conversation, error) {
	var hg scram.HashGeneratorFcn
	switch mech {
	case SHA1:
		hg = scram.SHA1
	case SHA256:
		hg = scram.SHA256
	default:
		return nil, mongoerr.Newf(mongoerr.MechanismUnavailable, "Received authentication for mechanism %s which is unknown or not enabled", mech)
	}
	srv, err := hg.NewServer(func(user string) (scram.StoredCredentials, error) {
		c, ok := lookup(user)
		if !ok {
			return scram.StoredCredentials{}, errors.New("unknown user")
		}
		return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: c.Iterations},
			StoredKey: c.StoredKey, ServerKey: c.ServerKey}, nil
	})
	if err != nil {
		return nil, mongoerr.Newf(mongoerr.InternalError, "scram: %v", err)
	}
	return &Conversation{mech: mech, sc: srv.NewConversation(), skipEmpty: skipEmptyExchange}, nil
}

// Mechanism returns the conversation's mechanism.
func (c *Conversation) Mechanism() string { return c.mech }

// Step consumes the client's payload and returns the server's answer and
// whether the conversation is complete and successful. Any failure is
// AuthenticationFailed, after which every Step fails.
func (c *Conversation) Step(payload []byte) (out []byte, done bool, err error) {
	if c.failed || c.done || len(payload) > MaxPayload {
		c.failed = true
		return nil, false, errFailed
	}
	c.step++
	switch c.step {
	case 1, 2:
		resp, err := c.sc.Step(string(payload))
		if err != nil {
			c.failed = true
			return nil, false, errFailed
		}
		if c.step == 2 {
			if !c.sc.Valid() {
				c.failed = true
				return nil, false, errFailed
			}
			c.done = c.skipEmpty
		}
		return []byte(resp), c.done, nil
	case 3:
		if len(payload) != 0 {
			c.failed = true
			return nil, false, errFailed
		}
		c.done = true
		return []byte{}, true, nil
	}
	c.failed = true
	return nil, false, errFailed
}

// Done reports whether the client has authenticated.
func (c *Conversation) Done() bool { return c.done }

// User returns the user name the client sent in its first message; valid
// after a successful first Step.
func (c *Conversation) User() string { return c.sc.Username() }
