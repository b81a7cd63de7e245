package command

import (
	"context"
	"slices"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("createRole", &spec{run: runCreateRole, help: "create a role"})
	register("updateRole", &spec{run: runUpdateRole, help: "replace a role's privileges or roles"})
	register("dropRole", &spec{run: runDropRole, help: "remove a role"})
	register("dropAllRolesFromDatabase", &spec{run: runDropAllRoles, help: "remove every role of a database"})
	register("rolesInfo", &spec{run: runRolesInfo, help: "describe roles"})
	register("grantRolesToUser", &spec{run: runGrantRolesToUser, help: "grant roles to a user"})
	register("revokeRolesFromUser", &spec{run: runRevokeRolesFromUser, help: "revoke roles from a user"})
	register("grantRolesToRole", &spec{run: runGrantRolesToRole, help: "grant roles to a role"})
	register("revokeRolesFromRole", &spec{run: runRevokeRolesFromRole, help: "revoke roles from a role"})
	register("grantPrivilegesToRole", &spec{run: runGrantPrivilegesToRole, help: "grant privileges to a role"})
	register("revokePrivilegesFromRole", &spec{run: runRevokePrivilegesFromRole, help: "revoke privileges from a role"})
}

// roleArgs are the fields of createRole and updateRole.
type roleArgs struct {
	name      roleName
	privs     []auth.Privilege
	havePrivs bool
	roles     []roleName
	haveRoles bool
	restrict  bson.Raw
}

func parseRoleArgs(r *Request) (roleArgs, error) {
	var a roleArgs
	v := r.Body.Index(0).Value()
	s, ok := v.StringValueOK()
	if !ok {
		return a, mongoerr.FieldType(r.Name, r.Name, typeName(v.Type), "string")
	}
	if s == "" {
		return a, mongoerr.New(mongoerr.BadValue, "Role name must not be empty")
	}
	a.name = roleName{s, r.DB}
	err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "privileges":
			a.privs, err = auth.ParsePrivileges(v)
			a.havePrivs = true
		case "roles":
			a.roles, err = parseRoleList(r.Name, v, r.DB)
			a.haveRoles = true
		case "authenticationRestrictions":
			arr, ok := v.ArrayOK()
			if !ok {
				return mongoerr.FieldType(r.Name, k, typeName(v.Type), "array")
			}
			a.restrict = bson.Raw(arr)
			return parseRestrictions(a.restrict)
		default:
			return errUnknown
		}
		return err
	})
	return a, err
}

// namedRoleNeeds requires acts on the role's database and grantRole on
// the databases of the roles it names.
func namedRoleNeeds(r *Request, acts ...auth.Action) [][]auth.Need {
	needs := []auth.Need{need(auth.DBResource(r.DB), acts...)}
	if v, err := r.Body.LookupErr("roles"); err == nil {
		if roles, err := parseRoleList(r.Name, v, r.DB); err == nil {
			needs = append(needs, rolesNeeds(r.DB, roles, auth.ActGrantRole)...)
		}
	}
	return one(needs...)
}

func createRoleNeeds(r *Request) [][]auth.Need { return namedRoleNeeds(r, auth.ActCreateRole) }

func updateRoleNeeds(r *Request) [][]auth.Need {
	return namedRoleNeeds(r, auth.ActGrantRole, auth.ActRevokeRole)
}

func rolesInfoNeeds(r *Request) [][]auth.Need {
	names, all, err := parseRolesArg(r.Body.Index(0).Value(), r.DB)
	if err != nil {
		return nil
	}
	if all {
		return one(need(auth.DBResource(r.DB), auth.ActViewRole))
	}
	return one(rolesNeeds(r.DB, names, auth.ActViewRole)...)
}

// checkCycle returns InvalidRoleModification when granting roles to
// target would make target reach itself.
func checkCycle(d *authData, target roleName, roles []roleName) error {
	for _, g := range roles {
		if g == target {
			return mongoerr.Newf(mongoerr.InvalidRoleModification, "Granting roles to %s would introduce a cycle", target)
		}
		reached, _ := d.resolve([]roleName{g})
		if containsRole(reached, target) {
			return mongoerr.Newf(mongoerr.InvalidRoleModification, "Granting %s to %s would introduce a cycle in the role graph", g, target)
		}
	}
	return nil
}

func roleNotFound(n roleName) error {
	return mongoerr.Newf(mongoerr.RoleNotFound, "Could not find role: %s", n)
}

// runCreateRole creates a user-defined role.
// https://www.mongodb.com/docs/manual/reference/command/createRole/
func runCreateRole(ctx context.Context, r *Request) (bson.D, error) {
	a, err := parseRoleArgs(r)
	if err != nil {
		return nil, err
	}
	if !a.havePrivs {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'createRole.privileges' is missing but a required field")
	}
	if !a.haveRoles {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'createRole.roles' is missing but a required field")
	}
	if err := checkAuthDB(r.DB, "roles"); err != nil {
		return nil, err
	}
	if auth.IsBuiltinName(a.name.Role) {
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot create roles with the same name as a built-in role")
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	if err := checkRolesExist(data, a.roles); err != nil {
		return nil, err
	}
	rec := &roleRecord{Name: a.name, Privileges: a.privs, Roles: a.roles, Restrict: a.restrict}
	err = r.Env.users.write(func(w *storage.Writer, _, roles *storage.Collection) error {
		if _, old, err := findRecordByID(w, roles, a.name.DB+"."+a.name.Role); err != nil {
			return err
		} else if old != nil {
			return mongoerr.Newf(mongoerr.Code(51002), "Role \"%s\" already exists", a.name)
		}
		return putRecord(w, roles, roleDoc(rec))
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// modifyRole applies fn to the stored role name in one write; built-in
// roles cannot be changed.
func (e *Env) modifyRole(name roleName, fn func(rec *roleRecord) error) error {
	if auth.IsBuiltin(name.Role, name.DB) {
		return mongoerr.Newf(mongoerr.InvalidRoleModification, "Cannot update built-in role: %s", name)
	}
	return e.users.write(func(w *storage.Writer, _, roles *storage.Collection) error {
		_, old, err := findRecordByID(w, roles, name.DB+"."+name.Role)
		if err != nil {
			return err
		}
		rec, ok := parseRoleRecord(old)
		if old == nil || !ok {
			return roleNotFound(name)
		}
		if err := fn(rec); err != nil {
			return err
		}
		return putRecord(w, roles, roleDoc(rec))
	})
}

// modifyUser applies fn to the stored user name in one write.
func (e *Env) modifyUser(name userName, fn func(u *userRecord) error) error {
	return e.users.write(func(w *storage.Writer, users, _ *storage.Collection) error {
		_, old, err := findRecordByID(w, users, name.DB+"."+name.Name)
		if err != nil {
			return err
		}
		u, ok := parseUserRecord(old)
		if old == nil || !ok {
			return userNotFound(name)
		}
		if err := fn(u); err != nil {
			return err
		}
		return putRecord(w, users, userDoc(u))
	})
}

// runUpdateRole replaces a role's privileges, roles or restrictions.
// https://www.mongodb.com/docs/manual/reference/command/updateRole/
func runUpdateRole(ctx context.Context, r *Request) (bson.D, error) {
	a, err := parseRoleArgs(r)
	if err != nil {
		return nil, err
	}
	if !a.havePrivs && !a.haveRoles && a.restrict == nil {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateRole")
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	if a.haveRoles {
		if err := checkRolesExist(data, a.roles); err != nil {
			return nil, err
		}
		if err := checkCycle(data, a.name, a.roles); err != nil {
			return nil, err
		}
	}
	err = r.Env.modifyRole(a.name, func(rec *roleRecord) error {
		if a.havePrivs {
			rec.Privileges = a.privs
		}
		if a.haveRoles {
			rec.Roles = a.roles
		}
		if a.restrict != nil {
			rec.Restrict = a.restrict
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// runDropRole removes a role and every grant of it to users and roles.
// https://www.mongodb.com/docs/manual/reference/command/dropRole/
func runDropRole(ctx context.Context, r *Request) (bson.D, error) {
	v := r.Body.Index(0).Value()
	s, ok := v.StringValueOK()
	if !ok {
		return nil, mongoerr.FieldType(r.Name, r.Name, typeName(v.Type), "string")
	}
	if err := noFields(r); err != nil {
		return nil, err
	}
	name := roleName{s, r.DB}
	if auth.IsBuiltin(name.Role, name.DB) {
		return nil, mongoerr.Newf(mongoerr.InvalidRoleModification, "Cannot drop built-in role: %s", name)
	}
	n, err := r.Env.dropRoles(func(rn roleName) bool { return rn == name })
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, roleNotFound(name)
	}
	return bson.D{}, nil
}

// runDropAllRoles removes every user-defined role of the database.
// https://www.mongodb.com/docs/manual/reference/command/dropAllRolesFromDatabase/
func runDropAllRoles(ctx context.Context, r *Request) (bson.D, error) {
	if err := noFields(r); err != nil {
		return nil, err
	}
	n, err := r.Env.dropRoles(func(rn roleName) bool { return rn.DB == r.DB })
	if err != nil {
		return nil, err
	}
	return bson.D{{Key: "n", Value: int32(n)}}, nil
}

// dropRoles removes the stored roles that match and their grants, in one
// write, and returns how many roles it removed.
func (e *Env) dropRoles(match func(roleName) bool) (int, error) {
	data, err := e.users.current()
	if err != nil {
		return 0, err
	}
	n := 0
	strip := func(rs []roleName) ([]roleName, bool) {
		out := rs[:0:0]
		for _, x := range rs {
			if !(match(x) && data.roles[x] != nil) {
				out = append(out, x)
			}
		}
		return out, len(out) != len(rs)
	}
	err = e.users.write(func(w *storage.Writer, users, roles *storage.Collection) error {
		for name := range data.roles {
			if !match(name) {
				continue
			}
			found, err := deleteRecord(w, roles, name.DB+"."+name.Role)
			if err != nil {
				return err
			}
			if found {
				n++
			}
		}
		for _, u := range data.users {
			if rs, changed := strip(u.Roles); changed {
				cp := *u
				cp.Roles = rs
				if err := putRecord(w, users, userDoc(&cp)); err != nil {
					return err
				}
			}
		}
		for name, rec := range data.roles {
			if match(name) {
				continue
			}
			if rs, changed := strip(rec.Roles); changed {
				cp := *rec
				cp.Roles = rs
				if err := putRecord(w, roles, roleDoc(&cp)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return n, err
}

// grantArgs reads the target name and the roles (or privileges) field of
// the grant and revoke commands.
func grantArgs(r *Request, field string) (string, bson.RawValue, error) {
	v := r.Body.Index(0).Value()
	s, ok := v.StringValueOK()
	if !ok {
		return "", bson.RawValue{}, mongoerr.FieldType(r.Name, r.Name, typeName(v.Type), "string")
	}
	var val bson.RawValue
	have := false
	err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		if k != field {
			return errUnknown
		}
		val, have = v, true
		return nil
	})
	if err != nil {
		return "", val, err
	}
	if !have {
		return "", val, mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.%s' is missing but a required field", r.Name, field)
	}
	return s, val, nil
}

func runGrantRolesToUser(ctx context.Context, r *Request) (bson.D, error) {
	return grantUserRoles(r, true)
}

func runRevokeRolesFromUser(ctx context.Context, r *Request) (bson.D, error) {
	return grantUserRoles(r, false)
}

// grantUserRoles adds roles to a user, or removes them.
// https://www.mongodb.com/docs/manual/reference/command/grantRolesToUser/
func grantUserRoles(r *Request, grant bool) (bson.D, error) {
	s, v, err := grantArgs(r, "roles")
	if err != nil {
		return nil, err
	}
	roles, err := parseRoleList(r.Name, v, r.DB)
	if err != nil {
		return nil, err
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	if err := checkRolesExist(data, roles); err != nil {
		return nil, err
	}
	err = r.Env.modifyUser(userName{s, r.DB}, func(u *userRecord) error {
		u.Roles = applyGrant(u.Roles, roles, grant)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

func applyGrant(have, change []roleName, grant bool) []roleName {
	if grant {
		for _, x := range change {
			if !containsRole(have, x) {
				have = append(have, x)
			}
		}
		return have
	}
	return slices.DeleteFunc(have, func(x roleName) bool { return containsRole(change, x) })
}

func runGrantRolesToRole(ctx context.Context, r *Request) (bson.D, error) {
	return grantRoleRoles(r, true)
}

func runRevokeRolesFromRole(ctx context.Context, r *Request) (bson.D, error) {
	return grantRoleRoles(r, false)
}

// grantRoleRoles adds roles to a role (refusing cycles), or removes them.
// https://www.mongodb.com/docs/manual/reference/command/grantRolesToRole/
func grantRoleRoles(r *Request, grant bool) (bson.D, error) {
	s, v, err := grantArgs(r, "roles")
	if err != nil {
		return nil, err
	}
	roles, err := parseRoleList(r.Name, v, r.DB)
	if err != nil {
		return nil, err
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	if err := checkRolesExist(data, roles); err != nil {
		return nil, err
	}
	target := roleName{s, r.DB}
	if grant {
		if err := checkCycle(data, target, roles); err != nil {
			return nil, err
		}
	}
	err = r.Env.modifyRole(target, func(rec *roleRecord) error {
		rec.Roles = applyGrant(rec.Roles, roles, grant)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

func runGrantPrivilegesToRole(ctx context.Context, r *Request) (bson.D, error) {
	return grantRolePrivileges(r, true)
}

func runRevokePrivilegesFromRole(ctx context.Context, r *Request) (bson.D, error) {
	return grantRolePrivileges(r, false)
}

// grantRolePrivileges adds privileges to a role, or removes actions.
// https://www.mongodb.com/docs/manual/reference/command/grantPrivilegesToRole/
func grantRolePrivileges(r *Request, grant bool) (bson.D, error) {
	s, v, err := grantArgs(r, "privileges")
	if err != nil {
		return nil, err
	}
	privs, err := auth.ParsePrivileges(v)
	if err != nil {
		return nil, err
	}
	err = r.Env.modifyRole(roleName{s, r.DB}, func(rec *roleRecord) error {
		if grant {
			rec.Privileges = auth.Merged(append(rec.Privileges, privs...))
			return nil
		}
		out := rec.Privileges[:0:0]
		for _, p := range rec.Privileges {
			for _, q := range privs {
				if q.Resource == p.Resource {
					p.Actions = slices.DeleteFunc(slices.Clone(p.Actions), func(a auth.Action) bool { return slices.Contains(q.Actions, a) })
				}
			}
			if len(p.Actions) > 0 {
				out = append(out, p)
			}
		}
		rec.Privileges = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// runRolesInfo describes roles: built-in and user-defined, with their
// inherited roles and, on request, privileges.
// https://www.mongodb.com/docs/manual/reference/command/rolesInfo/
func runRolesInfo(ctx context.Context, r *Request) (bson.D, error) {
	names, all, err := parseRolesArg(r.Body.Index(0).Value(), r.DB)
	if err != nil {
		return nil, err
	}
	var showPrivs, showBuiltin, showRestr bool
	err = fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "showPrivileges":
			if s, ok := v.StringValueOK(); ok && s == "asUserFragment" {
				return mongoerr.New(mongoerr.NotImplemented, "rolesInfo's showPrivileges: \"asUserFragment\" is not supported by this server yet")
			}
			showPrivs, err = wantBool(r.Name, k, v)
		case "showBuiltinRoles":
			showBuiltin, err = wantBool(r.Name, k, v)
		case "showAuthenticationRestrictions":
			showRestr, err = wantBool(r.Name, k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	if all {
		var custom []roleName
		for n := range data.roles {
			if n.DB == r.DB {
				custom = append(custom, n)
			}
		}
		sort.Slice(custom, func(i, j int) bool { return custom[i].Role < custom[j].Role })
		if showBuiltin {
			for _, b := range auth.BuiltinNames(r.DB) {
				names = append(names, roleName{b, r.DB})
			}
		}
		names = append(names, custom...)
	}
	out := bson.A{}
	for _, n := range names {
		builtin := auth.IsBuiltin(n.Role, n.DB)
		rec := data.roles[n]
		if !builtin && rec == nil {
			continue
		}
		d := bson.D{}
		var direct []roleName
		var own []auth.Privilege
		if builtin {
			own, _ = auth.Builtin(n.Role, n.DB)
		} else {
			d = append(d, bson.E{Key: "_id", Value: n.DB + "." + n.Role})
			direct, own = rec.Roles, rec.Privileges
		}
		d = append(d, bson.E{Key: "role", Value: n.Role}, bson.E{Key: "db", Value: n.DB})
		if showPrivs {
			_, inherited := data.resolve(direct)
			d = append(d, bson.E{Key: "privileges", Value: privilegeArray(auth.Merged(own))},
				bson.E{Key: "inheritedPrivileges", Value: privilegeArray(auth.Merged(append(slices.Clone(own), inherited...)))})
		}
		if showRestr && rec != nil && rec.Restrict != nil {
			d = append(d, bson.E{Key: "authenticationRestrictions", Value: arrayValue(rec.Restrict)})
		}
		inheritedRoles, _ := data.resolve(direct)
		d = append(d,
			bson.E{Key: "isBuiltin", Value: builtin},
			bson.E{Key: "roles", Value: roleArray(direct)},
			bson.E{Key: "inheritedRoles", Value: roleArray(inheritedRoles)})
		out = append(out, d)
	}
	return bson.D{{Key: "roles", Value: out}}, nil
}
