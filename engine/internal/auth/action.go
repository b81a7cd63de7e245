package auth

// Action is one of MongoDB's privilege actions ("find", "insert", ...).
type Action string

// The actions that the engine's commands and built-in roles use, by
// MongoDB's names.
// https://www.mongodb.com/docs/manual/reference/privilege-actions/
const (
	ActFind                     Action = "find"
	ActInsert                   Action = "insert"
	ActUpdate                   Action = "update"
	ActRemove                   Action = "remove"
	ActBypassDocumentValidation Action = "bypassDocumentValidation"
	ActChangeStream             Action = "changeStream"
	ActCollMod                  Action = "collMod"
	ActCollStats                Action = "collStats"
	ActCompact                  Action = "compact"
	ActConvertToCapped          Action = "convertToCapped"
	ActCreateCollection         Action = "createCollection"
	ActCreateIndex              Action = "createIndex"
	ActDBHash                   Action = "dbHash"
	ActDBStats                  Action = "dbStats"
	ActDropCollection           Action = "dropCollection"
	ActDropDatabase             Action = "dropDatabase"
	ActDropIndex                Action = "dropIndex"
	ActEnableProfiler           Action = "enableProfiler"
	ActIndexStats               Action = "indexStats"
	ActKillCursors              Action = "killCursors"
	ActKillAnyCursor            Action = "killAnyCursor"
	ActListCollections          Action = "listCollections"
	ActListIndexes              Action = "listIndexes"
	ActPlanCacheRead            Action = "planCacheRead"
	ActPlanCacheWrite           Action = "planCacheWrite"
	ActReIndex                  Action = "reIndex"
	ActRenameCollectionSameDB   Action = "renameCollectionSameDB"
	ActValidate                 Action = "validate"
	ActChangeCustomData         Action = "changeCustomData"
	ActChangePassword           Action = "changePassword"
	ActChangeOwnPassword        Action = "changeOwnPassword"
	ActChangeOwnCustomData      Action = "changeOwnCustomData"
	ActCreateRole               Action = "createRole"
	ActCreateUser               Action = "createUser"
	ActDropRole                 Action = "dropRole"
	ActDropUser                 Action = "dropUser"
	ActGrantRole                Action = "grantRole"
	ActRevokeRole               Action = "revokeRole"
	ActSetAuthRestriction       Action = "setAuthenticationRestriction"
	ActViewRole                 Action = "viewRole"
	ActViewUser                 Action = "viewUser"
	ActInvalidateUserCache      Action = "invalidateUserCache"
	ActApplyOps                 Action = "applyOps"
	ActConnPoolStats            Action = "connPoolStats"
	ActFsync                    Action = "fsync"
	ActUnlock                   Action = "unlock"
	ActGetCmdLineOpts           Action = "getCmdLineOpts"
	ActGetLog                   Action = "getLog"
	ActGetParameter             Action = "getParameter"
	ActSetParameter             Action = "setParameter"
	ActHostInfo                 Action = "hostInfo"
	ActInprog                   Action = "inprog"
	ActKillop                   Action = "killop"
	ActListDatabases            Action = "listDatabases"
	ActListSessions             Action = "listSessions"
	ActKillAnySession           Action = "killAnySession"
	ActReplSetGetConfig         Action = "replSetGetConfig"
	ActReplSetGetStatus         Action = "replSetGetStatus"
	ActReplSetConfigure         Action = "replSetConfigure"
	ActReplSetResizeOplog       Action = "replSetResizeOplog"
	ActServerStatus             Action = "serverStatus"
	ActShutdown                 Action = "shutdown"
	ActTop                      Action = "top"
	ActLogRotate                Action = "logRotate"
	ActAppendOplogNote          Action = "appendOplogNote"
	ActSetFeatureCompatibility  Action = "setFeatureCompatibilityVersion"
	ActGetDefaultRWConcern      Action = "getDefaultRWConcern"
	ActSetDefaultRWConcern      Action = "setDefaultRWConcern"
	ActUseUUID                  Action = "useUUID"
	ActDropConnections          Action = "dropConnections"
	ActListSearchIndexes        Action = "listSearchIndexes"
	ActCreateSearchIndexes      Action = "createSearchIndexes"
	ActDropSearchIndex          Action = "dropSearchIndex"
	ActUpdateSearchIndex        Action = "updateSearchIndex"
	ActAnalyzeShardKey          Action = "analyzeShardKey"
	ActPlanCacheIndexFilter     Action = "planCacheIndexFilter"
	ActStorageDetails           Action = "storageDetails"
	ActImpersonate              Action = "impersonate"
	ActConfigureFailPoint       Action = "internal"
	ActRemoveShard              Action = "removeShard"
	ActFlushRouterConfig        Action = "flushRouterConfig"
	ActCleanupOrphaned          Action = "cleanupOrphaned"
	ActReplSetStateChange       Action = "replSetStateChange"
	ActResync                   Action = "resync"
	ActConnPoolSync             Action = "connPoolSync"
	ActApplicationMessage       Action = "applicationMessage"
	ActNetstat                  Action = "netstat"
	ActListShards               Action = "listShards"
	ActGetShardMap              Action = "getShardMap"
	ActCheckMetadataConsistency Action = "checkMetadataConsistency"
	ActSetUserWriteBlockMode    Action = "setUserWriteBlockMode"
	ActBypassWriteBlockingMode  Action = "bypassWriteBlockingMode"
	ActOplogDirectAccess        Action = "oplogDirectAccess"
	ActRotateCertificates       Action = "rotateCertificates"
	ActCPUProfiler              Action = "cpuProfiler"
	ActTouch                    Action = "touch"
)

// knownActions holds every action a role document may name.
var knownActions = func() map[Action]bool {
	m := map[Action]bool{}
	for _, a := range []Action{ActFind, ActInsert, ActUpdate, ActRemove, ActBypassDocumentValidation,
		ActChangeStream, ActCollMod, ActCollStats, ActCompact, ActConvertToCapped, ActCreateCollection,
		ActCreateIndex, ActDBHash, ActDBStats, ActDropCollection, ActDropDatabase, ActDropIndex,
		ActEnableProfiler, ActIndexStats, ActKillCursors, ActKillAnyCursor, ActListCollections,
		ActListIndexes, ActPlanCacheRead, ActPlanCacheWrite, ActReIndex, ActRenameCollectionSameDB,
		ActValidate, ActChangeCustomData, ActChangePassword, ActChangeOwnPassword, ActChangeOwnCustomData,
		ActCreateRole, ActCreateUser, ActDropRole, ActDropUser, ActGrantRole, ActRevokeRole,
		ActSetAuthRestriction, ActViewRole, ActViewUser, ActInvalidateUserCache, ActApplyOps,
		ActConnPoolStats, ActFsync, ActUnlock, ActGetCmdLineOpts, ActGetLog, ActGetParameter,
		ActSetParameter, ActHostInfo, ActInprog, ActKillop, ActListDatabases, ActListSessions,
		ActKillAnySession, ActReplSetGetConfig, ActReplSetGetStatus, ActReplSetConfigure, ActReplSetResizeOplog,
		ActServerStatus, ActShutdown, ActTop, ActLogRotate, ActAppendOplogNote, ActSetFeatureCompatibility,
		ActGetDefaultRWConcern, ActSetDefaultRWConcern, ActUseUUID, ActDropConnections,
		ActListSearchIndexes, ActCreateSearchIndexes, ActDropSearchIndex, ActUpdateSearchIndex,
		ActAnalyzeShardKey, ActPlanCacheIndexFilter, ActStorageDetails, ActImpersonate,
		ActConfigureFailPoint, ActRemoveShard, ActFlushRouterConfig, ActCleanupOrphaned,
		ActReplSetStateChange, ActResync, ActConnPoolSync, ActApplicationMessage, ActNetstat,
		ActListShards, ActGetShardMap, ActCheckMetadataConsistency, ActSetUserWriteBlockMode,
		ActBypassWriteBlockingMode, ActOplogDirectAccess, ActRotateCertificates, ActCPUProfiler, ActTouch} {
		m[a] = true
	}
	return m
}()

// KnownAction reports whether s names an action.
func KnownAction(s string) bool { return knownActions[Action(s)] }
