package auth

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Resource is what a privilege applies to, as a role's privilege document
// names it: the cluster, every resource, or a database/collection pattern
// in which an empty db or collection means "any".
type Resource struct {
	// Cluster is {cluster: true}: server-wide operations.
	Cluster bool
	// Any is {anyResource: true}: every resource, system ones included.
	Any bool
	// DB and Collection are {db, collection}; "" means any.
	DB, Collection string
}

// ClusterResource is the {cluster: true} resource.
var ClusterResource = Resource{Cluster: true}

// DBResource is the resource of database db itself (listCollections,
// dropDatabase, user administration).
func DBResource(db string) Resource { return Resource{DB: db} }

// NSResource is the resource of one collection.
func NSResource(db, coll string) Resource { return Resource{DB: db, Collection: coll} }

// isSystem reports whether coll is a system collection, which broad
// patterns do not cover (I3).
func isSystem(coll string) bool { return strings.HasPrefix(coll, "system.") }

// Covers reports whether a privilege granted on p applies to the concrete
// target t (a cluster, a database or a collection resource).
func (p Resource) Covers(t Resource) bool {
	switch {
	case p.Any:
		return true
	case p.Cluster || t.Cluster:
		return p.Cluster && t.Cluster
	}
	if t.Collection == "" { // a database as a whole
		return p.Collection == "" && (p.DB == "" || p.DB == t.DB)
	}
	if p.DB != "" && p.DB != t.DB {
		return false
	}
	if p.Collection == "" {
		return !isSystem(t.Collection)
	}
	return p.Collection == t.Collection
}

// String formats r as mongod's resource patterns print in messages.
func (r Resource) String() string {
	switch {
	case r.Any:
		return "<all resources>"
	case r.Cluster:
		return "<system resource>"
	case r.DB == "" && r.Collection == "":
		return "<all normal resources>"
	case r.Collection == "":
		return "<database " + r.DB + ">"
	case r.DB == "":
		return "<collection " + r.Collection + " in any database>"
	}
	return r.DB + "." + r.Collection
}

// Doc returns r as a privilege document's resource field.
func (r Resource) Doc() bson.D {
	switch {
	case r.Any:
		return bson.D{{Key: "anyResource", Value: true}}
	case r.Cluster:
		return bson.D{{Key: "cluster", Value: true}}
	}
	return bson.D{{Key: "db", Value: r.DB}, {Key: "collection", Value: r.Collection}}
}
