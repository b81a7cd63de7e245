package engine_test

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testcert"
)

// serveOn opens an in-memory engine with opts, serves it on l and
// returns its log.
func serveOn(t *testing.T, l net.Listener, opts engine.Options) *syncBuffer {
	t.Helper()
	logs := &syncBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Host = l.Addr().String()
	db, err := engine.Open(ctxT(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Serve(l) }()
	t.Cleanup(func() {
		db.Close()
		if err := <-done; !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return logs
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serveTLS serves an engine with TLS from fresh certificates.
func serveTLS(t *testing.T) (addr string, certs testcert.Files, logs *syncBuffer) {
	t.Helper()
	certs = testcert.Write(t, t.TempDir())
	cfg, err := engine.ServerTLSConfig(certs.Cert, certs.Key, certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	l := listenLoopback(t)
	logs = serveOn(t, l, engine.Options{TLSConfig: cfg})
	return l.Addr().String(), certs, logs
}

// pingInsertFind connects with uri and runs a ping, an insert and a find.
func pingInsertFind(t *testing.T, uri string) error {
	t.Helper()
	ctx := ctxT(t)
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(3 * time.Second))
	if err != nil {
		return err
	}
	defer client.Disconnect(ctx)
	if err := client.Ping(ctx, nil); err != nil {
		return err
	}
	c := client.Database("test").Collection("tls")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		return err
	}
	var got bson.M
	if err := c.FindOne(ctx, bson.D{{Key: "x", Value: 1}}).Decode(&got); err != nil {
		return err
	}
	if got["x"] != int32(1) {
		t.Fatalf("found %v", got)
	}
	return nil
}

func TestServeTLSDriver(t *testing.T) {
	addr, certs, _ := serveTLS(t)
	base := "mongodb://" + addr + "/?tls=true&tlsCAFile=" + url.QueryEscape(certs.CA)
	if err := pingInsertFind(t, base); err != nil {
		t.Fatalf("TLS without a client certificate: %v", err)
	}
	if err := pingInsertFind(t, base+"&tlsCertificateKeyFile="+url.QueryEscape(certs.ClientPEM)); err != nil {
		t.Fatalf("TLS with a client certificate: %v", err)
	}
	// A client certificate from another CA is refused.
	other := testcert.Write(t, t.TempDir())
	if err := pingInsertFind(t, base+"&tlsCertificateKeyFile="+url.QueryEscape(other.ClientPEM)); err == nil {
		t.Fatal("a client certificate from an unknown CA was accepted")
	}
	// A client that does not trust the server's CA fails its handshake.
	if err := pingInsertFind(t, "mongodb://"+addr+"/?tls=true"); err == nil {
		t.Fatal("TLS client without the CA trusted the server")
	}
}

func TestServeTLSRefusesPlainClient(t *testing.T) {
	addr, certs, logs := serveTLS(t)
	if err := pingInsertFind(t, "mongodb://"+addr+"/?directConnection=true"); err == nil {
		t.Fatal("a plain-text client was served by a TLS server")
	}
	// A raw plain-text message is not answered: the connection closes
	// promptly.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hello := mustMarshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}})
	msg := make([]byte, 0, 64)
	msg = append(msg, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xdd, 0x07, 0, 0, 0, 0, 0, 0, 0)
	msg = append(msg, hello...)
	msg[0], msg[1] = byte(len(msg)), byte(len(msg)>>8)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("plain client on a TLS server: %v (want a prompt close)", err)
	}
	if !strings.Contains(logs.String(), "TLS handshake failed") {
		t.Errorf("no log line for the failed handshake; log:\n%s", logs)
	}
	// The server goes on serving TLS clients.
	if err := pingInsertFind(t, "mongodb://"+addr+"/?tls=true&tlsCAFile="+url.QueryEscape(certs.CA)); err != nil {
		t.Fatalf("TLS client after a plain one: %v", err)
	}
}

func TestPlainServerClosesTLSClientHello(t *testing.T) {
	l := listenLoopback(t)
	logs := serveOn(t, l, engine.Options{})
	addr := l.Addr().String()

	// A small ClientHello record (length 0x0200) read as a wire header
	// announces a 33 MB message, and random bytes 12-15 may read as
	// OP_MSG; the server must close instead of allocating the message
	// and waiting for the rest.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hello := append([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}, make([]byte, 32)...)
	copy(hello[12:], []byte{0xdd, 0x07, 0, 0}) // client random, read as opCode 2013
	if _, err := c.Write(hello); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("ClientHello on a plain server not closed promptly: %v", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("server allocated %d bytes for a ClientHello", grew)
	}

	// A real TLS client fails its handshake promptly.
	d := &net.Dialer{Timeout: 2 * time.Second}
	tc, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		tc.Close()
		t.Fatal("TLS handshake succeeded against a plain server")
	}
	if !strings.Contains(logs.String(), "TLS handshake received but this server does not use TLS") {
		t.Errorf("no clear log line; log:\n%s", logs)
	}
	// The server goes on serving plain clients.
	if err := pingInsertFind(t, "mongodb://"+addr+"/?directConnection=true"); err != nil {
		t.Fatal(err)
	}
}

// wideAddr reports a wildcard address, as a listener on 0.0.0.0 would.
type wideAddr struct{ net.Listener }

func (wideAddr) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4zero, Port: 27017} }

func TestServeWarnsOnNonLoopback(t *testing.T) {
	logs := serveOn(t, listenLoopback(t), engine.Options{})
	wide := serveOn(t, wideAddr{listenLoopback(t)}, engine.Options{})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(wide.String(), "WARNING") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(wide.String(), "non-loopback address without authentication") {
		t.Errorf("no warning for 0.0.0.0; log:\n%s", wide)
	}
	if strings.Contains(logs.String(), "WARNING") {
		t.Errorf("warning for a loopback address; log:\n%s", logs)
	}
}

func TestServerTLSConfigErrors(t *testing.T) {
	certs := testcert.Write(t, t.TempDir())
	if _, err := engine.ServerTLSConfig(certs.Cert, "", ""); err == nil {
		t.Error("no error without a key file")
	}
	if _, err := engine.ServerTLSConfig(certs.Cert, certs.Key+".missing", ""); err == nil {
		t.Error("no error for a missing key file")
	}
	if _, err := engine.ServerTLSConfig(certs.Cert, certs.Key, certs.Key); err == nil {
		t.Error("no error for a CA file without certificates")
	}
	cfg, err := engine.ServerTLSConfig(certs.Cert, certs.Key, certs.CA)
	if err != nil || cfg.ClientAuth != tls.VerifyClientCertIfGiven || cfg.ClientCAs == nil {
		t.Errorf("cfg = %+v, %v", cfg, err)
	}
}
