// Package mongoerr holds MongoDB's error codes and names and the error
// values the engine returns to clients.
//
// Every error that reaches a client goes through this package: an *Error
// carries the numeric code, the codeName and the message exactly as mongod
// would send them, plus optional extra reply fields (keyPattern, keyValue,
// errInfo). Codes that MongoDB raises as bare assertion ids ("Location40415")
// get that generated name.
//
// This package imports only the driver's bson packages; every other engine
// package may import it.
package mongoerr
