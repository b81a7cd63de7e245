package pattern

import (
	"context"
	"errors"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// transactional caches, per client, whether its deployment runs
// multi-document transactions.
var transactional sync.Map // *mongo.Client -> bool

// Transactions reports whether the deployment behind client runs
// multi-document transactions. It asks once per client, by running an
// empty read in a transaction, and remembers the answer: a standalone
// server answers IllegalOperation (20), a server without transactions
// NotImplemented (238).
func Transactions(ctx context.Context, client *mongo.Client) (bool, error) {
	if v, ok := transactional.Load(client); ok {
		return v.(bool), nil
	}
	sess, err := client.StartSession()
	if err != nil {
		return false, err
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		return nil, client.Database("formwork").Collection("probe").FindOne(ctx, bson.D{}).Err()
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		err = nil
	}
	switch {
	case err == nil:
		transactional.Store(client, true)
		return true, nil
	case unsupported(err):
		transactional.Store(client, false)
		return false, nil
	}
	return false, err
}

// unsupported reports whether err says the deployment has no
// transactions: IllegalOperation (20) from a standalone server,
// NotImplemented (238) from one that lacks them.
func unsupported(err error) bool {
	var ce mongo.CommandError
	return errors.As(err, &ce) && (ce.Code == 20 || ce.Code == 238)
}

// Atomic runs fn in one multi-document transaction when the deployment
// behind client has them, and directly otherwise; transacted says which.
// fn may run more than once (the driver retries transient transaction
// errors), so it must not keep state between runs. Called with a context
// that already carries a session, fn runs in that session as it is.
// Without a transaction the caller relies on its documented convergent
// behaviour (ordering of writes plus Verify/Repair).
func Atomic(ctx context.Context, client *mongo.Client, fn func(ctx context.Context) error) (transacted bool, err error) {
	if sess := mongo.SessionFromContext(ctx); sess != nil {
		// Already inside the caller's session (a Source write's
		// transaction): fn's writes join it rather than nesting.
		return false, fn(ctx)
	}
	ok, err := Transactions(ctx, client)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, fn(ctx)
	}
	sess, err := client.StartSession()
	if err != nil {
		return false, err
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		return nil, fn(ctx)
	})
	return true, err
}
