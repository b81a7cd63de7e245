package command

import (
	"sort"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// The collections that hold users and roles, as in mongod. Ordinary
// writes cannot reach them (checkWritable rejects system.* namespaces);
// only the user and role management commands change them.
const (
	usersNS = "admin.system.users"
	rolesNS = "admin.system.roles"
)

// roleName names a role: role@db.
type roleName struct{ Role, DB string }

func (n roleName) String() string { return n.Role + "@" + n.DB }

func (n roleName) doc() bson.D { return bson.D{{Key: "role", Value: n.Role}, {Key: "db", Value: n.DB}} }

// userRecord is one parsed admin.system.users document.
type userRecord struct {
	Name, DB string
	ID       bson.Binary
	Creds    map[string]auth.Credential
	Roles    []roleName
	Custom   bson.Raw // customData, or nil
	Restrict bson.Raw // authenticationRestrictions, or nil
}

// mechanisms returns the user's SCRAM mechanisms in mongod's order.
func (u *userRecord) mechanisms() []string {
	var out []string
	for _, m := range auth.Mechanisms {
		if _, ok := u.Creds[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// roleRecord is one parsed admin.system.roles document.
type roleRecord struct {
	Name       roleName
	Privileges []auth.Privilege
	Roles      []roleName
	Restrict   bson.Raw
}

// authData is one consistent copy of the users and roles. It is never
// changed after it is built.
type authData struct {
	gen       uint64
	usersColl *storage.Collection
	rolesColl *storage.Collection
	users     map[string]*userRecord // key: db + "\x00" + name
	roles     map[roleName]*roleRecord
}

func userKey(name, db string) string { return db + "\x00" + name }

// userStore caches the users and roles of admin.system.users and
// admin.system.roles. It is safe for concurrent use.
type userStore struct {
	st   *storage.Store
	gen  atomic.Uint64 // bumped by every write through the store
	mu   sync.Mutex    // serialises reloads
	data atomic.Pointer[authData]
}

func newUserStore(st *storage.Store) *userStore { return &userStore{st: st} }

// current returns the users and roles as they are now, reloading them
// after a write or when the collections were dropped or recreated.
func (s *userStore) current() (*authData, error) {
	d := s.data.Load()
	uc, rc := s.st.Collection(usersNS), s.st.Collection(rolesNS)
	if d != nil && d.gen == s.gen.Load() && d.usersColl == uc && d.rolesColl == rc {
		return d, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	gen := s.gen.Load()
	uc, rc = s.st.Collection(usersNS), s.st.Collection(rolesNS)
	d = &authData{gen: gen, usersColl: uc, rolesColl: rc, users: map[string]*userRecord{}, roles: map[roleName]*roleRecord{}}
	snap := s.st.Snapshot()
	defer snap.Close()
	err := scanAll(snap, uc, func(doc bson.Raw) {
		if u, ok := parseUserRecord(doc); ok {
			d.users[userKey(u.Name, u.DB)] = u
		}
	})
	if err == nil {
		err = scanAll(snap, rc, func(doc bson.Raw) {
			if r, ok := parseRoleRecord(doc); ok {
				d.roles[r.Name] = r
			}
		})
	}
	if err != nil {
		return nil, err
	}
	s.data.Store(d)
	return d, nil
}

// scanAll calls fn with each document of c; a nil c has none.
func scanAll(rd storage.Reader, c *storage.Collection, fn func(bson.Raw)) error {
	if c == nil {
		return nil
	}
	it, err := rd.Scan(c, false)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		doc, err := it.Doc()
		if err != nil {
			return err
		}
		fn(doc)
	}
	return it.Err()
}

// empty reports whether no user and no role exists: the condition of the
// localhost exception.
func (d *authData) empty() bool { return len(d.users) == 0 && len(d.roles) == 0 }

// user returns name@db, or nil.
func (d *authData) user(name, db string) *userRecord { return d.users[userKey(name, db)] }

// usersOf returns the users of db (every database when db is ""), sorted
// by db then name.
func (d *authData) usersOf(db string) []*userRecord {
	var out []*userRecord
	for _, u := range d.users {
		if db == "" || u.DB == db {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DB != out[j].DB {
			return out[i].DB < out[j].DB
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// roleExists reports whether n is a built-in or custom role.
func (d *authData) roleExists(n roleName) bool {
	return auth.IsBuiltin(n.Role, n.DB) || d.roles[n] != nil
}

// maxRoleGraph bounds how many roles one resolution visits (I2 of auth).
const maxRoleGraph = 10000

// resolve walks the role graph from roots breadth first and returns every
// role reached (roots included, in visit order) and their privileges.
// Unknown roles are skipped, as mongod skips roles dropped after a grant.
func (d *authData) resolve(roots []roleName) ([]roleName, []auth.Privilege) {
	seen := map[roleName]bool{}
	queue := append([]roleName(nil), roots...)
	var (
		order []roleName
		privs []auth.Privilege
	)
	for len(queue) > 0 && len(seen) < maxRoleGraph {
		n := queue[0]
		queue = queue[1:]
		if seen[n] {
			continue
		}
		seen[n] = true
		if ps, ok := auth.Builtin(n.Role, n.DB); ok {
			order = append(order, n)
			privs = append(privs, ps...)
			continue
		}
		r := d.roles[n]
		if r == nil {
			continue
		}
		order = append(order, n)
		privs = append(privs, r.Privileges...)
		queue = append(queue, r.Roles...)
	}
	return order, privs
}

// write runs fn in one storage write over the two collections (created
// when missing) and makes the result visible to current.
func (s *userStore) write(fn func(w *storage.Writer, users, roles *storage.Collection) error) error {
	err := s.st.Write(func(w *storage.Writer) error {
		uc, err := w.EnsureCollection(usersNS)
		if err != nil {
			return err
		}
		rc, err := w.EnsureCollection(rolesNS)
		if err != nil {
			return err
		}
		return fn(w, uc, rc)
	})
	s.gen.Add(1)
	return err
}

// findRecordByID returns the record id and document whose _id is id in c.
func findRecordByID(w *storage.Writer, c *storage.Collection, id string) (int64, bson.Raw, error) {
	it, err := w.Reader().Scan(c, false)
	if err != nil {
		return 0, nil, err
	}
	defer it.Close()
	for it.Next() {
		doc, err := it.Doc()
		if err != nil {
			return 0, nil, err
		}
		if s, ok := doc.Lookup("_id").StringValueOK(); ok && s == id {
			return it.RecordID(), doc, nil
		}
	}
	return 0, nil, it.Err()
}

// parseUserRecord reads a stored user; ok is false for a malformed one,
// which is ignored as mongod ignores users it cannot parse.
func parseUserRecord(doc bson.Raw) (*userRecord, bool) {
	u := &userRecord{Creds: map[string]auth.Credential{}}
	var ok bool
	if u.Name, ok = doc.Lookup("user").StringValueOK(); !ok {
		return nil, false
	}
	if u.DB, ok = doc.Lookup("db").StringValueOK(); !ok {
		return nil, false
	}
	if v, err := doc.LookupErr("userId"); err == nil && v.Type == bson.TypeBinary {
		st, data := v.Binary()
		u.ID = bson.Binary{Subtype: st, Data: data}
	}
	if creds, ok := doc.Lookup("credentials").DocumentOK(); ok {
		for _, m := range auth.Mechanisms {
			if cd, ok := creds.Lookup(m).DocumentOK(); ok {
				if c, ok := auth.ParseCredential(cd); ok {
					u.Creds[m] = c
				}
			}
		}
	}
	u.Roles = parseStoredRoles(doc.Lookup("roles"))
	if c, ok := doc.Lookup("customData").DocumentOK(); ok {
		u.Custom = c
	}
	if r, ok := doc.Lookup("authenticationRestrictions").ArrayOK(); ok {
		u.Restrict = bson.Raw(r)
	}
	return u, true
}

func parseStoredRoles(v bson.RawValue) []roleName {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil
	}
	vals, _ := arr.Values()
	out := make([]roleName, 0, len(vals))
	for _, rv := range vals {
		d, ok := rv.DocumentOK()
		if !ok {
			continue
		}
		r, ok1 := d.Lookup("role").StringValueOK()
		db, ok2 := d.Lookup("db").StringValueOK()
		if ok1 && ok2 {
			out = append(out, roleName{r, db})
		}
	}
	return out
}

func parseRoleRecord(doc bson.Raw) (*roleRecord, bool) {
	name, ok1 := doc.Lookup("role").StringValueOK()
	db, ok2 := doc.Lookup("db").StringValueOK()
	if !ok1 || !ok2 {
		return nil, false
	}
	r := &roleRecord{Name: roleName{name, db}, Roles: parseStoredRoles(doc.Lookup("roles"))}
	if v, err := doc.LookupErr("privileges"); err == nil {
		ps, err := auth.ParsePrivileges(v)
		if err != nil {
			return nil, false
		}
		r.Privileges = ps
	}
	if a, ok := doc.Lookup("authenticationRestrictions").ArrayOK(); ok {
		r.Restrict = bson.Raw(a)
	}
	return r, true
}

// userDoc builds the stored document of u.
func userDoc(u *userRecord) bson.D {
	d := bson.D{
		{Key: "_id", Value: u.DB + "." + u.Name},
		{Key: "userId", Value: u.ID},
		{Key: "user", Value: u.Name},
		{Key: "db", Value: u.DB},
	}
	creds := bson.D{}
	for _, m := range u.mechanisms() {
		creds = append(creds, bson.E{Key: m, Value: u.Creds[m].Doc()})
	}
	d = append(d, bson.E{Key: "credentials", Value: creds}, bson.E{Key: "roles", Value: roleArray(u.Roles)})
	if u.Custom != nil {
		d = append(d, bson.E{Key: "customData", Value: u.Custom})
	}
	if u.Restrict != nil {
		d = append(d, bson.E{Key: "authenticationRestrictions", Value: arrayValue(u.Restrict)})
	}
	return d
}

// roleDoc builds the stored document of r.
func roleDoc(r *roleRecord) bson.D {
	privs := bson.A{}
	for _, p := range r.Privileges {
		privs = append(privs, p.Doc())
	}
	d := bson.D{
		{Key: "_id", Value: r.Name.DB + "." + r.Name.Role},
		{Key: "role", Value: r.Name.Role},
		{Key: "db", Value: r.Name.DB},
		{Key: "privileges", Value: privs},
		{Key: "roles", Value: roleArray(r.Roles)},
	}
	if r.Restrict != nil {
		d = append(d, bson.E{Key: "authenticationRestrictions", Value: arrayValue(r.Restrict)})
	}
	return d
}

func roleArray(rs []roleName) bson.A {
	a := bson.A{}
	for _, r := range rs {
		a = append(a, r.doc())
	}
	return a
}

// putRecord inserts doc into c, or replaces the document with the same
// _id.
func putRecord(w *storage.Writer, c *storage.Collection, d bson.D) error {
	raw, err := bson.Marshal(d)
	if err != nil {
		return mongoerr.Newf(mongoerr.InternalError, "encode %s: %v", c.NS, err)
	}
	rid, old, err := findRecordByID(w, c, d[0].Value.(string))
	if err != nil {
		return err
	}
	if old != nil {
		return w.Update(c, rid, old, raw)
	}
	_, err = w.Insert(c, raw)
	return err
}

// deleteRecord removes the document with _id id from c; it reports
// whether there was one.
func deleteRecord(w *storage.Writer, c *storage.Collection, id string) (bool, error) {
	rid, old, err := findRecordByID(w, c, id)
	if err != nil || old == nil {
		return false, err
	}
	return true, w.Delete(c, rid, old)
}

// arrayValue wraps an array's bytes so that it marshals as a BSON array
// (bson.RawArray alone would marshal as binary data).
func arrayValue(b bson.Raw) bson.RawValue {
	return bson.RawValue{Type: bson.TypeArray, Value: b}
}
