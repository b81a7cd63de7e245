// Package scripttest runs the data-driven query and update scripts under
// engine/testdata (github.com/cockroachdb/datadriven files) against a
// MongoDB-compatible database: the embedded engine, a real MongoDB named by
// FORMWORK_TEST_URI (through internal/testenv), or any Backend, such as a
// package's own runner that calls its code without the engine. It is used
// by tests only.
//
// A script is a sequence of directives. Each has a command line, an input
// after it and the expected output after "----":
//
//	docs [coll=<name>]
//	{"_id": 1, "a": 1}
//	{"_id": 2, "a": [1, 2]}
//	----
//
// docs drops the collection (default "c") and inserts the documents, one
// Extended JSON document (relaxed or canonical) per line. Its output is
// empty.
//
//	find [coll=<name>]
//	{"a": {"$gt": 1}}
//	sort {"a": -1}
//	projection {"_id": 0}
//	skip 1
//	limit 2
//	----
//	{"a":{"$numberInt":"2"}}
//
// find runs a find command on the collection. With the argument ids
// ("find ids") it prints only the _id values, comma-separated on one line
// after "ids: ", sorted by _id unless a sort line is given (and projected
// to _id unless a projection line is given). The first input line is the
// filter (an empty input means {}); the optional lines that follow set
// sort, projection, skip and limit. The output is one result document per
// line in canonical Extended JSON, or the error.
//
//	cmd
//	{"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"a": 1}}}]}
//	----
//	{"n": 1, "nModified": 1}
//
//	eval
//	{"$add": ["$a", 1]}
//	----
//	{"r": {"$numberInt": "2"}}
//
// eval evaluates one aggregation expression against each document of the
// collection in _id order, as the pipeline [{$sort: {_id: 1}}, {$project:
// {_id: 0, r: <expression>}}]; a result that is missing prints as {}.
//
//	agg
//	{"$match": {"a": {"$gt": 1}}}
//	{"$group": {"_id": null, "n": {"$sum": 1}}}
//	----
//	{"_id": null, "n": {"$numberInt": "2"}}
//
// agg runs an aggregate on the collection with one stage per input line
// (or a whole pipeline array as the input) and prints the documents.
//
// cmd runs one command document (the input may span lines). Replies with a
// cursor are drained with getMore and print one document per line. The
// write commands insert, update, delete and findAndModify print their
// deterministic fields on one line, in the order n, nModified, upserted,
// lastErrorObject, value: counts and flags (n, nModified, index,
// updatedExisting) bare when they have mongod's types (int32, boolean),
// everything else in canonical Extended JSON. Each writeErrors entry
// follows on a line of its own, then a writeConcernError:
//
//	{"n": 0, "nModified": 0}
//	writeError 0 ImmutableField(66): Performing an update on the path '_id' would modify the immutable field '_id'
//	writeConcernError UnsatisfiableWriteConcern(100): Not enough data-bearing nodes
//
// With the argument errinfo ("cmd errinfo"), an error's errInfo (document
// validation failures) follows its line as "errInfo <canonical JSON>".
//
// mongod sends no codeName in writeErrors; the runner names the code (see
// CodeName). Extra fields of an error (keyPattern, keyValue, errInfo) do
// not print. Other replies print without ok, operationTime and $-fields.
//
// A failed command prints
//
//	error <codeName>(<code>): <errmsg>
//
// Messages are checked only where the expectation states them: an
// expected line "error BadValue(2)" or "writeError 0 BadValue(2)" accepts
// any message with that code, so a script can leave out a message whose
// wording differs between MongoDB versions, or one that names the test's
// database (E11000 duplicate key messages). -rewrite keeps such lines
// without their message.
//
// Values a server generates differ from run to run and from backend to
// backend, so the output shows stand-ins for them: an ObjectID that no
// input of the script contains prints as 650000000000000000000001, …02 and
// so on, numbered in order of first appearance in the script's output, and
// a date or timestamp from the time of the run prints as Now,
// 2024-01-02T03:04:05Z (a timestamp with increment 1). Scripts therefore
// cannot refer to a generated _id in later inputs.
//
// Documents in inputs may use JavaScript regex literals (/^a/i) outside
// strings as a shorthand (see ParseDoc).
//
// Re-record expectations with -rewrite on the test that runs the scripts
// through the driver, preferably against MongoDB 7.0 (FORMWORK_TEST_URI):
//
//	go test ./engine -run 'TestQueryScripts|TestUpdateScripts' -rewrite
//
// and review the diff like code.
package scripttest
