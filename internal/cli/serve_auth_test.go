package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestServeAuth starts formwork serve --auth: an unauthenticated client
// gets Unauthorized, the first user is created through the localhost
// exception, and a client with its credentials reads and writes.
func TestServeAuth(t *testing.T) {
	addr := freeAddr(t)
	env, _, errb, stop := testEnv()
	done := make(chan int, 1)
	go func() { done <- Main([]string{"serve", "--auth", "--listen", addr}, env) }()
	defer func() {
		stop()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	anon, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Disconnect(ctx)
	err = anon.Database("admin").RunCommand(ctx, bson.D{{Key: "createUser", Value: "admin"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"root"}}}).Err()
	if err != nil {
		t.Fatalf("first user: %v (stderr %s)", err, errb)
	}
	_, err = anon.Database("app").Collection("c").InsertOne(ctx, bson.D{})
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 13 || !strings.Contains(ce.Message, "requires authentication") {
		t.Fatalf("unauthenticated insert: %v", err)
	}
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://admin:pw@" + addr + "/?authSource=admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	if _, err := c.Database("app").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "auth=true") {
		t.Fatalf("startup log does not say auth=true: %s", errb)
	}
}
