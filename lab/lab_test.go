package lab

import (
	"context"
	"os"
	"testing"
	"time"
)

// smallScale keeps the test run to a few seconds.
const smallScale = 5

func TestRunSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Scale: smallScale, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		rep.WriteJSON(os.Stdout)
	}
	t.Logf("%.1fs", rep.Seconds)
}
