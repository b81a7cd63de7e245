package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// failGetMoreFP is mongod's failGetMoreAfterCursorCheckout: a getMore on
// a change stream fails with the failpoint's errorCode once it has its
// cursor.
const failGetMoreFP = "failGetMoreAfterCursorCheckout"

// changeStreamError adds the label mongod gives a change stream error:
// ResumableChangeStreamError for errors a driver resumes after,
// NonResumableChangeStreamError for ChangeStreamFatalError and
// ChangeStreamHistoryLost.
func changeStreamError(err error) error {
	me, ok := asMongoErr(err)
	if !ok {
		return err
	}
	for _, e := range me.Extra {
		if e.Key == "errorLabels" {
			return err
		}
	}
	switch {
	case me.Code == mongoerr.ChangeStreamFatalError || me.Code == mongoerr.ChangeStreamHistoryLost:
		return me.With("errorLabels", bson.A{"NonResumableChangeStreamError"})
	case resumableCode(me.Code):
		return me.With("errorLabels", bson.A{"ResumableChangeStreamError"})
	}
	return err
}

// resumableCode reports the codes after which a change stream resumes
// (the change streams specification's list; mongod labels them).
func resumableCode(c mongoerr.Code) bool {
	switch c {
	case 63, 150, 13388, 234, 133: // StaleShardVersion, StaleEpoch, StaleConfig, RetryChangeStream, FailedToSatisfyReadPreference
		return true
	}
	return retriableCode(c)
}

// failGetMore fires failGetMoreAfterCursorCheckout when it is on.
func failGetMore(r *Request) error {
	fp := r.Env.fail.byName[failGetMoreFP]
	if fp == nil || !fp.enabled() {
		return nil
	}
	data, on := fp.evaluate(nil)
	if !on {
		return nil
	}
	code, ok := fpInt(data, "errorCode")
	if !ok {
		code = int64(mongoerr.InternalError)
	}
	return mongoerr.Newf(mongoerr.Code(code), "Failing command via '%s' failpoint", failGetMoreFP)
}
