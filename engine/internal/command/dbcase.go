package command

import (
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// checkDBCase refuses to create database db when it does not exist and one
// whose name differs from it only in case does, as mongod's DatabaseHolder
// does (DatabaseDifferCase, 13297). An existing db passes.
//
// It reads the list of databases once: a concurrent writer may create db
// between two reads, which must not make db look like its own case twin.
func checkDBCase(s *storage.Store, db string) error {
	dbs := s.Databases()
	for _, have := range dbs {
		if have == db {
			return nil
		}
	}
	for _, have := range dbs {
		if asciiEqualFold(have, db) {
			return mongoerr.Newf(mongoerr.DatabaseDifferCase, "db already exists with different case already have: [%s] trying to create [%s]", have, db)
		}
	}
	return nil
}

// asciiEqualFold compares a and b ignoring ASCII case only, as mongod's
// database name comparison does.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
