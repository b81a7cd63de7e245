package scripttest

import "strconv"

// codeNames are the codeNames of MongoDB's error_codes.yml that scripts
// meet. mongod puts no codeName in writeErrors entries, so the runner
// names their codes itself.
var codeNames = map[int32]string{
	0:     "OK",
	1:     "InternalError",
	2:     "BadValue",
	4:     "NoSuchKey",
	5:     "GraphContainsCycle",
	8:     "UnknownError",
	9:     "FailedToParse",
	11:    "UserNotFound",
	12:    "UnsupportedFormat",
	13:    "Unauthorized",
	14:    "TypeMismatch",
	15:    "Overflow",
	16:    "InvalidLength",
	17:    "ProtocolError",
	18:    "AuthenticationFailed",
	20:    "IllegalOperation",
	21:    "EmptyArrayOperation",
	22:    "InvalidBSON",
	24:    "LockTimeout",
	26:    "NamespaceNotFound",
	27:    "IndexNotFound",
	28:    "PathNotViable",
	29:    "NonExistentPath",
	30:    "InvalidPath",
	34:    "CannotBackfillArray",
	40:    "ConflictingUpdateOperators",
	43:    "CursorNotFound",
	48:    "NamespaceExists",
	50:    "MaxTimeMSExpired",
	52:    "DollarPrefixedFieldName",
	53:    "InvalidIdField",
	54:    "NotSingleValueField",
	55:    "InvalidDBRef",
	56:    "EmptyFieldName",
	57:    "DottedFieldName",
	59:    "CommandNotFound",
	64:    "WriteConcernFailed",
	66:    "ImmutableField",
	67:    "CannotCreateIndex",
	68:    "IndexAlreadyExists",
	72:    "InvalidOptions",
	73:    "InvalidNamespace",
	76:    "NoReplicationEnabled",
	79:    "UnknownReplWriteConcern",
	85:    "IndexOptionsConflict",
	86:    "IndexKeySpecsConflict",
	89:    "NetworkTimeout",
	96:    "OperationFailed",
	100:   "UnsatisfiableWriteConcern",
	111:   "NotExactValueField",
	112:   "WriteConflict",
	115:   "CommandNotSupported",
	117:   "ConflictingOperationInProgress",
	121:   "DocumentValidationFailure",
	143:   "CursorInUse",
	146:   "ExceededMemoryLimit",
	165:   "ViewDepthLimitExceeded",
	166:   "CommandNotSupportedOnView",
	167:   "OptionNotSupportedOnView",
	168:   "InvalidPipelineOperator",
	171:   "CannotIndexParallelArrays",
	175:   "QueryPlanKilled",
	181:   "AmbiguousIndexKeyPattern",
	186:   "ClientMetadataCannotBeMutated",
	197:   "InvalidIndexSpecificationOption",
	224:   "QueryFeatureNotAllowed",
	225:   "TransactionTooOld",
	237:   "CursorKilled",
	238:   "NotImplemented",
	241:   "ConversionFailure",
	251:   "NoSuchTransaction",
	262:   "ExceededTimeLimit",
	263:   "OperationNotSupportedInTransaction",
	291:   "NoQueryExecutionPlans",
	292:   "QueryExceededMemoryLimitNoDiskUseAllowed",
	322:   "APIVersionError",
	323:   "APIStrictError",
	352:   "UnsupportedOpQueryCommand",
	10107: "NotWritablePrimary",
	13297: "DatabaseDifferCase",
	174:   "IncompatibleCollationVersion",
	10334: "BSONObjectTooLarge",
	11000: "DuplicateKey",
	11601: "Interrupted",
}

// CodeName returns the codeName MongoDB reports with code: its name in
// error_codes.yml, or "Location<code>" for an assertion id without one.
// A named code missing from the runner's table also comes out as
// "Location<code>"; TestScriptCodeNames in package engine checks that the
// table knows every code the engine names.
func CodeName(code int32) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return "Location" + strconv.Itoa(int(code))
}
