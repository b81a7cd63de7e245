package command

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("createUser", &spec{run: runCreateUser, help: "create a user"})
	register("updateUser", &spec{run: runUpdateUser, help: "change a user's password, roles or custom data"})
	register("dropUser", &spec{run: runDropUser, help: "remove a user"})
	register("dropAllUsersFromDatabase", &spec{run: runDropAllUsers, help: "remove every user of a database"})
	register("usersInfo", &spec{run: runUsersInfo, help: "describe users"})
}

// userArgs are the fields createUser and updateUser share.
type userArgs struct {
	name       string
	pwd        *string
	custom     bson.Raw
	roles      []roleName
	haveRoles  bool
	digest     bool
	mechs      []string
	restrict   bson.Raw
	haveRestrs bool
}

func parseUserArgs(r *Request) (userArgs, error) {
	a := userArgs{digest: true}
	v := r.Body.Index(0).Value()
	s, ok := v.StringValueOK()
	if !ok {
		return a, mongoerr.FieldType(r.Name, r.Name, typeName(v.Type), "string")
	}
	if s == "" {
		return a, mongoerr.New(mongoerr.BadValue, "User name must not be empty")
	}
	a.name = s
	err := fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "pwd":
			if r.password != nil { // hidePassword kept the real one
				a.pwd = r.password
				return nil
			}
			var p string
			p, err = wantString(r.Name, k, v)
			a.pwd = &p
		case "customData":
			a.custom, err = wantDoc(r.Name, k, v)
		case "roles":
			a.roles, err = parseRoleList(r.Name, v, r.DB)
			a.haveRoles = true
		case "digestPassword":
			a.digest, err = wantBool(r.Name, k, v)
		case "mechanisms":
			arr, ok := v.ArrayOK()
			if !ok {
				return mongoerr.FieldType(r.Name, k, typeName(v.Type), "array")
			}
			vals, _ := arr.Values()
			if len(vals) == 0 {
				return mongoerr.New(mongoerr.BadValue, "mechanisms field must not be empty")
			}
			a.mechs = []string{}
			for _, mv := range vals {
				m, ok := mv.StringValueOK()
				if !ok {
					return mongoerr.FieldType(r.Name, k, typeName(mv.Type), "string")
				}
				if !slices.Contains(auth.Mechanisms, m) {
					return mongoerr.Newf(mongoerr.BadValue, "Unknown auth mechanism '%s'", m)
				}
				if !slices.Contains(a.mechs, m) {
					a.mechs = append(a.mechs, m)
				}
			}
		case "authenticationRestrictions":
			arr, ok := v.ArrayOK()
			if !ok {
				return mongoerr.FieldType(r.Name, k, typeName(v.Type), "array")
			}
			a.restrict, a.haveRestrs = bson.Raw(arr), true
			return parseRestrictions(a.restrict)
		case "passwordDigestor":
			s, err := wantString(r.Name, k, v)
			if err == nil && s != "server" && s != "client" {
				return mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field '%s.passwordDigestor' is not a valid value.", s, r.Name)
			}
			return err
		default:
			return errUnknown
		}
		return err
	})
	return a, err
}

// credentialsFor derives the credentials of a new password.
func (a userArgs) credentialsFor(db string) (map[string]auth.Credential, error) {
	if db == "$external" {
		return nil, mongoerr.New(mongoerr.BadValue, "Cannot set the password for users defined on the '$external' database")
	}
	mechs := a.mechs
	if mechs == nil {
		mechs = auth.Mechanisms
	}
	return auth.NewCredentials(a.name, *a.pwd, mechs, a.digest)
}

func createUserNeeds(r *Request) [][]auth.Need {
	needs := []auth.Need{need(auth.DBResource(r.DB), auth.ActCreateUser)}
	if v, err := r.Body.LookupErr("roles"); err == nil {
		if roles, err := parseRoleList(r.Name, v, r.DB); err == nil {
			needs = append(needs, rolesNeeds(r.DB, roles, auth.ActGrantRole)...)
		}
	}
	return one(needs...)
}

func updateUserNeeds(r *Request) [][]auth.Need {
	res := auth.DBResource(r.DB)
	needs := []auth.Need{}
	if _, err := r.Body.LookupErr("pwd"); err == nil {
		needs = append(needs, need(res, auth.ActChangePassword))
	}
	if _, err := r.Body.LookupErr("customData"); err == nil {
		needs = append(needs, need(res, auth.ActChangeCustomData))
	}
	if _, err := r.Body.LookupErr("authenticationRestrictions"); err == nil {
		needs = append(needs, need(res, auth.ActSetAuthRestriction))
	}
	if v, err := r.Body.LookupErr("roles"); err == nil {
		needs = append(needs, need(res, auth.ActRevokeRole))
		if roles, err := parseRoleList(r.Name, v, r.DB); err == nil {
			needs = append(needs, rolesNeeds(r.DB, roles, auth.ActGrantRole)...)
		}
	}
	if len(needs) == 0 {
		needs = append(needs, need(res, auth.ActChangePassword))
	}
	return one(needs...)
}

func usersInfoNeeds(r *Request) [][]auth.Need {
	names, all, err := parseUsersArg(r.Body.Index(0).Value(), r.DB)
	if err != nil {
		return nil
	}
	if all {
		if r.Body.Index(0).Value().Type == bson.TypeEmbeddedDocument { // forAllDBs
			return one(need(auth.ClusterResource, auth.ActViewUser))
		}
		return one(need(auth.DBResource(r.DB), auth.ActViewUser))
	}
	var needs []auth.Need
	for _, n := range names {
		needs = append(needs, need(auth.DBResource(n.DB), auth.ActViewUser))
	}
	return one(needs...)
}

// runCreateUser creates a user with SCRAM credentials derived from pwd;
// the password itself is never stored.
// https://www.mongodb.com/docs/manual/reference/command/createUser/
func runCreateUser(ctx context.Context, r *Request) (bson.D, error) {
	a, err := parseUserArgs(r)
	if err != nil {
		return nil, err
	}
	if !a.haveRoles {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'createUser.roles' is missing but a required field")
	}
	if err := checkAuthDB(r.DB, "users"); err != nil {
		return nil, err
	}
	if a.pwd == nil && r.DB != "$external" {
		return nil, mongoerr.New(mongoerr.BadValue, "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db")
	}
	u := &userRecord{Name: a.name, DB: r.DB, Roles: a.roles, Custom: a.custom, Creds: map[string]auth.Credential{}}
	if a.haveRestrs {
		u.Restrict = a.restrict
	}
	if a.pwd != nil {
		if u.Creds, err = a.credentialsFor(r.DB); err != nil {
			return nil, err
		}
	}
	u.ID = bson.Binary{Subtype: bson.TypeBinaryUUID, Data: newSessionUUID()}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	if err := checkRolesExist(data, u.Roles); err != nil {
		return nil, err
	}
	err = r.Env.users.write(func(w *storage.Writer, users, _ *storage.Collection) error {
		if _, old, err := findRecordByID(w, users, u.DB+"."+u.Name); err != nil {
			return err
		} else if old != nil {
			return mongoerr.Newf(mongoerr.Code(51003), "User \"%s@%s\" already exists", u.Name, u.DB)
		}
		return putRecord(w, users, userDoc(u))
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// runUpdateUser replaces a user's password (new credentials), roles,
// customData or authentication restrictions.
// https://www.mongodb.com/docs/manual/reference/command/updateUser/
func runUpdateUser(ctx context.Context, r *Request) (bson.D, error) {
	a, err := parseUserArgs(r)
	if err != nil {
		return nil, err
	}
	if a.pwd == nil && a.custom == nil && !a.haveRoles && !a.haveRestrs && a.mechs == nil {
		return nil, mongoerr.New(mongoerr.BadValue, "Must specify at least one field to update in updateUser")
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	if a.haveRoles {
		if err := checkRolesExist(data, a.roles); err != nil {
			return nil, err
		}
	}
	var creds map[string]auth.Credential
	if a.pwd != nil {
		if creds, err = a.credentialsFor(r.DB); err != nil {
			return nil, err
		}
	}
	name := userName{a.name, r.DB}
	err = r.Env.users.write(func(w *storage.Writer, users, _ *storage.Collection) error {
		_, old, err := findRecordByID(w, users, name.DB+"."+name.Name)
		if err != nil {
			return err
		}
		u, ok := parseUserRecord(old)
		if old == nil || !ok {
			return userNotFound(name)
		}
		switch {
		case creds != nil:
			u.Creds = creds
		case a.mechs != nil:
			for m := range u.Creds {
				if !slices.Contains(a.mechs, m) {
					delete(u.Creds, m)
				}
			}
			for _, m := range a.mechs {
				if _, ok := u.Creds[m]; !ok {
					return mongoerr.New(mongoerr.BadValue, "mechanisms field must be a subset of previously set mechanisms")
				}
			}
		}
		if a.custom != nil {
			u.Custom = a.custom
		}
		if a.haveRoles {
			u.Roles = a.roles
		}
		if a.haveRestrs {
			u.Restrict = a.restrict
		}
		return putRecord(w, users, userDoc(u))
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// runDropUser removes a user; connections authenticated as it lose their
// privileges.
// https://www.mongodb.com/docs/manual/reference/command/dropUser/
func runDropUser(ctx context.Context, r *Request) (bson.D, error) {
	v := r.Body.Index(0).Value()
	s, ok := v.StringValueOK()
	if !ok {
		return nil, mongoerr.FieldType(r.Name, r.Name, typeName(v.Type), "string")
	}
	if err := noFields(r); err != nil {
		return nil, err
	}
	name := userName{s, r.DB}
	err := r.Env.users.write(func(w *storage.Writer, users, _ *storage.Collection) error {
		found, err := deleteRecord(w, users, name.DB+"."+name.Name)
		if err == nil && !found {
			return mongoerr.Newf(mongoerr.UserNotFound, "User '%s' not found", name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return bson.D{}, nil
}

// runDropAllUsers removes every user of the database and answers how
// many.
// https://www.mongodb.com/docs/manual/reference/command/dropAllUsersFromDatabase/
func runDropAllUsers(ctx context.Context, r *Request) (bson.D, error) {
	if err := noFields(r); err != nil {
		return nil, err
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	n := 0
	err = r.Env.users.write(func(w *storage.Writer, users, _ *storage.Collection) error {
		for _, u := range data.usersOf(r.DB) {
			found, err := deleteRecord(w, users, u.DB+"."+u.Name)
			if err != nil {
				return err
			}
			if found {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bson.D{{Key: "n", Value: int32(n)}}, nil
}

// runUsersInfo describes users: their roles and mechanisms, and on
// request their credentials, custom data and inherited privileges.
// https://www.mongodb.com/docs/manual/reference/command/usersInfo/
func runUsersInfo(ctx context.Context, r *Request) (bson.D, error) {
	names, all, err := parseUsersArg(r.Body.Index(0).Value(), r.DB)
	if err != nil {
		return nil, err
	}
	var showCreds, showPrivs, showRestr bool
	showCustom := true
	var filter bson.Raw
	err = fields(r.Name, r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "showCredentials":
			showCreds, err = wantBool(r.Name, k, v)
		case "showCustomData":
			showCustom, err = wantBool(r.Name, k, v)
		case "showPrivileges":
			showPrivs, err = wantBool(r.Name, k, v)
		case "showAuthenticationRestrictions":
			showRestr, err = wantBool(r.Name, k, v)
		case "filter":
			filter, err = wantDoc(r.Name, k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var f *match.Filter
	if filter != nil {
		if f, err = match.Compile(filter); err != nil {
			return nil, err
		}
	}
	data, err := r.Env.users.current()
	if err != nil {
		return nil, err
	}
	var list []*userRecord
	if all {
		db := r.DB
		if r.Body.Index(0).Value().Type == bson.TypeEmbeddedDocument {
			db = "" // forAllDBs
		}
		list = data.usersOf(db)
	} else {
		for _, n := range names {
			if u := data.user(n.Name, n.DB); u != nil {
				list = append(list, u)
			}
		}
	}
	out := bson.A{}
	for _, u := range list {
		d := bson.D{
			{Key: "_id", Value: u.DB + "." + u.Name},
			{Key: "userId", Value: u.ID},
			{Key: "user", Value: u.Name},
			{Key: "db", Value: u.DB},
		}
		if showCreds {
			creds := bson.D{}
			for _, m := range u.mechanisms() {
				creds = append(creds, bson.E{Key: m, Value: u.Creds[m].Doc()})
			}
			d = append(d, bson.E{Key: "credentials", Value: creds})
		}
		if showCustom && u.Custom != nil {
			d = append(d, bson.E{Key: "customData", Value: u.Custom})
		}
		d = append(d, bson.E{Key: "roles", Value: roleArray(u.Roles)})
		if showRestr || showPrivs {
			var restr any = bson.A{}
			if u.Restrict != nil {
				restr = arrayValue(u.Restrict)
			}
			d = append(d, bson.E{Key: "authenticationRestrictions", Value: restr})
		}
		mechs := bson.A{}
		for _, m := range u.mechanisms() {
			mechs = append(mechs, m)
		}
		d = append(d, bson.E{Key: "mechanisms", Value: mechs})
		if showPrivs {
			roles, privs := data.resolve(u.Roles)
			d = append(d, bson.E{Key: "inheritedRoles", Value: roleArray(roles)},
				bson.E{Key: "inheritedPrivileges", Value: privilegeArray(auth.Merged(privs))},
				bson.E{Key: "inheritedAuthenticationRestrictions", Value: bson.A{}})
		}
		if f != nil {
			raw, err := bson.Marshal(d)
			if err != nil || !f.Match(raw) {
				continue
			}
		}
		out = append(out, d)
	}
	return bson.D{{Key: "users", Value: out}}, nil
}

func privilegeArray(ps []auth.Privilege) bson.A {
	a := bson.A{}
	for _, p := range ps {
		a = append(a, p.Doc())
	}
	return a
}
