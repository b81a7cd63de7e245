// Schema validation through mongosh (issue 12): db.createCollection with
// a $jsonSchema validator, the DocumentValidationFailure mongosh shows,
// collMod, getCollectionInfos, bypassDocumentValidation. Any failed check
// throws, which makes mongosh exit non-zero.
function check(cond, what) {
  if (!cond) { throw new Error("check failed: " + what); }
}
const vdb = db.getSiblingDB("ci_validation");
vdb.dropDatabase();
vdb.createCollection("students", {
  validator: {
    $jsonSchema: {
      bsonType: "object",
      title: "Student Object Validation",
      required: ["name", "year"],
      properties: {
        name: { bsonType: "string", description: "'name' must be a string and is required" },
        year: { bsonType: "int", minimum: 2017, maximum: 3017 },
        gpa: { bsonType: ["double"] },
      },
    },
  },
});
vdb.students.insertOne({ name: "Alice", year: NumberInt(2019), gpa: 3.5 });
let err = null;
try { vdb.students.insertOne({ name: "Bob", year: NumberInt(2016), gpa: 3 }); } catch (e) { err = e; }
check(err !== null && err.code === 121, "insert fails with 121: " + err);
const details = err.errInfo && err.errInfo.details;
check(details && details.operatorName === "$jsonSchema" && details.title === "Student Object Validation", "errInfo.details: " + JSON.stringify(err.errInfo));
const props = details.schemaRulesNotSatisfied[0].propertiesNotSatisfied.map(p => p.propertyName).join(",");
check(props === "year,gpa", "propertiesNotSatisfied: " + props);
const info = vdb.getCollectionInfos({ name: "students" })[0];
check(info.options.validator.$jsonSchema.required.length === 2 && info.options.validationLevel === undefined, "getCollectionInfos: " + JSON.stringify(info.options));
vdb.runCommand({ collMod: "students", validationAction: "warn" });
vdb.students.insertOne({ name: 1 });
check(vdb.students.countDocuments({}) === 2, "warn lets the document in");
vdb.runCommand({ collMod: "students", validationAction: "error", validator: { year: { $type: "int" } } });
vdb.students.insertOne({ name: "x" }, { bypassDocumentValidation: true });
check(vdb.students.countDocuments({ $jsonSchema: { required: ["year"] } }) === 1, "$jsonSchema as a query operator");
let missing = null;
try { vdb.runCommand({ collMod: "nope", validator: {} }); } catch (e) { missing = e; }
const res = missing ? missing.code : vdb.runCommand({ collMod: "nope", validator: {} }).code;
check(res === 26, "collMod on a missing collection: " + res);
print("validation: ok");
