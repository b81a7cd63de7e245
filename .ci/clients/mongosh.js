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
print("mongosh checks passed");
