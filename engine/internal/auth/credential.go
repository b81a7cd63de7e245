package auth

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// The SCRAM mechanisms, by their SASL names.
const (
	SHA1   = "SCRAM-SHA-1"
	SHA256 = "SCRAM-SHA-256"
)

// Mechanisms lists the SASL mechanisms the engine supports, in the order
// mongod lists them.
var Mechanisms = []string{SHA1, SHA256}

// Iteration counts: mongod's scramIterationCount and
// scramSHA256IterationCount defaults.
const (
	sha1Iterations   = 10000
	sha256Iterations = 15000
)

// Credential is one mechanism's stored SCRAM keys.
type Credential struct {
	Iterations int
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// Doc returns c as stored in a user document's credentials field.
func (c Credential) Doc() bson.D {
	enc := base64.StdEncoding.EncodeToString
	return bson.D{
		{Key: "iterationCount", Value: int32(c.Iterations)},
		{Key: "salt", Value: enc(c.Salt)},
		{Key: "storedKey", Value: enc(c.StoredKey)},
		{Key: "serverKey", Value: enc(c.ServerKey)},
	}
}

// ParseCredential reads one mechanism's entry of a stored user document;
// ok is false when it is malformed.
func ParseCredential(doc bson.Raw) (Credential, bool) {
	var c Credential
	it, ok := doc.Lookup("iterationCount").AsInt64OK()
	if !ok || it <= 0 || it > 1<<24 {
		return c, false
	}
	c.Iterations = int(it)
	dec := func(k string) []byte {
		s, ok := doc.Lookup(k).StringValueOK()
		if !ok {
			return nil
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil
		}
		return b
	}
	c.Salt, c.StoredKey, c.ServerKey = dec("salt"), dec("storedKey"), dec("serverKey")
	return c, c.Salt != nil && c.StoredKey != nil && c.ServerKey != nil
}

// DigestSHA1 is MongoDB's pre-SCRAM password digest, hex(MD5(user +
// ":mongo:" + password)): SCRAM-SHA-1 clients and servers use it as the
// password.
func DigestSHA1(user, password string) string {
	sum := md5.Sum([]byte(user + ":mongo:" + password))
	return hex.EncodeToString(sum[:])
}

// NewCredentials derives the stored keys of each mechanism in mechs from
// password (I1). digest is createUser's digestPassword: true means the
// server digests the SCRAM-SHA-1 password; false means password already is
// that digest, which SCRAM-SHA-256 cannot use. It returns BadValue as
// mongod does.
func NewCredentials(user, password string, mechs []string, digest bool) (map[string]Credential, error) {
	if password == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "Password cannot be empty")
	}
	out := map[string]Credential{}
	for _, m := range mechs {
		var (
			client *scram.Client
			err    error
			salt   []byte
			iters  int
		)
		switch m {
		case SHA1:
			pw := password
			if digest {
				pw = DigestSHA1(user, password)
			}
			client, err = scram.SHA1.NewClientUnprepped(user, pw, "")
			salt, iters = make([]byte, 16), sha1Iterations
		case SHA256:
			if !digest {
				return nil, mongoerr.New(mongoerr.BadValue, "Use of SCRAM-SHA-256 requires undigested passwords")
			}
			client, err = scram.SHA256.NewClient(user, password, "")
			salt, iters = make([]byte, 28), sha256Iterations
		default:
			return nil, mongoerr.Newf(mongoerr.BadValue, "Unknown auth mechanism '%s'", m)
		}
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.BadValue, "Error preparing password: %v", err)
		}
		_, _ = rand.Read(salt)
		sc, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: iters})
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.InternalError, "deriving %s credentials: %v", m, err)
		}
		out[m] = Credential{Iterations: iters, Salt: salt, StoredKey: sc.StoredKey, ServerKey: sc.ServerKey}
	}
	return out, nil
}
