// Change streams through mongosh (issue 14): watch a collection, insert,
// and see the insert event with its resume token; resume after it; read
// the insert back from local.oplog.rs. Any failed check throws, which
// makes mongosh exit non-zero.
function check(cond, what) {
  if (!cond) { throw new Error("check failed: " + what); }
}
const cdb = db.getSiblingDB("ci_changestream");
cdb.dropDatabase();
cdb.createCollection("events");
const cs = cdb.events.watch([], { maxAwaitTimeMS: 500 });
cdb.events.insertOne({ _id: 1, name: "first" });
let ev = null;
for (let i = 0; i < 20 && ev === null; i++) { ev = cs.tryNext(); }
check(ev !== null, "an event arrives");
check(ev.operationType === "insert", "operationType insert: " + EJSON.stringify(ev));
check(ev.fullDocument.name === "first" && ev.documentKey._id === 1, "insert event: " + EJSON.stringify(ev));
check(ev.ns.db === "ci_changestream" && ev.ns.coll === "events", "ns: " + EJSON.stringify(ev.ns));
check(typeof ev._id._data === "string", "resume token: " + EJSON.stringify(ev._id));
cdb.events.insertOne({ _id: 2, name: "second" });
const resumed = cdb.events.watch([], { resumeAfter: ev._id, maxAwaitTimeMS: 500 });
let next = null;
for (let i = 0; i < 20 && next === null; i++) { next = resumed.tryNext(); }
check(next !== null && next.documentKey._id === 2, "resumeAfter gives the next insert: " + EJSON.stringify(next));
cs.close();
resumed.close();
const entry = db.getSiblingDB("local").oplog.rs.find({ ns: "ci_changestream.events", op: "i" }).sort({ $natural: -1 }).limit(1).next();
check(entry.o._id === 2 && entry.ts instanceof Timestamp, "oplog entry: " + EJSON.stringify(entry));
print("mongosh change streams: ok");
