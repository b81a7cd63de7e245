// Time series collections through mongosh (issue 12): create with the
// timeseries option, insert, query, explain, collStats. Any failed check
// throws, which makes mongosh exit non-zero.
function check(cond, what) {
  if (!cond) { throw new Error("check failed: " + what); }
}
const tdb = db.getSiblingDB("ci_timeseries");
tdb.dropDatabase();
tdb.createCollection("weather", {
  timeseries: { timeField: "timestamp", metaField: "metadata", granularity: "hours" },
  expireAfterSeconds: 86400 * 365 * 50,
});
const info = tdb.getCollectionInfos({ name: "weather" })[0];
check(info.type === "timeseries" && info.options.timeseries.granularity === "hours" &&
  info.options.timeseries.bucketMaxSpanSeconds === 2592000, "listCollections: " + JSON.stringify(info));
check(tdb.getCollectionNames().includes("system.buckets.weather"), "buckets namespace: " + JSON.stringify(tdb.getCollectionNames()));
tdb.weather.insertMany([
  { metadata: { sensorId: 5578, type: "temperature" }, timestamp: ISODate("2021-05-18T00:00:00.000Z"), temp: 12 },
  { metadata: { sensorId: 5578, type: "temperature" }, timestamp: ISODate("2021-05-18T04:00:00.000Z"), temp: 11 },
  { metadata: { sensorId: 5578, type: "temperature" }, timestamp: ISODate("2021-05-18T08:00:00.000Z"), temp: 11 },
  { metadata: { sensorId: 5579, type: "temperature" }, timestamp: ISODate("2021-05-18T12:00:00.000Z"), temp: 12 },
]);
const one = tdb.weather.findOne({ timestamp: ISODate("2021-05-18T00:00:00.000Z") });
check(one && one.temp === 12 && one.metadata.sensorId === 5578 && Object.keys(one)[0] === "timestamp", "findOne: " + JSON.stringify(one));
const range = tdb.weather.find({ "metadata.sensorId": 5578, timestamp: { $gte: ISODate("2021-05-18T02:00:00Z") } }).sort({ timestamp: 1 }).toArray();
check(range.length === 2 && range[0].temp === 11, "range query: " + JSON.stringify(range));
const avg = tdb.weather.aggregate([{ $group: { _id: "$metadata.sensorId", avg: { $avg: "$temp" } } }, { $sort: { _id: 1 } }]).toArray();
check(avg.length === 2 && avg[1].avg === 12, "aggregate: " + JSON.stringify(avg));
const ex = tdb.weather.find({ metadata: { sensorId: 5578, type: "temperature" } }).explain();
check(JSON.stringify(ex).includes("IXSCAN") && JSON.stringify(ex).includes("$_internalUnpackBucket"), "explain: " + JSON.stringify(ex));
check(tdb.weather.countDocuments({}) === 4, "countDocuments");
const del = tdb.weather.deleteMany({ temp: 11 });
check(del.deletedCount === 2, "deleteMany: " + JSON.stringify(del));
let bad = 0;
try { tdb.weather.updateOne({ "metadata.sensorId": 5579 }, { $set: { "metadata.type": "t" } }); } catch (e) { bad = e.code; }
check(bad === 72, "updateOne refused with 72, got " + bad);
const up = tdb.weather.updateMany({ "metadata.sensorId": 5579 }, { $set: { "metadata.type": "t" } });
check(up.matchedCount === 1 && up.modifiedCount === 1, "updateMany on meta: " + JSON.stringify(up));
try { tdb.weather.insertOne({ metadata: {}, temp: 1 }); bad = 0; } catch (e) { bad = e.code; }
check(bad === 2, "a measurement without its timeField is refused with 2, got " + bad);
tdb.weather.createIndex({ "metadata.sensorId": 1, timestamp: -1 });
const keys = tdb.weather.getIndexes().map(ix => JSON.stringify(ix.key));
check(keys.includes('{"metadata.sensorId":1,"timestamp":-1}'), "getIndexes shows the user's key: " + JSON.stringify(keys));
const stats = tdb.weather.stats();
check(stats.timeseries && stats.timeseries.bucketsNs === "ci_timeseries.system.buckets.weather" && stats.timeseries.bucketCount >= 1, "stats: " + JSON.stringify(stats.timeseries));
tdb.dropDatabase();
print("time series: ok");
