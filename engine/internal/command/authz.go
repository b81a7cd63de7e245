package command

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// maxAuthzMessage bounds the command text quoted in an Unauthorized
// message; mongod quotes it whole.
const maxAuthzMessage = 16 << 10

// authorize checks that r's connection may run r when access control is
// on (Config.Auth). It returns Unauthorized with mongod's messages:
// "Command <name> requires authentication" before authentication, "not
// authorized on <db> to execute command { ... }" after it.
// https://www.mongodb.com/docs/manual/core/authorization/
func (e *Env) authorize(r *Request) error {
	hidePassword(r)
	if !e.Config.Auth {
		return nil
	}
	rule, listed := authRules[r.Name]
	if listed && rule.public {
		return nil
	}
	_, privs, ok, err := e.privileges(r.Conn)
	if err != nil {
		return err
	}
	if !ok {
		if !e.localhostBypass(r) {
			return mongoerr.Newf(mongoerr.Unauthorized, "Command %s requires authentication", r.Name)
		}
		// The localhost exception: the privileges needed to create the
		// first user on admin, and nothing else.
		privs = localhostPrivileges
	}
	var alts [][]auth.Need
	switch {
	case !listed:
		alts = one(unlistedNeed)
	case rule.needs != nil:
		alts = rule.needs(r)
	}
	if len(alts) > 0 && !anyAllowed(privs, alts) && !e.selfService(r) {
		return e.notAuthorized(r)
	}
	switch r.Name {
	case "getMore":
		return e.authorizeGetMore(r)
	case "killCursors":
		if err := e.authorizeKillCursors(r, privs); err != nil {
			return err
		}
	}
	return nil
}

func anyAllowed(privs auth.Set, alts [][]auth.Need) bool {
	for _, alt := range alts {
		if privs.AllowsAll(alt) {
			return true
		}
	}
	return false
}

// notAuthorized is mongod's error for an authenticated user lacking a
// privilege, quoting the command with passwords elided.
//
// Divergence: the quoted command includes the documents a driver sent as
// OP_MSG document sequences (mongod quotes only the body section), and a
// quote longer than 16 KiB is cut with "...". Tested by
// TestAuthRoleEnforcement (the message prefix).
func (e *Env) notAuthorized(r *Request) error {
	body := r.Body
	if _, err := body.LookupErr("pwd"); err == nil {
		body = redactPwd(body)
	}
	text := formatDoc(body)
	if len(text) > maxAuthzMessage {
		text = text[:maxAuthzMessage] + "..."
	}
	return mongoerr.Newf(mongoerr.Unauthorized, "not authorized on %s to execute command %s", r.DB, text)
}

// redactPwd replaces a pwd field with "xxx", as mongod's snipForLogging.
func redactPwd(body bson.Raw) bson.Raw {
	elems, err := body.Elements()
	if err != nil {
		return body
	}
	d := make(bson.D, 0, len(elems))
	for _, el := range elems {
		if el.Key() == "pwd" {
			d = append(d, bson.E{Key: "pwd", Value: "xxx"})
			continue
		}
		d = append(d, bson.E{Key: el.Key(), Value: el.Value()})
	}
	out, err := bson.Marshal(d)
	if err != nil {
		return body
	}
	return out
}

// hidePassword moves createUser's and updateUser's pwd out of the
// command body into r.password, leaving "xxx" as mongod's logs, profiler
// and currentOp show it.
func hidePassword(r *Request) {
	if r.Name != "createUser" && r.Name != "updateUser" {
		return
	}
	v, err := r.Body.LookupErr("pwd")
	if err != nil {
		return
	}
	if s, ok := v.StringValueOK(); ok {
		r.password = &s
		r.Body = redactPwd(r.Body)
	}
}

// localhostPrivileges are what mongod grants a local client while no user
// exists: creating users on admin (and $external) with roles of admin, and
// two replica set administration actions.
var localhostPrivileges = auth.Set{
	{Resource: auth.DBResource("admin"), Actions: []auth.Action{auth.ActCreateUser, auth.ActGrantRole}},
	{Resource: auth.DBResource("$external"), Actions: []auth.Action{auth.ActCreateUser}},
	{Resource: auth.ClusterResource, Actions: []auth.Action{auth.ActReplSetConfigure, auth.ActReplSetGetStatus}},
}

// localhostBypass reports whether the localhost exception applies to r's
// connection: no user or role exists yet and the client is local.
// https://www.mongodb.com/docs/manual/core/localhost-exception/
func (e *Env) localhostBypass(r *Request) bool {
	if !isLoopback(r.Conn.Remote) {
		return false
	}
	d, err := e.users.current()
	return err == nil && d.empty()
}

// selfService reports whether r is one a user may always run about
// itself: usersInfo of its own user, rolesInfo of roles it holds,
// updateUser changing only its own password or customData when it holds
// changeOwnPassword/changeOwnCustomData.
func (e *Env) selfService(r *Request) bool {
	u := r.Conn.authUser()
	if u == nil {
		return false
	}
	switch r.Name {
	case "usersInfo":
		names, _, err := parseUsersArg(r.Body.Index(0).Value(), r.DB)
		if err != nil || len(names) != 1 {
			return false
		}
		return names[0] == *u
	case "rolesInfo":
		roles, _, err := parseRolesArg(r.Body.Index(0).Value(), r.DB)
		if err != nil || len(roles) == 0 {
			return false
		}
		d, err := e.users.current()
		if err != nil {
			return false
		}
		rec := d.user(u.Name, u.DB)
		if rec == nil {
			return false
		}
		held, _ := d.resolve(rec.Roles)
		for _, want := range roles {
			found := false
			for _, h := range held {
				if h == want {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return false
}

// authorizeGetMore lets only the user who opened a cursor continue it.
func (e *Env) authorizeGetMore(r *Request) error {
	id, ok := r.Body.Index(0).Value().Int64OK()
	if !ok {
		return nil // the handler reports the type error
	}
	owner, ok := e.Cursors.ownerOf(id)
	if ok && owner != "" && owner != authName(r.Conn) {
		return mongoerr.Newf(mongoerr.Unauthorized, "cursor id %d was not created by the authenticated user", id)
	}
	return nil
}

// authorizeKillCursors lets a user kill its own cursors, or any cursor of
// a namespace on which it holds killAnyCursor.
func (e *Env) authorizeKillCursors(r *Request, privs auth.Set) error {
	arr, ok := r.Body.Lookup("cursors").ArrayOK()
	if !ok {
		return nil
	}
	vals, _ := arr.Values()
	me := authName(r.Conn)
	res := targetNS(r)
	for _, v := range vals {
		id, ok := v.Int64OK()
		if !ok {
			continue
		}
		owner, ok := e.Cursors.ownerOf(id)
		if !ok || owner == me {
			continue
		}
		if owner == "" && privs.Allows(need(res, auth.ActKillCursors)) {
			continue
		}
		if privs.Allows(need(auth.ClusterResource, auth.ActKillAnyCursor)) || privs.Allows(need(res, auth.ActKillAnyCursor)) {
			continue
		}
		return e.notAuthorized(r)
	}
	return nil
}

// authName is the connection's user as "name@db", or "" without one.
func authName(c *Conn) string {
	if u := c.authUser(); u != nil {
		return u.String()
	}
	return ""
}

// afterAuthorized adjusts a successful reply under access control: the
// cursor it opened belongs to the user (claimCursor), and listDatabases
// lists only the databases the user holds privileges on when it may not
// list them all.
func (e *Env) afterAuthorized(r *Request, reply bson.D) {
	if !e.Config.Auth {
		return
	}
	if r.Name == "listDatabases" {
		e.filterDatabases(r, reply)
		return
	}
	e.claimCursor(r, reply)
}

// filterDatabases keeps the listDatabases entries of databases on which
// the user holds some privilege, as mongod's authorizedDatabases.
func (e *Env) filterDatabases(r *Request, reply bson.D) {
	_, privs, ok, err := e.privileges(r.Conn)
	if err != nil || ok && privs.Allows(need(auth.ClusterResource, auth.ActListDatabases)) {
		return
	}
	keep := func(doc bson.Raw) bool {
		name, _ := doc.Lookup("name").StringValueOK()
		for _, p := range privs {
			if p.Resource.Any || !p.Resource.Cluster && (p.Resource.DB == name || p.Resource.DB == "") {
				return true
			}
		}
		return false
	}
	for i, el := range reply {
		if el.Key != "databases" {
			continue
		}
		switch dbs := el.Value.(type) {
		case []bson.Raw:
			reply[i].Value = slices.DeleteFunc(dbs, func(d bson.Raw) bool { return !keep(d) })
		case bson.A:
			out := bson.A{}
			for _, v := range dbs {
				if d, ok := v.(bson.Raw); ok && keep(d) {
					out = append(out, d)
				}
			}
			reply[i].Value = out
		}
	}
}

// claimCursor records the authenticated user as the owner of the cursor a
// command's reply opened, so that only that user may continue or kill it.
func (e *Env) claimCursor(r *Request, reply bson.D) {
	u := r.Conn.authUser()
	if u == nil {
		return
	}
	for _, el := range reply {
		if el.Key != "cursor" {
			continue
		}
		cur, ok := el.Value.(bson.D)
		if !ok {
			return
		}
		for _, f := range cur {
			if f.Key == "id" {
				if id, ok := f.Value.(int64); ok && id != 0 {
					e.Cursors.setOwner(id, u.String())
				}
			}
		}
	}
}

// setOwner records the user ("name@db") that opened cursor id.
func (cs *Cursors) setOwner(id int64, owner string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.m[id]; c != nil {
		c.owner = owner
	}
}

// ownerOf returns the owner of cursor id ("" when opened without
// authentication), and false when there is no such cursor.
func (cs *Cursors) ownerOf(id int64) (string, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[id]
	if c == nil {
		return "", false
	}
	return c.owner, true
}
