package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// maxAuthListLen bounds the names one user or role command may list.
const maxAuthListLen = 10000

// parseRoleList reads a roles array whose entries are a role name (of
// db) or {role, db}.
func parseRoleList(cmd string, v bson.RawValue, db string) ([]roleName, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '%s.roles' is the wrong type '%s', expected type 'array'", cmd, typeName(v.Type))
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "%v", err)
	}
	if len(vals) > maxAuthListLen {
		return nil, mongoerr.New(mongoerr.BadValue, "too many roles")
	}
	out := make([]roleName, 0, len(vals))
	for _, rv := range vals {
		n, err := parseRoleName(rv, db)
		if err != nil {
			return nil, err
		}
		if !containsRole(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// parseRoleName reads "role" (of db) or {role, db}.
func parseRoleName(v bson.RawValue, db string) (roleName, error) {
	if s, ok := v.StringValueOK(); ok {
		return roleName{s, db}, nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		return roleName{}, mongoerr.New(mongoerr.BadValue, "Role names must be either strings or objects")
	}
	r, ok1 := d.Lookup("role").StringValueOK()
	rdb, ok2 := d.Lookup("db").StringValueOK()
	if !ok1 || !ok2 {
		return roleName{}, mongoerr.New(mongoerr.BadValue, "Role name objects must have 'role' and 'db' string fields")
	}
	return roleName{r, rdb}, nil
}

func containsRole(rs []roleName, n roleName) bool {
	for _, r := range rs {
		if r == n {
			return true
		}
	}
	return false
}

// parseUsersArg reads usersInfo's value: 1 (every user of db), a name, a
// {user, db} document or an array of them, or {forAllDBs: true}. all is
// true for 1 (names nil) and forAllDBs (names nil, db "").
func parseUsersArg(v bson.RawValue, db string) (names []userName, all bool, err error) {
	one := func(v bson.RawValue) (userName, error) {
		if s, ok := v.StringValueOK(); ok {
			return userName{s, db}, nil
		}
		d, ok := v.DocumentOK()
		if !ok {
			return userName{}, mongoerr.New(mongoerr.BadValue, "User name must be either a string or an object")
		}
		u, ok1 := d.Lookup("user").StringValueOK()
		udb, ok2 := d.Lookup("db").StringValueOK()
		if !ok1 || !ok2 {
			return userName{}, mongoerr.New(mongoerr.BadValue, "User name objects must have 'user' and 'db' string fields")
		}
		return userName{u, udb}, nil
	}
	switch v.Type {
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		if len(vals) > maxAuthListLen {
			return nil, false, mongoerr.New(mongoerr.BadValue, "too many users")
		}
		for _, e := range vals {
			n, err := one(e)
			if err != nil {
				return nil, false, err
			}
			names = append(names, n)
		}
		return names, false, nil
	case bson.TypeEmbeddedDocument:
		if fa, err := v.Document().LookupErr("forAllDBs"); err == nil {
			if b, _ := asBool(fa); b {
				return nil, true, nil
			}
		}
		n, err := one(v)
		return []userName{n}, false, err
	case bson.TypeString:
		n, err := one(v)
		return []userName{n}, false, err
	}
	if i, ok := asInt(v); ok && i == 1 {
		return nil, true, nil
	}
	return nil, false, mongoerr.New(mongoerr.BadValue, "User name must be either a string or an object")
}

// parseRolesArg reads rolesInfo's value: 1 (every role of db), a name, a
// {role, db} document or an array of them.
func parseRolesArg(v bson.RawValue, db string) (names []roleName, all bool, err error) {
	switch v.Type {
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		if len(vals) > maxAuthListLen {
			return nil, false, mongoerr.New(mongoerr.BadValue, "too many roles")
		}
		for _, e := range vals {
			n, err := parseRoleName(e, db)
			if err != nil {
				return nil, false, err
			}
			names = append(names, n)
		}
		return names, false, nil
	case bson.TypeString, bson.TypeEmbeddedDocument:
		n, err := parseRoleName(v, db)
		return []roleName{n}, false, err
	}
	if i, ok := asInt(v); ok && i == 1 {
		return nil, true, nil
	}
	return nil, false, mongoerr.New(mongoerr.BadValue, "Role names must be either strings or objects")
}

// rolesNeeds requires act on each named role's database, and on db.
func rolesNeeds(db string, roles []roleName, acts ...auth.Action) []auth.Need {
	out := []auth.Need{}
	seen := map[string]bool{}
	for _, r := range roles {
		if !seen[r.DB] {
			seen[r.DB] = true
			out = append(out, need(auth.DBResource(r.DB), acts...))
		}
	}
	return out
}

// rolesFieldNeeds requires act on the database of each role the command's
// roles field names, and on the command's database.
func rolesFieldNeeds(act auth.Action) func(r *Request) [][]auth.Need {
	return func(r *Request) [][]auth.Need {
		needs := []auth.Need{need(auth.DBResource(r.DB), act)}
		if v, err := r.Body.LookupErr("roles"); err == nil {
			if roles, err := parseRoleList(r.Name, v, r.DB); err == nil {
				needs = append(needs, rolesNeeds(r.DB, roles, act)...)
			}
		}
		return one(needs...)
	}
}

// checkRolesExist returns RoleNotFound for the first role that is
// neither built in nor stored.
func checkRolesExist(d *authData, roles []roleName) error {
	for _, r := range roles {
		if !d.roleExists(r) {
			return mongoerr.Newf(mongoerr.RoleNotFound, "Could not find role: %s", r)
		}
	}
	return nil
}

// userNotFound is mongod's error for a user that does not exist.
func userNotFound(u userName) error {
	return mongoerr.Newf(mongoerr.UserNotFound, "Could not find user \"%s\" for db \"%s\"", u.Name, u.DB)
}

// checkUserDB rejects user and role definitions on databases that cannot
// hold them.
func checkAuthDB(db, what string) error {
	if db == "local" {
		return mongoerr.Newf(mongoerr.BadValue, "Cannot create %s in the local database", what)
	}
	return nil
}
