// Transactions through mongosh (issue 14): session.withTransaction moves
// money between two accounts; an aborted transaction leaves nothing; a
// write conflict between two sessions answers WriteConflict with the
// TransientTransactionError label. Any failed check throws, which makes
// mongosh exit non-zero.
function check(cond, what) {
  if (!cond) { throw new Error("check failed: " + what); }
}
db.getSiblingDB("ci_txn").dropDatabase();
const tdb = db.getSiblingDB("ci_txn");
tdb.acct.insertMany([{ _id: 1, bal: 100 }, { _id: 2, bal: 0 }]);

const s = db.getMongo().startSession();
const acct = s.getDatabase("ci_txn").acct;
s.withTransaction(() => {
  acct.updateOne({ _id: 1 }, { $inc: { bal: -40 } });
  acct.updateOne({ _id: 2 }, { $inc: { bal: 40 } });
  check(tdb.acct.findOne({ _id: 1 }).bal === 100, "outside the transaction the old balance shows");
  check(acct.findOne({ _id: 1 }).bal === 60, "inside the transaction its own write shows");
});
check(tdb.acct.findOne({ _id: 1 }).bal === 60 && tdb.acct.findOne({ _id: 2 }).bal === 40, "withTransaction committed both updates");

s.startTransaction();
acct.insertOne({ _id: 3, bal: 5 });
s.abortTransaction();
check(tdb.acct.countDocuments({}) === 2, "abortTransaction discarded the insert");

const s2 = db.getMongo().startSession();
s.startTransaction();
s2.startTransaction();
acct.updateOne({ _id: 1 }, { $set: { bal: 1 } });
let err = null;
try { s2.getDatabase("ci_txn").acct.updateOne({ _id: 1 }, { $set: { bal: 2 } }); } catch (e) { err = e; }
check(err && err.code === 112, "second writer gets WriteConflict, got " + (err && err.code));
check(err.errorLabels && err.errorLabels.includes("TransientTransactionError"), "WriteConflict carries TransientTransactionError: " + JSON.stringify(err.errorLabels));
try { s2.abortTransaction(); } catch (e) { /* already aborted by the conflict */ }
s.commitTransaction();
check(tdb.acct.findOne({ _id: 1 }).bal === 1, "the first writer committed");

let bad = 0;
s.startTransaction();
try { acct.aggregate([{ $out: "copy" }]).toArray(); } catch (e) { bad = e.code; }
try { s.abortTransaction(); } catch (e) { /* aborted by the error */ }
check(bad === 263, "$out in a transaction answers OperationNotSupportedInTransaction, got " + bad);
s.endSession();
s2.endSession();
print("transaction checks passed");
