package auth

import (
	"testing"

	"github.com/xdg-go/scram"
)

// lookupFor returns a Lookup holding user's credentials for mech.
func lookupFor(t testing.TB, user, pwd, mech string) Lookup {
	t.Helper()
	creds, err := NewCredentials(user, pwd, []string{mech}, true)
	if err != nil {
		t.Fatal(err)
	}
	return func(u string) (Credential, bool) {
		c, ok := creds[mech]
		return c, ok && u == user
	}
}

// converse runs a client conversation against the server one; it returns
// the number of exchanges and whether both sides agree on success.
func converse(t *testing.T, mech, user, pwd string, lookup Lookup, skipEmpty bool) (steps int, ok bool) {
	t.Helper()
	hg, clientPwd := scram.SHA256, pwd
	if mech == SHA1 {
		hg, clientPwd = scram.SHA1, DigestSHA1(user, pwd)
	}
	cl, err := hg.NewClientUnprepped(user, clientPwd, "")
	if err != nil {
		t.Fatal(err)
	}
	cc := cl.NewConversation()
	sc, err := NewConversation(mech, lookup, skipEmpty)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cc.Step("")
	if err != nil {
		t.Fatal(err)
	}
	for steps = 1; steps <= 4; steps++ {
		out, done, err := sc.Step([]byte(msg))
		if err != nil {
			if err != ErrAuthenticationFailed {
				t.Fatalf("step %d: %v", steps, err)
			}
			return steps, false
		}
		if done {
			if !skipEmpty || steps != 2 {
				if steps != 3 {
					t.Fatalf("done after %d steps (skipEmpty %v)", steps, skipEmpty)
				}
			}
			return steps, sc.Done()
		}
		if msg, err = cc.Step(string(out)); err != nil {
			t.Fatalf("client step %d: %v", steps, err)
		}
	}
	t.Fatal("conversation did not end")
	return 0, false
}

func TestConversation(t *testing.T) {
	for _, mech := range Mechanisms {
		for _, skip := range []bool{true, false} {
			steps, ok := converse(t, mech, "alice", "pencil", lookupFor(t, "alice", "pencil", mech), skip)
			want := 3
			if skip {
				want = 2
			}
			if !ok || steps != want {
				t.Errorf("%s skipEmpty=%v: ok=%v after %d steps, want %d", mech, skip, ok, steps, want)
			}
		}
		if _, ok := converse(t, mech, "alice", "wrong", lookupFor(t, "alice", "pencil", mech), true); ok {
			t.Errorf("%s: a wrong password authenticated", mech)
		}
		if _, ok := converse(t, mech, "bob", "pencil", lookupFor(t, "alice", "pencil", mech), true); ok {
			t.Errorf("%s: an unknown user authenticated", mech)
		}
	}
	if _, err := NewConversation("PLAIN", nil, true); err == nil {
		t.Error("PLAIN accepted")
	}
}

func TestConversationRejectsAfterFailure(t *testing.T) {
	sc, err := NewConversation(SHA256, lookupFor(t, "a", "b", SHA256), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sc.Step([]byte("garbage")); err == nil {
		t.Fatal("garbage accepted")
	}
	if _, _, err := sc.Step([]byte("n,,n=a,r=abc")); err == nil {
		t.Fatal("step after a failure accepted")
	}
	if sc.Done() {
		t.Fatal("failed conversation is done")
	}
}

func TestCredentialsNeverHoldPassword(t *testing.T) {
	creds, err := NewCredentials("u", "hunter2", Mechanisms, true)
	if err != nil {
		t.Fatal(err)
	}
	for m, c := range creds {
		d := c.Doc()
		for _, e := range d {
			if s, ok := e.Value.(string); ok && (s == "hunter2" || s == DigestSHA1("u", "hunter2")) {
				t.Fatalf("%s stores the password in %s", m, e.Key)
			}
		}
	}
	if len(creds[SHA1].Salt) != 16 || len(creds[SHA256].Salt) != 28 || creds[SHA256].Iterations != 15000 || creds[SHA1].Iterations != 10000 {
		t.Fatalf("salts/iterations differ from mongod's: %+v", creds)
	}
	if _, err := NewCredentials("u", "", Mechanisms, true); err == nil {
		t.Fatal("empty password accepted")
	}
}

func TestResourceCovers(t *testing.T) {
	cases := []struct {
		p, t Resource
		want bool
	}{
		{DBResource("a"), NSResource("a", "c"), true},
		{DBResource("a"), NSResource("a", "system.users"), false},
		{DBResource("a"), NSResource("b", "c"), false},
		{DBResource("a"), DBResource("a"), true},
		{Resource{}, NSResource("b", "c"), true},
		{Resource{}, NSResource("b", "system.js"), false},
		{Resource{}, ClusterResource, false},
		{Resource{Collection: "system.js"}, NSResource("x", "system.js"), true},
		{NSResource("a", "c"), NSResource("a", "c"), true},
		{NSResource("a", "c"), DBResource("a"), false},
		{ClusterResource, ClusterResource, true},
		{ClusterResource, DBResource("admin"), false},
		{Resource{Any: true}, NSResource("admin", "system.users"), true},
		{Resource{Any: true}, ClusterResource, true},
	}
	for _, c := range cases {
		if got := c.p.Covers(c.t); got != c.want {
			t.Errorf("%v covers %v = %v, want %v", c.p, c.t, got, c.want)
		}
	}
}

// FuzzConversation feeds arbitrary SASL payloads to both steps of a
// server conversation: it must fail cleanly (AuthenticationFailed), never
// panic, and never authenticate without the password.
func FuzzConversation(f *testing.F) {
	f.Add([]byte("n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL"), []byte("c=biws,r=fyko+d2lbbFgONRv9qkxdawL,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="), false)
	f.Add([]byte("n,,n=alice,r=x"), []byte(""), true)
	f.Add([]byte("p=tls-unique,,n=alice,r=x"), []byte("c=,r=,p="), true)
	f.Add([]byte("n,a=bob,n=al=3Dice,r=abc,m=ext"), []byte("c=biws,r=abc"), false)
	f.Add([]byte(""), []byte("\x00\xff"), true)
	creds, err := NewCredentials("alice", "pencil", Mechanisms, true)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, first, second []byte, sha1 bool) {
		mech := SHA256
		if sha1 {
			mech = SHA1
		}
		sc, err := NewConversation(mech, func(u string) (Credential, bool) {
			c, ok := creds[mech]
			return c, ok && u == "alice"
		}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := sc.Step(first); err != nil {
			if err != ErrAuthenticationFailed {
				t.Fatalf("first step: %v", err)
			}
			return
		}
		_, done, err := sc.Step(second)
		if err == nil && done {
			t.Fatalf("authenticated from fuzzed input %q %q", first, second)
		}
		if err != nil && err != ErrAuthenticationFailed {
			t.Fatalf("second step: %v", err)
		}
	})
}
