"""Transactions through pymongo (issue 14): with_transaction commits a
transfer, an exception in the callback aborts it, and a conflicting
writer gets WriteConflict with the TransientTransactionError label."""
import sys
import warnings

warnings.simplefilter("error")

import pymongo  # noqa: E402
from pymongo.errors import OperationFailure  # noqa: E402


def check(cond, what):
    if not cond:
        raise SystemExit("check failed: " + what)


client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=10000)
client.drop_database("ci_pytxn")
db = client.get_database("ci_pytxn")
db.acct.insert_many([{"_id": 1, "bal": 100}, {"_id": 2, "bal": 0}])


def transfer(session):
    db.acct.update_one({"_id": 1}, {"$inc": {"bal": -25}}, session=session)
    check(db.acct.find_one({"_id": 1})["bal"] == 100, "outside the transaction the old balance shows")
    check(db.acct.find_one({"_id": 1}, session=session)["bal"] == 75, "own write visible inside")
    db.acct.update_one({"_id": 2}, {"$inc": {"bal": 25}}, session=session)


with client.start_session() as s:
    s.with_transaction(transfer)
check(db.acct.find_one({"_id": 1})["bal"] == 75 and db.acct.find_one({"_id": 2})["bal"] == 25, "with_transaction committed")


class Boom(Exception):
    pass


def fails(session):
    db.acct.insert_one({"_id": 3}, session=session)
    raise Boom()


with client.start_session() as s:
    try:
        s.with_transaction(fails)
    except Boom:
        pass
check(db.acct.count_documents({}) == 2, "the callback's exception aborted the insert")

with client.start_session() as s1, client.start_session() as s2:
    s1.start_transaction()
    s2.start_transaction()
    db.acct.update_one({"_id": 1}, {"$set": {"bal": 1}}, session=s1)
    try:
        db.acct.update_one({"_id": 1}, {"$set": {"bal": 2}}, session=s2)
        check(False, "second writer should conflict")
    except OperationFailure as e:
        check(e.code == 112, "WriteConflict, got %r" % e.code)
        check(e.has_error_label("TransientTransactionError"), "TransientTransactionError label")
    s2.abort_transaction()
    s1.commit_transaction()
check(db.acct.find_one({"_id": 1})["bal"] == 1, "first writer committed")
print("pymongo transaction checks passed")
