// Everyday CRUD through mongosh against formwork serve. Any failed check
// throws, which makes mongosh exit non-zero.
function check(cond, what) {
  if (!cond) { throw new Error("check failed: " + what); }
}
db.dropDatabase();
db.createCollection("people");
const ins = db.people.insertMany([
  { _id: 1, name: "ada", age: 36, tags: [] },
  { _id: 2, name: "grace", age: 45, tags: ["navy"] },
  { _id: 3, name: "alan", age: 41, tags: [] },
  { _id: 4, name: "edsger", age: 72, tags: [] },
]);
check(Object.keys(ins.insertedIds).length === 4, "insertMany inserted 4");
const found = db.people.find({ age: { $gt: 40 } }).sort({ age: -1 }).limit(2).toArray();
check(found.length === 2 && found[0]._id === 4 && found[1]._id === 2, "find/sort/limit: " + JSON.stringify(found));
const up = db.people.updateOne({ _id: 1 }, { $set: { age: 37 }, $push: { tags: "math" } });
check(up.matchedCount === 1 && up.modifiedCount === 1, "updateOne counts");
const ada = db.people.findOne({ _id: 1 });
check(ada.age === 37 && ada.tags.length === 1 && ada.tags[0] === "math", "updated doc: " + JSON.stringify(ada));
const del = db.people.deleteOne({ name: "alan" });
check(del.deletedCount === 1, "deleteOne");
check(db.people.countDocuments({}) === 3, "countDocuments after delete");
check(db.people.countDocuments({ age: { $gte: 45 } }) === 2, "countDocuments with filter");
const names = db.getCollectionNames();
check(names.length === 1 && names[0] === "people", "collections: " + JSON.stringify(names));
const agg = db.people.aggregate([
  { $match: { age: { $gte: 40 } } },
  { $group: { _id: null, total: { $sum: "$age" }, n: { $sum: 1 } } },
]).toArray();
check(agg.length === 1 && agg[0].total === 117 && agg[0].n === 2, "aggregate $group: " + JSON.stringify(agg));
const sorted = db.people.aggregate([{ $project: { name: 1, _id: 0 } }, { $sort: { name: 1 } }], { batchSize: 1 }).toArray();
check(sorted.map(d => d.name).join(",") === "ada,edsger,grace", "aggregate $project/$sort with getMore: " + JSON.stringify(sorted));
let dup = false;
try { db.people.insertOne({ _id: 2 }); } catch (e) { dup = e.code === 11000; }
check(dup, "duplicate key error code 11000");
// Correctness fixes that mongosh users meet: DISTINCT_SCAN with
// SERVER-14832's null, MinKey/MaxKey bounds through an index, cursors
// killed by a drop, findAndModify upsert without a query.
db.tags.insertMany([{ _id: 1, t: ["a", "b"] }, { _id: 2, t: ["b"] }, { _id: 3 }]);
db.tags.createIndex({ t: 1 });
const dex = db.tags.explain().distinct("t");
check(JSON.stringify(dex.queryPlanner.winningPlan).includes("DISTINCT_SCAN"), "distinct uses DISTINCT_SCAN: " + JSON.stringify(dex.queryPlanner.winningPlan));
const dvals = db.tags.distinct("t");
check(JSON.stringify(dvals) === JSON.stringify([null, "a", "b"]), "distinct over an index includes null: " + JSON.stringify(dvals));
db.mm.insertMany([{ _id: 1, val: [MinKey()] }, { _id: 2, val: [MaxKey()] }, { _id: 3, val: 5 }]);
db.mm.createIndex({ val: 1 });
check(db.mm.find({ val: { $gt: MinKey() } }).hint({ val: 1 }).toArray().length === 3, "$gt MinKey through the index");
check(db.mm.find({ val: { $lt: MaxKey() } }).hint({ val: 1 }).toArray().length === 3, "$lt MaxKey through the index");
db.gone.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i })));
const res = db.runCommand({ find: "gone", batchSize: 2 });
db.gone.drop();
let killedCode = 0;
try { db.runCommand({ getMore: res.cursor.id, collection: "gone" }); } catch (e) { killedCode = e.code; }
check(killedCode === 175, "getMore after drop answers QueryPlanKilled, got " + killedCode);
const fam = db.runCommand({ findAndModify: "fam", update: { $set: { x: 1 } }, upsert: true, new: true });
check(fam.ok === 1 && fam.value && fam.value.x === 1, "findAndModify upsert without query: " + JSON.stringify(fam));
// Views, pipeline updates, $expr and $lookup as mongosh users write them.
db.createView("adults", "people", [{ $match: { age: { $gte: 40 } } }, { $project: { name: 1 } }]);
check(db.adults.countDocuments({}) === 2, "count on a view");
check(db.getCollectionInfos({ name: "adults" })[0].type === "view", "listCollections type view");
db.people.updateMany({}, [{ $set: { decade: { $multiply: [{ $floor: { $divide: ["$age", 10] } }, 10] } } }]);
check(db.people.findOne({ _id: 4 }).decade === 70, "pipeline update");
check(db.people.countDocuments({ $expr: { $gt: ["$age", "$decade"] } }) === 3, "$expr in find");
db.pets.insertMany([{ owner: 1, name: "rex" }, { owner: 1, name: "tom" }, { owner: 2, name: "kit" }]);
const joined = db.people.aggregate([
  { $lookup: { from: "pets", localField: "_id", foreignField: "owner", as: "pets" } },
  { $project: { n: { $size: "$pets" } } }, { $sort: { _id: 1 } },
]).toArray();
check(joined.map(d => d.n).join(",") === "2,1,0", "$lookup: " + JSON.stringify(joined));
print("mongosh checks passed");
