package command

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
)

// authRule says what a command needs when access control is on.
type authRule struct {
	// public commands run without authentication: the handshake and
	// authentication itself (mongod's requiresAuth() == false).
	public bool
	// needs returns alternative sets of requirements: the command is
	// authorized when every need of one alternative is granted. Nil, or
	// an empty result, means any authenticated user may run it.
	needs func(r *Request) [][]auth.Need
}

// one returns a single alternative of needs.
func one(needs ...auth.Need) [][]auth.Need { return [][]auth.Need{needs} }

// need builds a requirement.
func need(res auth.Resource, acts ...auth.Action) auth.Need {
	return auth.Need{Resource: res, Actions: acts}
}

// onNS requires acts on the collection named by the command's first field
// (on the database when that is not a string, as for aggregate: 1).
func onNS(acts ...auth.Action) func(r *Request) [][]auth.Need {
	return func(r *Request) [][]auth.Need { return one(need(targetNS(r), acts...)) }
}

// onDB requires acts on the command's database.
func onDB(acts ...auth.Action) func(r *Request) [][]auth.Need {
	return func(r *Request) [][]auth.Need { return one(need(auth.DBResource(r.DB), acts...)) }
}

// onCluster requires acts on the cluster resource.
func onCluster(acts ...auth.Action) func(r *Request) [][]auth.Need {
	return func(r *Request) [][]auth.Need { return one(need(auth.ClusterResource, acts...)) }
}

// targetNS is the resource the command's first field names.
func targetNS(r *Request) auth.Resource {
	if s, ok := r.Body.Index(0).Value().StringValueOK(); ok && s != "" {
		return auth.NSResource(r.DB, s)
	}
	return auth.DBResource(r.DB)
}

// fullNSResource is the resource of a "db.coll" string.
func fullNSResource(ns string) auth.Resource {
	db, coll, _ := strings.Cut(ns, ".")
	if coll == "" {
		return auth.DBResource(db)
	}
	return auth.NSResource(db, coll)
}

// authRules maps every registered command to its rule; a test fails when
// a command has none (TestAuthRulesCoverEveryCommand). A command missing
// here needs an action only root holds (unlistedNeed).
var authRules map[string]authRule

func init() { authRules = authRuleTable() }

// authRuleTable builds authRules; a function, because explainNeeds reads
// the table it is part of.
func authRuleTable() map[string]authRule {
	return map[string]authRule{
		// The handshake and authentication.
		"hello":            {public: true},
		"isMaster":         {public: true},
		"buildInfo":        {public: true},
		"ping":             {public: true},
		"saslStart":        {public: true},
		"saslContinue":     {public: true},
		"authenticate":     {public: true},
		"logout":           {public: true},
		"connectionStatus": {public: true},

		// Any authenticated user.
		"whatsmyuri":         {},
		"listCommands":       {},
		"startSession":       {},
		"endSessions":        {},
		"refreshSessions":    {},
		"killSessions":       {},
		"commitTransaction":  {},
		"abortTransaction":   {},
		"getMore":            {}, // plus cursor ownership (authorizeCursor)
		"killCursors":        {needs: killCursorsNeeds},
		"configureFailPoint": {}, // a test command: enabled only on test servers
		"waitForFailPoint":   {},

		// Reads.
		"find":      {needs: onNS(auth.ActFind)},
		"count":     {needs: onNS(auth.ActFind)},
		"distinct":  {needs: onNS(auth.ActFind)},
		"aggregate": {needs: aggregateNeeds},
		"explain":   {needs: explainNeeds},
		"dataSize": {needs: func(r *Request) [][]auth.Need {
			ns, _ := r.Body.Index(0).Value().StringValueOK()
			return one(need(fullNSResource(ns), auth.ActFind))
		}},
		"listIndexes":     {needs: onNS(auth.ActListIndexes)},
		"listCollections": {needs: onDB(auth.ActListCollections)},
		"collStats":       {needs: onNS(auth.ActCollStats)},
		"dbStats":         {needs: onDB(auth.ActDBStats)},
		"dbHash":          {needs: onDB(auth.ActDBHash)},

		// Writes.
		"insert":        {needs: insertNeeds},
		"update":        {needs: updateNeeds},
		"delete":        {needs: onNS(auth.ActRemove)},
		"findAndModify": {needs: findAndModifyNeeds},

		// Collections, indexes, databases.
		"create": {needs: func(r *Request) [][]auth.Need {
			res := targetNS(r)
			if _, err := r.Body.LookupErr("viewOn"); err == nil {
				return one(need(res, auth.ActCreateCollection))
			}
			return [][]auth.Need{{need(res, auth.ActCreateCollection)}, {need(res, auth.ActInsert)}}
		}},
		"createIndexes":      {needs: onNS(auth.ActCreateIndex)},
		"dropIndexes":        {needs: onNS(auth.ActDropIndex)},
		"drop":               {needs: onNS(auth.ActDropCollection)},
		"dropDatabase":       {needs: onDB(auth.ActDropDatabase)},
		"collMod":            {needs: onNS(auth.ActCollMod)},
		"renameCollection":   {needs: renameNeeds},
		"validate":           {needs: onNS(auth.ActValidate)},
		"validateDBMetadata": {needs: onDB(auth.ActValidate)},
		"compact":            {needs: onNS(auth.ActCompact)},
		"planCacheClear":     {needs: onNS(auth.ActPlanCacheWrite)},
		"profile":            {needs: onDB(auth.ActEnableProfiler)},

		// Server administration.
		"listDatabases": {needs: func(r *Request) [][]auth.Need {
			// Without the privilege a user sees the databases it holds
			// privileges on (filterDatabases), unless it asks for
			// authorizedDatabases: false.
			if v, err := r.Body.LookupErr("authorizedDatabases"); err == nil {
				if b, _ := asBool(v); !b {
					return one(need(auth.ClusterResource, auth.ActListDatabases))
				}
			}
			return nil
		}},
		"serverStatus":       {needs: onCluster(auth.ActServerStatus)},
		"hostInfo":           {needs: onCluster(auth.ActHostInfo)},
		"getCmdLineOpts":     {needs: onCluster(auth.ActGetCmdLineOpts)},
		"getLog":             {needs: onCluster(auth.ActGetLog)},
		"getParameter":       {needs: onCluster(auth.ActGetParameter)},
		"setParameter":       {needs: onCluster(auth.ActSetParameter)},
		"currentOp":          {needs: onCluster(auth.ActInprog)},
		"killOp":             {needs: onCluster(auth.ActKillop)},
		"fsync":              {needs: onCluster(auth.ActFsync)},
		"fsyncUnlock":        {needs: onCluster(auth.ActUnlock)},
		"shutdown":           {needs: onCluster(auth.ActShutdown)},
		"top":                {needs: onCluster(auth.ActTop)},
		"replSetGetStatus":   {needs: onCluster(auth.ActReplSetGetStatus)},
		"replSetGetConfig":   {needs: onCluster(auth.ActReplSetGetConfig)},
		"replSetResizeOplog": {needs: onCluster(auth.ActReplSetResizeOplog)},
		"applyOps":           {needs: onCluster(auth.ActApplyOps)},
		"killAllSessions":    {needs: onCluster(auth.ActKillAnySession)},

		// Users and roles.
		"createUser":               {needs: createUserNeeds},
		"updateUser":               {needs: updateUserNeeds},
		"dropUser":                 {needs: onDB(auth.ActDropUser)},
		"dropAllUsersFromDatabase": {needs: onDB(auth.ActDropUser)},
		"usersInfo":                {needs: usersInfoNeeds},
		"createRole":               {needs: createRoleNeeds},
		"updateRole":               {needs: updateRoleNeeds},
		"dropRole":                 {needs: onDB(auth.ActDropRole)},
		"dropAllRolesFromDatabase": {needs: onDB(auth.ActDropRole)},
		"rolesInfo":                {needs: rolesInfoNeeds},
		"grantRolesToUser":         {needs: rolesFieldNeeds(auth.ActGrantRole)},
		"revokeRolesFromUser":      {needs: rolesFieldNeeds(auth.ActRevokeRole)},
		"grantRolesToRole":         {needs: rolesFieldNeeds(auth.ActGrantRole)},
		"revokeRolesFromRole":      {needs: rolesFieldNeeds(auth.ActRevokeRole)},
		"grantPrivilegesToRole":    {needs: onDB(auth.ActGrantRole)},
		"revokePrivilegesFromRole": {needs: onDB(auth.ActRevokeRole)},
	}
}

// unlistedNeed is what a command without a rule needs: an action only
// root (anyResource) grants, so that a new command is never open by
// accident.
var unlistedNeed = need(auth.Resource{Any: true}, auth.ActConfigureFailPoint)

func boolField(body bson.Raw, k string) bool {
	v, err := body.LookupErr(k)
	if err != nil {
		return false
	}
	b, _ := asBool(v)
	return b
}

func insertNeeds(r *Request) [][]auth.Need {
	acts := []auth.Action{auth.ActInsert}
	if boolField(r.Body, "bypassDocumentValidation") {
		acts = append(acts, auth.ActBypassDocumentValidation)
	}
	return one(need(targetNS(r), acts...))
}

func updateNeeds(r *Request) [][]auth.Need {
	acts := []auth.Action{auth.ActUpdate}
	if arr, ok := r.Body.Lookup("updates").ArrayOK(); ok {
		vals, _ := arr.Values()
		for _, v := range vals {
			if d, ok := v.DocumentOK(); ok && boolField(d, "upsert") {
				acts = append(acts, auth.ActInsert)
				break
			}
		}
	}
	if boolField(r.Body, "bypassDocumentValidation") {
		acts = append(acts, auth.ActBypassDocumentValidation)
	}
	return one(need(targetNS(r), acts...))
}

func findAndModifyNeeds(r *Request) [][]auth.Need {
	acts := []auth.Action{auth.ActFind}
	if boolField(r.Body, "remove") {
		acts = append(acts, auth.ActRemove)
	} else {
		acts = append(acts, auth.ActUpdate)
		if boolField(r.Body, "upsert") {
			acts = append(acts, auth.ActInsert)
		}
	}
	if boolField(r.Body, "bypassDocumentValidation") {
		acts = append(acts, auth.ActBypassDocumentValidation)
	}
	return one(need(targetNS(r), acts...))
}

func renameNeeds(r *Request) [][]auth.Need {
	from, _ := r.Body.Index(0).Value().StringValueOK()
	to, _ := r.Body.Lookup("to").StringValueOK()
	src, dst := fullNSResource(from), fullNSResource(to)
	if src.DB == dst.DB {
		n := one(need(src, auth.ActRenameCollectionSameDB), need(dst, auth.ActRenameCollectionSameDB))
		if boolField(r.Body, "dropTarget") {
			n[0] = append(n[0], need(dst, auth.ActDropCollection))
		}
		return n
	}
	n := one(need(src, auth.ActFind, auth.ActDropCollection), need(dst, auth.ActInsert, auth.ActCreateIndex))
	if boolField(r.Body, "dropTarget") {
		n[0] = append(n[0], need(dst, auth.ActDropCollection))
	}
	return n
}

func killCursorsNeeds(r *Request) [][]auth.Need { return nil } // checked per cursor: authorizeCursors

// explainNeeds requires what the explained command requires.
func explainNeeds(r *Request) [][]auth.Need {
	inner, ok := r.Body.Index(0).Value().DocumentOK()
	if !ok {
		return nil
	}
	first, err := inner.IndexErr(0)
	if err != nil {
		return nil
	}
	name := first.Key()
	if a, ok := aliases[name]; ok {
		name = a
	}
	rule, ok := authRules[name]
	if !ok || name == "explain" || rule.needs == nil {
		return one(unlistedNeed)
	}
	return rule.needs(&Request{Env: r.Env, Conn: r.Conn, DB: r.DB, Name: name, Body: inner})
}

// requiresAuth reports whether a command needs an authenticated user
// under access control, as listCommands reports it.
func requiresAuth(name string) bool {
	r, ok := authRules[name]
	return !ok || !r.public
}
