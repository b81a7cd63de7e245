package cli

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testcert"
)

func TestServeTLSFlagErrors(t *testing.T) {
	certs := testcert.Write(t, t.TempDir())
	bad := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(bad, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tls-cert-file", certs.Cert}, ExitUsage, "--tls-cert-file needs --tls-key-file"},
		{[]string{"--tls-key-file", certs.Key}, ExitUsage, "need --tls-cert-file"},
		{[]string{"--tls-ca-file", certs.CA}, ExitUsage, "need --tls-cert-file"},
		{[]string{"--tls-cert-file", certs.Cert, "--tls-key-file", certs.Key + ".missing"}, ExitUsage, "--tls-key-file: stat"},
		{[]string{"--tls-cert-file", certs.Cert, "--tls-key-file", certs.Key, "--tls-ca-file", "/no/such/ca.pem"}, ExitUsage, "--tls-ca-file"},
		{[]string{"--tls-cert-file", certs.Cert, "--tls-key-file", bad}, ExitError, "loading TLS certificate"},
		{[]string{"--tls-cert-file", certs.Cert, "--tls-key-file", certs.Key, "--tls-ca-file", bad}, ExitError, "holds no PEM certificate"},
	} {
		env, _, errb, _ := testEnv()
		args := append([]string{"serve", "--listen", freeAddr(t)}, tc.args...)
		if code := Main(args, env); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errb, tc.code, tc.want)
		}
	}
}

// TestServeTLSEndToEnd runs formwork serve with the TLS flags and talks
// to it with the driver over TLS.
func TestServeTLSEndToEnd(t *testing.T) {
	certs := testcert.Write(t, t.TempDir())
	addr := freeAddr(t)
	env, _, errb, stop := testEnv()
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"serve", "--listen", addr, "--tls-cert-file", certs.Cert,
			"--tls-key-file", certs.Key, "--tls-ca-file", certs.CA}, env)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	uri := "mongodb://" + addr + "/?tls=true&tlsCAFile=" + url.QueryEscape(certs.CA) +
		"&tlsCertificateKeyFile=" + url.QueryEscape(certs.ClientPEM)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	c := client.Database("app").Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("insert over TLS: %v (stderr %s)", err, errb)
	}
	if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("count = %d %v", n, err)
	}
	client.Disconnect(ctx)
	stop()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit = %d; stderr %s", code, errb)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(errb.String(), "tls=true") {
		t.Errorf("serving line does not say TLS: %s", errb)
	}
}
