package subset

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestWindowRaceWithAdd edits and deletes children while they are being
// added, so that an edit or delete can land between an Add's insert and
// its push; the window still ends exact. Without the read after the push
// (recheck) it failed about once in eight runs under -race.
func TestWindowRaceWithAdd(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	const n = 150
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := range n {
			if _, err := f.w.Add(ctx, Review{ID: fmt.Sprintf("r%03d", i), ProductID: "p1", At: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
				errs <- err
				return
			}
		}
	}()
	// chase runs op on each child as soon as it exists: the deleter on
	// every 7th, the editor on the others.
	chase := func(op func(id string) error, deleter bool) {
		defer wg.Done()
		for i := range n {
			if (i%7 == 0) != deleter {
				continue
			}
			id := fmt.Sprintf("r%03d", i)
			for {
				err := op(id)
				if err == nil {
					break
				}
				if !errors.Is(err, ErrNotFound) {
					errs <- err
					return
				}
			}
		}
	}
	go chase(func(id string) error {
		_, err := f.w.Edit(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "edited"}}}})
		return err
	}, false)
	go chase(func(id string) error {
		_, err := f.w.Delete(ctx, id)
		return err
	}, true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.verifyOK(t)
}
