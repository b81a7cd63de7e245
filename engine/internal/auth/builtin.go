package auth

import "slices"

// Built-in role action lists, after MongoDB 7.0's built-in roles.
// https://www.mongodb.com/docs/manual/reference/built-in-roles/
var (
	readActions = []Action{ActChangeStream, ActCollStats, ActDBHash, ActDBStats, ActFind,
		ActKillCursors, ActListCollections, ActListIndexes, ActListSearchIndexes}
	readWriteActions = append(slices.Clone(readActions), ActConvertToCapped, ActCreateCollection,
		ActCreateIndex, ActCreateSearchIndexes, ActDropCollection, ActDropIndex, ActDropSearchIndex,
		ActInsert, ActRemove, ActRenameCollectionSameDB, ActUpdate, ActUpdateSearchIndex)
	dbAdminActions = []Action{ActAnalyzeShardKey, ActBypassDocumentValidation, ActCollMod, ActCollStats,
		ActCompact, ActConvertToCapped, ActCreateCollection, ActCreateIndex, ActDBStats,
		ActDropCollection, ActDropDatabase, ActDropIndex, ActEnableProfiler, ActListCollections,
		ActListIndexes, ActListSearchIndexes, ActPlanCacheIndexFilter, ActPlanCacheRead,
		ActPlanCacheWrite, ActReIndex, ActRenameCollectionSameDB, ActStorageDetails, ActValidate}
	dbAdminProfileActions = []Action{ActChangeStream, ActCollStats, ActConvertToCapped,
		ActCreateCollection, ActDBHash, ActDBStats, ActDropCollection, ActFind, ActKillCursors,
		ActListCollections, ActListIndexes, ActPlanCacheRead}
	userAdminActions = []Action{ActChangeCustomData, ActChangePassword, ActCreateRole, ActCreateUser,
		ActDropRole, ActDropUser, ActGrantRole, ActRevokeRole, ActSetAuthRestriction, ActViewRole,
		ActViewUser}
	clusterMonitorActions = []Action{ActConnPoolStats, ActGetCmdLineOpts, ActGetDefaultRWConcern,
		ActGetLog, ActGetParameter, ActGetShardMap, ActHostInfo, ActInprog, ActListDatabases,
		ActListSessions, ActListShards, ActNetstat, ActReplSetGetConfig, ActReplSetGetStatus,
		ActServerStatus, ActTop, ActUseUUID, ActCheckMetadataConsistency}
	hostManagerActions = []Action{ActApplicationMessage, ActConnPoolSync, ActCPUProfiler,
		ActDropConnections, ActFlushRouterConfig, ActFsync, ActInvalidateUserCache, ActKillAnyCursor,
		ActKillAnySession, ActKillop, ActLogRotate, ActResync, ActRotateCertificates, ActSetParameter,
		ActShutdown, ActTouch, ActUnlock}
	clusterManagerActions = []Action{ActAppendOplogNote, ActApplicationMessage, ActCleanupOrphaned,
		ActFlushRouterConfig, ActGetDefaultRWConcern, ActListSessions, ActListShards, ActRemoveShard,
		ActReplSetConfigure, ActReplSetGetConfig, ActReplSetGetStatus, ActReplSetResizeOplog, ActReplSetStateChange,
		ActResync, ActSetDefaultRWConcern, ActSetFeatureCompatibility, ActCheckMetadataConsistency,
		ActSetUserWriteBlockMode}
	backupClusterActions = []Action{ActAppendOplogNote, ActGetParameter, ActListDatabases,
		ActServerStatus, ActSetUserWriteBlockMode}
	backupAnyActions = []Action{ActCollStats, ActDBHash, ActDBStats, ActFind, ActListCollections,
		ActListIndexes, ActListSearchIndexes}
	restoreAnyActions = []Action{ActBypassDocumentValidation, ActChangeCustomData, ActChangePassword,
		ActCollMod, ActConvertToCapped, ActCreateCollection, ActCreateIndex, ActCreateRole,
		ActCreateUser, ActDropCollection, ActDropRole, ActDropUser, ActGrantRole, ActInsert,
		ActRevokeRole, ActViewRole, ActViewUser}
)

// adminOnly lists the built-in roles that exist only on the admin database.
var adminOnly = map[string]bool{
	"clusterAdmin": true, "clusterManager": true, "clusterMonitor": true, "hostManager": true,
	"backup": true, "restore": true, "root": true, "readAnyDatabase": true,
	"readWriteAnyDatabase": true, "userAdminAnyDatabase": true, "dbAdminAnyDatabase": true,
	"__system": true,
}

// everyDB lists the built-in roles that exist on every database.
var everyDB = map[string]bool{
	"read": true, "readWrite": true, "dbAdmin": true, "userAdmin": true, "dbOwner": true,
}

// IsBuiltin reports whether role@db is a built-in role.
func IsBuiltin(role, db string) bool {
	return everyDB[role] || db == "admin" && adminOnly[role]
}

// IsBuiltinName reports whether name is the name of a built-in role on
// some database: custom roles may not take it.
func IsBuiltinName(name string) bool { return everyDB[name] || adminOnly[name] }

// BuiltinNames returns the built-in roles of db, sorted.
func BuiltinNames(db string) []string {
	var out []string
	for n := range everyDB {
		out = append(out, n)
	}
	if db == "admin" {
		for n := range adminOnly {
			if n != "__system" {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Builtin returns the privileges of built-in role role@db, and false
// when there is no such built-in role.
func Builtin(role, db string) ([]Privilege, bool) {
	if !IsBuiltin(role, db) {
		return nil, false
	}
	anyNormal := Resource{}
	dbr := DBResource(db)
	cluster := ClusterResource
	p := func(r Resource, acts ...Action) Privilege { return Privilege{Resource: r, Actions: acts} }
	switch role {
	case "read":
		return []Privilege{p(dbr, readActions...), p(NSResource(db, "system.js"), readActions...)}, true
	case "readWrite":
		return []Privilege{p(dbr, readWriteActions...), p(NSResource(db, "system.js"), readWriteActions...)}, true
	case "dbAdmin":
		return []Privilege{p(dbr, dbAdminActions...), p(NSResource(db, "system.profile"), dbAdminProfileActions...)}, true
	case "userAdmin":
		return []Privilege{p(dbr, userAdminActions...)}, true
	case "dbOwner":
		var out []Privilege
		for _, r := range []string{"readWrite", "dbAdmin", "userAdmin"} {
			ps, _ := Builtin(r, db)
			out = append(out, ps...)
		}
		return out, true
	case "readAnyDatabase":
		return []Privilege{p(anyNormal, readActions...), p(cluster, ActListDatabases),
			p(Resource{Collection: "system.js"}, readActions...)}, true
	case "readWriteAnyDatabase":
		return []Privilege{p(anyNormal, readWriteActions...), p(cluster, ActListDatabases),
			p(Resource{Collection: "system.js"}, readWriteActions...)}, true
	case "dbAdminAnyDatabase":
		return []Privilege{p(anyNormal, dbAdminActions...), p(cluster, ActListDatabases),
			p(Resource{Collection: "system.profile"}, dbAdminProfileActions...)}, true
	case "userAdminAnyDatabase":
		sys := []Action{ActFind, ActInsert, ActUpdate, ActRemove, ActCreateIndex, ActDropIndex, ActCollStats, ActListIndexes}
		return []Privilege{p(anyNormal, userAdminActions...),
			p(cluster, ActInvalidateUserCache, ActListDatabases, ActViewUser, ActViewRole),
			p(NSResource("admin", "system.users"), sys...), p(NSResource("admin", "system.roles"), sys...)}, true
	case "clusterMonitor":
		return []Privilege{p(cluster, clusterMonitorActions...),
			p(anyNormal, ActCollStats, ActDBStats, ActIndexStats),
			p(NSResource("local", "system.replset"), ActFind),
			p(Resource{Collection: "system.profile"}, ActFind)}, true
	case "hostManager":
		return []Privilege{p(cluster, hostManagerActions...), p(anyNormal, ActKillCursors)}, true
	case "clusterManager":
		return []Privilege{p(cluster, clusterManagerActions...),
			p(DBResource("config"), ActFind, ActInsert, ActUpdate, ActRemove),
			p(DBResource("local"), ActFind)}, true
	case "clusterAdmin":
		var out []Privilege
		for _, r := range []string{"clusterManager", "clusterMonitor", "hostManager"} {
			ps, _ := Builtin(r, db)
			out = append(out, ps...)
		}
		return append(out, p(anyNormal, ActDropDatabase)), true
	case "backup":
		return []Privilege{p(cluster, backupClusterActions...), p(Resource{Any: true}, backupAnyActions...)}, true
	case "restore":
		return []Privilege{p(anyNormal, restoreAnyActions...), p(cluster, ActGetParameter, ActListDatabases),
			p(Resource{Collection: "system.js"}, restoreAnyActions...),
			p(NSResource("admin", "system.users"), ActFind, ActInsert, ActUpdate, ActRemove, ActCreateIndex),
			p(NSResource("admin", "system.roles"), ActFind, ActInsert, ActUpdate, ActRemove, ActCreateIndex)}, true
	case "root", "__system":
		// Divergence: root holds every action on every resource; mongod's
		// root is the union of the AnyDatabase, cluster, backup and restore
		// roles, which leaves out a few internal actions no client command
		// of this engine needs. Tested by TestAuthRootRunsEveryCommand.
		all := make([]Action, 0, len(knownActions))
		for a := range knownActions {
			all = append(all, a)
		}
		slices.Sort(all)
		return []Privilege{p(Resource{Any: true}, all...)}, true
	}
	return nil, false
}
