package command

import (
	"net"
	"strings"
	"sync"

	"github.com/formworkdb/formwork/engine/internal/auth"
)

// userName names a user: name@db.
type userName struct{ Name, DB string }

func (n userName) String() string { return n.Name + "@" + n.DB }

// connAuth is one connection's authentication state: the user it
// authenticated as, and the SASL conversation in progress. Commands of a
// connection run one at a time; mu guards against readers elsewhere
// (cursor ownership checks).
type connAuth struct {
	mu   sync.Mutex
	user *userName
	conv *saslConv

	// privileges cached for user as data (the user store's copy) defines
	// them.
	data  *authData
	roles []roleName
	privs auth.Set
}

// saslConv is a conversation begun by saslStart (or a hello's
// speculativeAuthenticate) and continued by saslContinue.
type saslConv struct {
	id  int32
	db  string
	c   *auth.Conversation
	got string // the user name once the first step succeeded
}

// authUser returns the connection's authenticated user, or nil.
func (c *Conn) authUser() *userName {
	c.auth.mu.Lock()
	defer c.auth.mu.Unlock()
	return c.auth.user
}

// setAuthUser records a successful authentication.
func (c *Conn) setAuthUser(u *userName) {
	c.auth.mu.Lock()
	c.auth.user = u
	c.auth.privs, c.auth.roles, c.auth.data = nil, nil, nil
	c.auth.mu.Unlock()
}

// privileges returns the roles and privileges of the connection's user as
// the stored users and roles define them now, and ok=false when it has
// not authenticated (or its user was dropped since).
func (e *Env) privileges(c *Conn) (roles []roleName, privs auth.Set, ok bool, err error) {
	d, err := e.users.current()
	if err != nil {
		return nil, nil, false, err
	}
	c.auth.mu.Lock()
	defer c.auth.mu.Unlock()
	if c.auth.user == nil {
		return nil, nil, false, nil
	}
	if c.auth.data == d {
		return c.auth.roles, c.auth.privs, true, nil
	}
	u := d.user(c.auth.user.Name, c.auth.user.DB)
	if u == nil {
		// A dropped user's connections lose their authentication, as
		// mongod's user cache invalidation removes the user.
		c.auth.user = nil
		return nil, nil, false, nil
	}
	_, ps := d.resolve(u.Roles)
	c.auth.roles, c.auth.privs, c.auth.data = u.Roles, append(auth.Set{}, ps...), d
	return c.auth.roles, c.auth.privs, true, nil
}

// isLoopback reports whether the client connected from this host: a
// loopback address, or an in-process pipe (Dialer), which only code in
// the same process can open.
func isLoopback(remote string) bool {
	if remote == "pipe" || remote == "" {
		return true
	}
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
