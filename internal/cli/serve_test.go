package cli

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// syncBuffer is a bytes.Buffer safe for the server's log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testEnv returns an Env whose signal context the test cancels.
func testEnv() (Env, *syncBuffer, *syncBuffer, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := &syncBuffer{}, &syncBuffer{}
	return Env{Stdout: out, Stderr: errb, Signals: func() (context.Context, func()) { return ctx, func() {} }}, out, errb, cancel
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestServeFlags(t *testing.T) {
	env, _, _, _ := testEnv()
	cmd := newServeCmd(env)
	if err := cmd.ParseFlags([]string{"--dbpath", "/tmp/x", "--listen", "0.0.0.0:1", "--standalone"}); err != nil {
		t.Fatal(err)
	}
	f := cmd.Flags()
	if v, _ := f.GetString("dbpath"); v != "/tmp/x" {
		t.Errorf("dbpath = %q", v)
	}
	if v, _ := f.GetString("listen"); v != "0.0.0.0:1" {
		t.Errorf("listen = %q", v)
	}
	if v, _ := f.GetBool("standalone"); !v {
		t.Error("standalone not set")
	}
	fresh := newServeCmd(env)
	if v, _ := fresh.Flags().GetString("listen"); v != "127.0.0.1:27017" {
		t.Errorf("default listen = %q", v)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	env, _, errb, _ := testEnv()
	if code := Main([]string{"serve", "--no-such-flag"}, env); code != ExitUsage {
		t.Fatalf("exit = %d, want %d; stderr %s", code, ExitUsage, errb)
	}
	if code := Main([]string{"no-such-command"}, env); code != ExitUsage {
		t.Fatalf("exit = %d, want %d", code, ExitUsage)
	}
}

func TestServeRefusesTakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	env, _, errb, _ := testEnv()
	if code := Main([]string{"serve", "--listen", l.Addr().String()}, env); code != ExitError {
		t.Fatalf("exit = %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "already in use") {
		t.Fatalf("stderr = %q", errb)
	}
}

// TestServeEndToEnd starts formwork serve on disk, writes through the
// driver, stops it with a signal, starts it again (with
// --execution-tickets, which serverStatus reports) and reads the data.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		addr := freeAddr(t)
		env, _, errb, stop := testEnv()
		done := make(chan int, 1)
		args := []string{"serve", "--dbpath", dir, "--listen", addr}
		if round == 1 {
			args = append(args, "--execution-tickets", "3")
		}
		go func() { done <- Main(args, env) }()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr))
		if err != nil {
			t.Fatal(err)
		}
		c := client.Database("app").Collection("c")
		if round == 0 {
			if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "kept"}}); err != nil {
				t.Fatalf("insert: %v (stderr %s)", err, errb)
			}
		} else {
			if n, err := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: "kept"}}); err != nil || n != 1 {
				t.Fatalf("after restart: %d %v", n, err)
			}
			status, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if n, ok := status.Lookup("queues", "execution", "read", "totalTickets").AsInt64OK(); !ok || n != 3 {
				t.Fatalf("--execution-tickets 3: queues.execution = %v", status.Lookup("queues", "execution"))
			}
		}
		client.Disconnect(ctx)
		cancel()
		stop()
		select {
		case code := <-done:
			if code != ExitOK {
				t.Fatalf("exit = %d; stderr %s", code, errb)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop on signal")
		}
		if !strings.Contains(errb.String(), "shutting down") {
			t.Fatalf("no shutdown log: %s", errb)
		}
	}
}

func TestServeInMemoryWarns(t *testing.T) {
	addr := freeAddr(t)
	env, _, errb, stop := testEnv()
	done := make(chan int, 1)
	go func() { done <- Main([]string{"serve", "--listen", addr, "--standalone"}, env) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "formwork serving") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	if !strings.Contains(errb.String(), "in memory") || !strings.Contains(errb.String(), "standalone") {
		t.Fatalf("stderr = %s", errb)
	}
}
