// Package scripttest runs the data-driven query and update scripts under
// engine/testdata (github.com/cockroachdb/datadriven files) against a
// MongoDB-compatible database: the embedded engine, a real MongoDB named by
// FORMWORK_TEST_URI (through internal/testenv), or any Backend. It is used
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
//	{"find": "c", "filter": {"a": 1}, "batchSize": 1}
//	----
//
// cmd runs one command document (the input may span lines). Replies with a
// cursor are drained with getMore and print one document per line. The
// write commands insert, update, delete and findAndModify print one line:
// their reply reduced to the deterministic fields n, nModified, upserted,
// writeErrors (index and code only), value and lastErrorObject. Other
// replies print without ok, operationTime and $-fields.
//
// A failed command prints
//
//	error <codeName>(<code>)
//
// Documents in inputs may use JavaScript regex literals (/^a/i) outside
// strings as a shorthand (see ParseDoc).
//
// Re-record expectations with: go test ./engine -run TestQueryScripts -rewrite
package scripttest
