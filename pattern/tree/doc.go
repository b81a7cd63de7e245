// Package tree implements the tree patterns of the MongoDB manual over
// one collection: parent references (always kept, the truth) walked with
// $graphLookup, plus, as Config asks, child references, an array of
// ancestors and a materialized path, each kept consistent on insert,
// move and delete and checked against the parent references.
//
// # When to use which
//
// Parent references alone make a move one write and every subtree read
// a $graphLookup (one indexed query per level, on the server). An
// ancestors array reads a subtree with one equality on a multikey index
// and the breadcrumbs from the node itself. A materialized path reads a
// subtree with one anchored prefix scan and sorts parents before their
// descendants. Child references answer "children of" from the parent
// document. Each derived representation makes a move cost O(subtree)
// writes. Nested sets are not offered: any insert renumbers much of the
// tree.
//
// # Shape
//
//	{ _id: "Books",     parent: null,          children: ["Programming"], ancestors: [],                      path: "," }
//	{ _id: "Programming", parent: "Books",     children: ["Databases", "Languages"], ancestors: ["Books"],     path: ",Books," }
//	{ _id: "Databases", parent: "Programming", children: ["MongoDB", "dbm"], ancestors: ["Books", "Programming"], path: ",Books,Programming," }
//	{ _id: "MongoDB",   parent: "Databases",   children: [],              ancestors: ["Books", "Programming", "Databases"], path: ",Books,Programming,Databases," }
//
// Tree[T] is generic over the user's node type (bson tags respected;
// bson.D works); the tree fields are set by the package, and a T need not
// declare them. A root's path is the Separator alone (the manual leaves
// it null), so every subtree query is the same prefix form. With Path
// kept, _ids are strings without the Separator (ErrBadID).
//
// # Write paths
//
//	insert:  parent = findOne({_id: p}, {ancestors: 1, path: 1})
//	         insertOne({…doc, parent: p, children: [], ancestors: parent.ancestors + [p], path: parent.path + p + ","})
//	         updateOne({_id: p}, {$addToSet: {children: id}})
//	move:    walk the new parent's ancestors ($graphLookup): id among them, or the parent is id ⇒ ErrCycle
//	         updateOne({_id: id}, {$set: {parent: q, ancestors: A, path: P}})
//	         updateOne({_id: old}, {$pull: {children: id}}); updateOne({_id: q}, {$addToSet: {children: id}})
//	         updateMany({ancestors: id}, [{$set: {ancestors: {$concatArrays: [A, {$slice: ["$ancestors", {$indexOfArray: ["$ancestors", id]}, 2^30]}]}}}])
//	         updateMany({path: /^<old path + id + ",">/}, [{$set: {path: {$replaceOne: {input: "$path", find: old, replacement: new}}}}])
//	delete:  Refuse: a child exists ⇒ ErrHasChildren; Cascade: the subtree's _ids ($graphLookup), deepest first,
//	         deleteMany({_id: {$in: …}}) in batches; Detach: each child moved to the roots; then the node,
//	         and $pull from its parent's children
//
// Constants in pipelines are wrapped in $literal, so an _id that starts
// with "$" is never read as a field path.
//
// # Atomicity
//
// With transactions (a replica set; see pattern.Atomic) Insert, Move and
// Delete are all or nothing. Without them (the engine today) each is a
// sequence of single-document and multi-document writes, parent
// reference first, then the derived fields: a move that stops midway
// leaves the parent reference right and some derived fields stale, and
// Check with repair rewrites them from the parent references. Concurrent
// inserts under one parent are safe ($addToSet is atomic on one
// document); concurrent moves of overlapping subtrees need transactions,
// or Check with repair after them.
//
// # Indexes
//
// EnsureIndexes creates {parent: 1} (children, and $graphLookup's
// connectToField for descendants: every level is one indexed query;
// ancestors walk _id), {children: 1}, {ancestors: 1} (multikey) and
// {path: 1} for the fields kept.
//
// # Queries
//
//	children:    db.categories.find({parent: "Programming"})
//	descendants: aggregate([{$match: {_id: "Programming"}}, {$graphLookup: {from: "categories", startWith: "$_id",
//	               connectFromField: "_id", connectToField: "parent", as: "n", depthField: "__depth",
//	               maxDepth: Levels-1, restrictSearchWithMatch: Match}}, {$unwind: "$n"}, …])
//	ancestors:   the same from "$parent" along connectToField "_id"; or the node's ancestors array
//	subtree:     db.categories.find({path: /^,Books,Programming,/})  // PathPrefix: regexp.QuoteMeta of the prefix
//	             db.categories.find({ancestors: "Programming"})
//
// The path query is anchored and case-sensitive, so explain shows an
// IXSCAN of path_1 with exactly two intervals, [",Books,Programming,",
// ",Books,Programming-") and the regex itself, and one key examined per
// descendant; an unescaped "." in an _id would match any character and
// widen the result, a missing "^" or an "i" flag would scan the whole
// index. The $unwind right after $graphLookup is folded into it (explain
// shows "unwinding"), so a subtree streams instead of being built as one
// array bounded by 16 MiB; $graphLookup itself holds its visited set in
// memory (100 MiB; error 40099 before MongoDB 8.2, which spills).
//
// # Check
//
// Check(repair=false) rebuilds every node's expected children, ancestors
// and path from the parent references and reports the nodes that differ,
// and the nodes whose parent does not exist or whose parents loop (these
// repair cannot fix); Check(repair=true) rewrites the differing fields.
//
// # Trade-off
//
// On the embedded engine (bench_test.go), reading a 110-node subtree
// takes 111 round trips and about 22 ms with the recursive walk an
// application writes over parent references, 2 round trips and 5 ms with
// $graphLookup, 2 and 4 ms through the ancestors array, and 3 and 10 ms
// through the path; moving that subtree costs 4 round trips and under
// 1 ms with parent references only, 8 and about 12 ms with every
// representation kept (the whole subtree is rewritten).
//
// # Mistakes it guards against
//
// $graphLookup without an index on connectToField (one collection scan
// per level); unescaped or unanchored path regexes; a subtree move that
// rewrites the node and leaves its descendants' paths and ancestors
// pointing at the old place; moving a node under its own descendant (a
// cycle every walk then has to survive); a cascade that leaves orphans
// when it stops; relying on $graphLookup's array order (results are
// sorted by depth, then _id).
//
// Following https://www.mongodb.com/docs/manual/applications/data-models-tree-structures/
// and https://www.mongodb.com/docs/manual/reference/operator/aggregation/graphLookup/
package tree
