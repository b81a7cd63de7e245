package command

import (
	"context"
	"encoding/base64"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("saslStart", &spec{run: runSaslStart, help: "begin a SASL authentication conversation"})
	register("saslContinue", &spec{run: runSaslContinue, help: "continue a SASL authentication conversation"})
	register("authenticate", &spec{run: runAuthenticate, help: "authenticate with a non-SASL mechanism (MONGODB-X509)"})
	register("logout", &spec{run: runLogout, help: "end the connection's authentication"})
}

// saslStartArgs are saslStart's fields.
type saslStartArgs struct {
	mechanism string
	payload   []byte
	skipEmpty bool
}

// parseSaslStart reads a saslStart command (or a hello's
// speculativeAuthenticate document, whose db field names the database).
func parseSaslStart(cmd string, body bson.Raw, speculative bool) (saslStartArgs, string, error) {
	var (
		a        saslStartArgs
		db       string
		havePay  bool
		haveMech bool
	)
	err := fields(cmd, body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "mechanism":
			a.mechanism, err = wantString(cmd, k, v)
			haveMech = true
		case "payload":
			a.payload, err = saslPayload(cmd, v)
			havePay = true
		case "autoAuthorize":
		case "options":
			var opts bson.Raw
			if opts, err = wantDoc(cmd, k, v); err == nil {
				if sv, e := opts.LookupErr("skipEmptyExchange"); e == nil {
					a.skipEmpty, _ = asBool(sv)
				}
			}
		case "db":
			if !speculative {
				return errUnknown
			}
			db, err = wantString(cmd, k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return a, "", err
	}
	if !haveMech {
		return a, "", mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.mechanism' is missing but a required field", cmd)
	}
	if !havePay {
		return a, "", mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.payload' is missing but a required field", cmd)
	}
	return a, db, nil
}

// saslPayload accepts a payload as BinData or as a base64 string, as
// mongod does, bounded by auth.MaxPayload.
func saslPayload(cmd string, v bson.RawValue) ([]byte, error) {
	switch v.Type {
	case bson.TypeBinary:
		_, b := v.Binary()
		if len(b) > auth.MaxPayload {
			return nil, mongoerr.New(mongoerr.BadValue, "SASL payload too large")
		}
		return b, nil
	case bson.TypeString:
		s := v.StringValue()
		if len(s) > auth.MaxPayload*4/3+4 {
			return nil, mongoerr.New(mongoerr.BadValue, "SASL payload too large")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.BadValue, "Invalid base64 in SASL payload: %v", err)
		}
		return b, nil
	}
	return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.payload' is the wrong type '%s', expected types '[string, binData]'", cmd, typeName(v.Type))
}

// saslReply is the reply of each step.
func saslReply(id int32, done bool, payload []byte) bson.D {
	return bson.D{
		{Key: "conversationId", Value: id},
		{Key: "done", Value: done},
		{Key: "payload", Value: bson.Binary{Data: payload}},
	}
}

// startConversation begins a conversation for db and takes its first
// step. Any failure leaves the connection without a conversation.
func (e *Env) startConversation(c *Conn, db string, a saslStartArgs) (bson.D, error) {
	c.auth.mu.Lock()
	c.auth.conv = nil
	c.auth.mu.Unlock()
	if db == "$external" {
		return nil, mongoerr.Newf(mongoerr.MechanismUnavailable, "Received authentication for mechanism %s which is unknown or not enabled", a.mechanism)
	}
	data, err := e.users.current()
	if err != nil {
		return nil, err
	}
	mech := a.mechanism
	conv, err := auth.NewConversation(mech, func(user string) (auth.Credential, bool) {
		u := data.user(user, db)
		if u == nil {
			return auth.Credential{}, false
		}
		cr, ok := u.Creds[mech]
		return cr, ok
	}, a.skipEmpty)
	if err != nil {
		return nil, err
	}
	out, done, err := conv.Step(a.payload)
	if err != nil {
		e.log.Info("authentication failed", "mechanism", mech, "db", db, "remote", c.Remote)
		return nil, err
	}
	sc := &saslConv{id: 1, db: db, c: conv, got: conv.User()}
	c.auth.mu.Lock()
	c.auth.conv = sc
	c.auth.mu.Unlock()
	if done {
		if err := e.finishConversation(c, sc); err != nil {
			return nil, err
		}
	}
	return saslReply(sc.id, done, out), nil
}

// finishConversation authenticates the connection as the conversation's
// user. A connection authenticates once: again as the same user is
// allowed, as another user is refused with mongod's codes.
func (e *Env) finishConversation(c *Conn, sc *saslConv) error {
	c.auth.mu.Lock()
	c.auth.conv = nil
	c.auth.mu.Unlock()
	u := userName{Name: sc.got, DB: sc.db}
	if prev := c.authUser(); prev != nil && *prev != u {
		if prev.DB == u.DB {
			return mongoerr.Newf(mongoerr.Code(5626701), "Each client connection may only be authenticated once. Previously authenticated as: %s", prev)
		}
		return mongoerr.Newf(mongoerr.Code(5626702), "Client has attempted to authenticate on multiple databases.Already authenticated as: %s", prev)
	}
	if !e.userMayConnect(c, u) {
		e.log.Info("authentication failed: unmet authentication restrictions", "user", u.String(), "remote", c.Remote)
		return auth.ErrAuthenticationFailed
	}
	c.setAuthUser(&u)
	e.log.Info("authentication succeeded", "user", sc.got, "db", sc.db, "mechanism", sc.c.Mechanism(), "remote", c.Remote)
	return nil
}

// runSaslStart begins SCRAM-SHA-1 or SCRAM-SHA-256 authentication against
// the command's database.
// https://www.mongodb.com/docs/manual/reference/command/nav-authentication/
func runSaslStart(ctx context.Context, r *Request) (bson.D, error) {
	a, _, err := parseSaslStart(r.Name, r.Body, false)
	if err != nil {
		return nil, err
	}
	return r.Env.startConversation(r.Conn, r.DB, a)
}

// runSaslContinue takes the next step of the connection's conversation.
func runSaslContinue(ctx context.Context, r *Request) (bson.D, error) {
	var (
		id      int64
		haveID  bool
		payload []byte
		havePay bool
	)
	err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "conversationId":
			var ok bool
			if id, ok = asInt(v); !ok {
				return mongoerr.FieldType(r.Name, k, typeName(v.Type), "int")
			}
			haveID = true
		case "payload":
			payload, err = saslPayload(r.Name, v)
			havePay = true
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !haveID {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'saslContinue.conversationId' is missing but a required field")
	}
	if !havePay {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'saslContinue.payload' is missing but a required field")
	}
	c := r.Conn
	c.auth.mu.Lock()
	sc := c.auth.conv
	c.auth.mu.Unlock()
	if sc == nil {
		return nil, mongoerr.New(mongoerr.ProtocolError, "No SASL session state found")
	}
	if int64(sc.id) != id {
		return nil, mongoerr.New(mongoerr.ProtocolError, "sasl: Mismatched conversation id")
	}
	if sc.db != r.DB {
		return nil, mongoerr.Newf(mongoerr.ProtocolError, "Attempt to switch database target during SASL authentication from %s to %s", sc.db, r.DB)
	}
	out, done, err := sc.c.Step(payload)
	if err != nil {
		c.auth.mu.Lock()
		c.auth.conv = nil
		c.auth.mu.Unlock()
		r.Env.log.Info("authentication failed", "user", sc.got, "db", sc.db, "remote", c.Remote)
		return nil, err
	}
	if done {
		if err := r.Env.finishConversation(c, sc); err != nil {
			return nil, err
		}
	}
	return saslReply(sc.id, done, out), nil
}

// runAuthenticate answers the authenticate command, which serves only
// MONGODB-X509 in MongoDB 7.0. The engine has no X.509 authentication.
// https://www.mongodb.com/docs/manual/reference/command/authenticate/
func runAuthenticate(ctx context.Context, r *Request) (bson.D, error) {
	mech := ""
	err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "mechanism":
			mech, err = wantString(r.Name, k, v)
		case "user":
			_, err = wantString(r.Name, k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if mech == "" {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'authenticate.mechanism' is missing but a required field")
	}
	return nil, mongoerr.Newf(mongoerr.MechanismUnavailable, "Unsupported mechanism '%s' on authenticate", mech)
}

// runLogout ends the connection's authentication when it authenticated
// against the command's database.
// https://www.mongodb.com/docs/manual/reference/command/logout/
func runLogout(ctx context.Context, r *Request) (bson.D, error) {
	if err := noFields(r); err != nil {
		return nil, err
	}
	if u := r.Conn.authUser(); u != nil && u.DB == r.DB {
		r.Conn.setAuthUser(nil)
	}
	return bson.D{}, nil
}

// helloAuth adds hello's authentication fields: saslSupportedMechs for
// the user named "db.user", and the first step of a
// speculativeAuthenticate. Neither fails the hello: an unknown user gets
// no mechanisms and a failed speculative step no reply, as from mongod.
func (e *Env) helloAuth(r *Request, mechsFor string, spec bson.Raw, d bson.D) (bson.D, error) {
	if mechsFor != "" {
		db, name, ok := strings.Cut(mechsFor, ".")
		if !ok {
			return nil, mongoerr.New(mongoerr.BadValue, "UserName must contain a '.' separated database.user pair")
		}
		if data, err := e.users.current(); err == nil {
			if u := data.user(name, db); u != nil {
				mechs := bson.A{}
				for _, m := range u.mechanisms() {
					mechs = append(mechs, m)
				}
				d = append(d, bson.E{Key: "saslSupportedMechs", Value: mechs})
			}
		}
	}
	if len(spec) > 5 {
		a, db, err := parseSaslStart("saslStart", spec, true)
		if err == nil && db != "" {
			if reply, err := e.startConversation(r.Conn, db, a); err == nil {
				d = append(d, bson.E{Key: "speculativeAuthenticate", Value: reply})
			}
		}
	}
	return d, nil
}
