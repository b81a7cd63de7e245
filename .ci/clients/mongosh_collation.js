// Collation through mongosh (issue 12): a collection created with a
// default collation, and a case-insensitive unique index. Any failed
// check throws, which makes mongosh exit non-zero.
function check(cond, what) {
  if (!cond) { throw new Error("check failed: " + what); }
}
db.getSiblingDB("ci_collation").dropDatabase();
const cdb = db.getSiblingDB("ci_collation");
cdb.createCollection("names", { collation: { locale: "fr", strength: 1 } });
const info = cdb.getCollectionInfos({ name: "names" })[0];
check(info.options.collation.locale === "fr" && info.options.collation.strength === 1 &&
  info.options.collation.version === "57.1", "listCollections shows the collation: " + JSON.stringify(info.options));
cdb.names.insertMany([{ s: "côte" }, { s: "Cote" }, { s: "coté" }]);
check(cdb.names.countDocuments({ s: "COTE" }) === 3, "default collation applies to count");
check(cdb.names.find({ s: "cote" }).collation({ locale: "simple" }).toArray().length === 0, "simple collation overrides the default");
cdb.users.createIndex({ email: 1 }, { unique: true, collation: { locale: "en", strength: 2 } });
cdb.users.insertOne({ email: "A@x.com" });
let code = 0;
try { cdb.users.insertOne({ email: "a@x.com" }); } catch (e) { code = e.code; }
check(code === 11000, "case-insensitive unique index rejects a@x.com, got " + code);
const found = cdb.users.find({ email: "a@X.COM" }).collation({ locale: "en", strength: 2 }).toArray();
check(found.length === 1 && found[0].email === "A@x.com", "case-insensitive find: " + JSON.stringify(found));
const plan = cdb.users.find({ email: "a@X.COM" }).collation({ locale: "en", strength: 2 }).explain();
check(JSON.stringify(plan.queryPlanner.winningPlan).includes("IXSCAN") && plan.queryPlanner.collation.strength === 2,
  "the collated index serves the query: " + JSON.stringify(plan.queryPlanner));
let bad = 0;
try { cdb.users.find({}).collation({ locale: "xx" }).toArray(); } catch (e) { bad = e.code; }
check(bad === 2, "unknown locale answers BadValue, got " + bad);
print("collation checks passed");
