"""Everyday CRUD through pymongo against formwork serve; exits non-zero on
any error or wrong result."""
import sys
import warnings

warnings.simplefilter("error")

import pymongo  # noqa: E402
from pymongo.errors import DuplicateKeyError  # noqa: E402


def check(cond, what):
    if not cond:
        raise SystemExit("check failed: " + what)


client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=10000)
db = client.get_database("ci_py")
db.client.drop_database("ci_py")
db.create_collection("people")
people = db.people
res = people.insert_many([
    {"_id": 1, "name": "ada", "age": 36, "tags": []},
    {"_id": 2, "name": "grace", "age": 45, "tags": ["navy"]},
    {"_id": 3, "name": "alan", "age": 41, "tags": []},
    {"_id": 4, "name": "edsger", "age": 72, "tags": []},
])
check(res.inserted_ids == [1, 2, 3, 4], "insert_many ids")
found = list(people.find({"age": {"$gt": 40}}).sort("age", pymongo.DESCENDING).limit(2))
check([d["_id"] for d in found] == [4, 2], "find/sort/limit: %r" % found)
up = people.update_one({"_id": 1}, {"$set": {"age": 37}, "$push": {"tags": "math"}})
check(up.matched_count == 1 and up.modified_count == 1, "update_one counts")
ada = people.find_one({"_id": 1})
check(ada["age"] == 37 and ada["tags"] == ["math"], "updated doc: %r" % ada)
check(people.delete_one({"name": "alan"}).deleted_count == 1, "delete_one")
check(people.count_documents({}) == 3, "count_documents")
check(people.count_documents({"age": {"$gte": 45}}) == 2, "count_documents with filter")
check(db.list_collection_names() == ["people"], "list_collection_names")
agg = list(people.aggregate([
    {"$match": {"age": {"$gte": 40}}},
    {"$group": {"_id": None, "total": {"$sum": "$age"}, "n": {"$sum": 1}}},
]))
check(agg == [{"_id": None, "total": 117, "n": 2}], "aggregate $group: %r" % agg)
names_sorted = [d["name"] for d in people.aggregate(
    [{"$project": {"name": 1, "_id": 0}}, {"$sort": {"name": 1}}], batchSize=1)]
check(names_sorted == ["ada", "edsger", "grace"], "aggregate $project/$sort with getMore: %r" % names_sorted)
try:
    people.insert_one({"_id": 2})
    check(False, "duplicate insert accepted")
except DuplicateKeyError as e:
    check(e.code == 11000, "duplicate key code")
print("pymongo checks passed")
