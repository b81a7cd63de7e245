package advisor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// collect builds the Snapshot: server, then each database's collections,
// then the workload and the explains. A failed read leaves a note; only a
// failure to reach the server at all is an error.
func collect(ctx context.Context, client *mongo.Client, p *plan) (*Snapshot, error) {
	c := &conn{client: client, deadline: p.start.Add(p.o.Budget), maxTime: p.o.MaxTime}
	snap := &Snapshot{Taken: p.now, Cutoff: p.now.Add(-p.t.coldAge()), Sample: p.o.Sample}
	srv, err := collectServer(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("advisor: %w", err)
	}
	srv.Target = p.o.Target
	snap.Server = srv
	names, err := databaseNames(ctx, c, p.o.Databases)
	if err != nil {
		return nil, fmt.Errorf("advisor: list databases: %w", err)
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		snap.Databases = append(snap.Databases, collectDatabase(ctx, c, p, snap, name))
	}
	collectWorkload(ctx, c, p, snap)
	explainShapes(ctx, c, p, snap)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return snap, nil
}

// note records that something could not be collected.
func (s *Snapshot) note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// collectServer reads buildInfo and hello.
func collectServer(ctx context.Context, c *conn) (Server, error) {
	var s Server
	bi, err := c.run(ctx, "admin", bson.D{{Key: "buildInfo", Value: 1}})
	if err != nil {
		return s, fmt.Errorf("buildInfo: %w", err)
	}
	s.Version, _ = bi.Lookup("version").StringValueOK()
	hello, err := c.run(ctx, "admin", bson.D{{Key: "hello", Value: 1}})
	if err != nil {
		return s, fmt.Errorf("hello: %w", err)
	}
	s.Topology = "standalone"
	if msg, _ := hello.Lookup("msg").StringValueOK(); msg == "isdbgrid" {
		s.Topology = "sharded"
	} else if _, ok := hello.Lookup("setName").StringValueOK(); ok {
		s.Topology = "replicaSet"
	}
	return s, nil
}

// databaseNames returns the databases to inspect: those asked for, or
// every database but admin, local and config.
func databaseNames(ctx context.Context, c *conn, asked []string) ([]string, error) {
	if len(asked) > 0 {
		out := slices.Clone(asked)
		slices.Sort(out)
		return slices.Compact(out), nil
	}
	reply, err := c.run(ctx, "admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "nameOnly", Value: true}})
	if err != nil {
		return nil, err
	}
	var out []string
	vals, _ := reply.Lookup("databases").Array().Values()
	for _, v := range vals {
		doc, ok := v.DocumentOK()
		if !ok {
			continue
		}
		name, _ := doc.Lookup("name").StringValueOK()
		switch name {
		case "", "admin", "local", "config":
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// collectDatabase reads one database: its profiler level, then each
// collection.
func collectDatabase(ctx context.Context, c *conn, p *plan, snap *Snapshot, name string) *Database {
	d := &Database{Name: name, Profiler: -1}
	if r, err := c.run(ctx, name, bson.D{{Key: "profile", Value: -1}}); err == nil {
		d.Profiler = int(asInt(r.Lookup("was")))
	}
	colls, err := c.cursor(ctx, name, bson.D{{Key: "listCollections", Value: 1}})
	if err != nil {
		snap.note("%s: listCollections: %v", name, err)
		return d
	}
	for _, raw := range colls {
		coll, ok := parseCollectionInfo(name, raw)
		if !ok {
			continue
		}
		if len(d.Collections) >= p.o.MaxCollections {
			snap.note("%s: more than %d collections; the rest were not read", name, p.o.MaxCollections)
			break
		}
		d.Collections = append(d.Collections, coll)
	}
	slices.SortFunc(d.Collections, func(a, b *Collection) int { return strings.Compare(a.Name, b.Name) })
	for _, coll := range d.Collections {
		if ctx.Err() != nil {
			break
		}
		collectCollection(ctx, c, p, snap, coll)
	}
	collectReferences(ctx, c, p, snap, d)
	return d
}

// parseCollectionInfo reads one listCollections entry; views and system
// collections are skipped.
func parseCollectionInfo(db string, raw bson.Raw) (*Collection, bool) {
	name, _ := raw.Lookup("name").StringValueOK()
	typ, _ := raw.Lookup("type").StringValueOK()
	if name == "" || strings.HasPrefix(name, "system.") || typ == "view" {
		return nil, false
	}
	if typ == "" {
		typ = "collection"
	}
	coll := &Collection{DB: db, Name: name, Type: typ}
	if v, err := raw.LookupErr("options", "validator"); err == nil {
		if doc, ok := v.DocumentOK(); ok && len(doc) > 5 {
			coll.Validator = true
			_, err := doc.LookupErr("$jsonSchema")
			coll.JSONSchema = err == nil
		}
	}
	return coll, true
}

// asInt reads any BSON number as an int64; anything else is 0.
func asInt(v bson.RawValue) int64 {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32())
	case bson.TypeInt64:
		return v.Int64()
	case bson.TypeDouble:
		return int64(v.Double())
	case bson.TypeDecimal128:
		f, err := parseDecimal(v.Decimal128().String())
		if err == nil {
			return int64(f)
		}
	}
	return 0
}

// asFloat reads any BSON number as a float64; anything else is 0.
func asFloat(v bson.RawValue) float64 {
	switch v.Type {
	case bson.TypeDouble:
		return v.Double()
	case bson.TypeInt32, bson.TypeInt64:
		return float64(asInt(v))
	case bson.TypeDecimal128:
		f, _ := parseDecimal(v.Decimal128().String())
		return f
	}
	return 0
}
