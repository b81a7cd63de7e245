package mongoerr

import "strconv"

// Code is a MongoDB error code as listed in the server's error_codes.yml.
type Code int32

// Codes used by the engine, named by MongoDB's codeName.
const (
	OK                                       Code = 0
	InternalError                            Code = 1
	BadValue                                 Code = 2
	NoSuchKey                                Code = 4
	GraphContainsCycle                       Code = 5
	UnknownError                             Code = 8
	FailedToParse                            Code = 9
	UserNotFound                             Code = 11
	UnsupportedFormat                        Code = 12
	Unauthorized                             Code = 13
	TypeMismatch                             Code = 14
	Overflow                                 Code = 15
	InvalidLength                            Code = 16
	ProtocolError                            Code = 17
	AuthenticationFailed                     Code = 18
	IllegalOperation                         Code = 20
	EmptyArrayOperation                      Code = 21
	InvalidBSON                              Code = 22
	LockTimeout                              Code = 24
	NamespaceNotFound                        Code = 26
	IndexNotFound                            Code = 27
	PathNotViable                            Code = 28
	NonExistentPath                          Code = 29
	InvalidPath                              Code = 30
	ConflictingUpdateOperators               Code = 40
	CursorNotFound                           Code = 43
	NamespaceExists                          Code = 48
	MaxTimeMSExpired                         Code = 50
	DollarPrefixedFieldName                  Code = 52
	InvalidIdField                           Code = 53
	NotSingleValueField                      Code = 54
	InvalidDBRef                             Code = 55
	EmptyFieldName                           Code = 56
	DottedFieldName                          Code = 57
	CommandNotFound                          Code = 59
	ImmutableField                           Code = 66
	CannotCreateIndex                        Code = 67
	IndexAlreadyExists                       Code = 68
	InvalidOptions                           Code = 72
	InvalidNamespace                         Code = 73
	NoReplicationEnabled                     Code = 76
	IndexOptionsConflict                     Code = 85
	IndexKeySpecsConflict                    Code = 86
	NetworkTimeout                           Code = 89
	OperationFailed                          Code = 96
	DocumentValidationFailure                Code = 121
	CommandNotSupported                      Code = 115
	ConflictingOperationInProgress           Code = 117
	InvalidIndexSpecificationOption          Code = 197
	CannotIndexParallelArrays                Code = 171
	QueryPlanKilled                          Code = 175
	TransactionTooOld                        Code = 225
	CursorKilled                             Code = 237
	NotImplemented                           Code = 238
	NoSuchTransaction                        Code = 251
	ExceededTimeLimit                        Code = 262
	OperationNotSupportedInTransaction       Code = 263
	NoQueryExecutionPlans                    Code = 291
	QueryExceededMemoryLimitNoDiskUseAllowed Code = 292
	APIVersionError                          Code = 322
	APIStrictError                           Code = 323
	DuplicateKey                             Code = 11000
	Interrupted                              Code = 11601
	NotWritablePrimary                       Code = 10107
	BSONObjectTooLarge                       Code = 10334
	CannotBackfillArray                      Code = 34
	UnknownReplWriteConcern                  Code = 79
	UnsatisfiableWriteConcern                Code = 100
	NotExactValueField                       Code = 111
	ClientMetadataCannotBeMutated            Code = 186
	QueryFeatureNotAllowed                   Code = 224
	UnsupportedOpQueryCommand                Code = 352
	AmbiguousIndexKeyPattern                 Code = 181
	CursorInUse                              Code = 143
	UnknownBSONField                         Code = 40415 // IDL: "BSON field '...' is an unknown field."
	ConversionFailure                        Code = 241
	ExceededMemoryLimit                      Code = 146
	InvalidPipelineOperator                  Code = 168
	CommandNotSupportedOnView                Code = 166
	OptionNotSupportedOnView                 Code = 167
	ViewDepthLimitExceeded                   Code = 165
	DatabaseDifferCase                       Code = 13297
	IncompatibleCollationVersion             Code = 174
	HostUnreachable                          Code = 6
	HostNotFound                             Code = 7
	WriteConcernFailed                       Code = 64
	ShutdownInProgress                       Code = 91
	WriteConflict                            Code = 112
	ReadConcernMajorityNotAvailableYet       Code = 134
	PrimarySteppedDown                       Code = 189
	FailPointSetFailed                       Code = 266
	SocketException                          Code = 9001
	InterruptedAtShutdown                    Code = 11600
	InterruptedDueToReplStateChange          Code = 11602
	NotPrimaryNoSecondaryOk                  Code = 13435
	NotPrimaryOrSecondary                    Code = 13436
	RoleNotFound                             Code = 31
	MechanismUnavailable                     Code = 334
	InvalidRoleModification                  Code = 74
	OutOfDiskSpace                           Code = 14031
	IndexBuildAborted                        Code = 276
	TransactionCommitted                     Code = 256
	TransactionTooLarge                      Code = 257
	TransactionExceededLifetimeLimitSeconds  Code = 290
	SnapshotUnavailable                      Code = 246
	NoMatchingDocument                       Code = 47
	InvalidResumeToken                       Code = 260
	ChangeStreamFatalError                   Code = 280
	ChangeStreamHistoryLost                  Code = 286
	TooManyLogicalSessions                   Code = 261
)

var names = map[Code]string{
	OK:                                       "OK",
	InternalError:                            "InternalError",
	BadValue:                                 "BadValue",
	NoSuchKey:                                "NoSuchKey",
	GraphContainsCycle:                       "GraphContainsCycle",
	UnknownError:                             "UnknownError",
	FailedToParse:                            "FailedToParse",
	UserNotFound:                             "UserNotFound",
	UnsupportedFormat:                        "UnsupportedFormat",
	Unauthorized:                             "Unauthorized",
	TypeMismatch:                             "TypeMismatch",
	Overflow:                                 "Overflow",
	InvalidLength:                            "InvalidLength",
	ProtocolError:                            "ProtocolError",
	AuthenticationFailed:                     "AuthenticationFailed",
	IllegalOperation:                         "IllegalOperation",
	EmptyArrayOperation:                      "EmptyArrayOperation",
	InvalidBSON:                              "InvalidBSON",
	LockTimeout:                              "LockTimeout",
	NamespaceNotFound:                        "NamespaceNotFound",
	IndexNotFound:                            "IndexNotFound",
	PathNotViable:                            "PathNotViable",
	NonExistentPath:                          "NonExistentPath",
	InvalidPath:                              "InvalidPath",
	ConflictingUpdateOperators:               "ConflictingUpdateOperators",
	CursorNotFound:                           "CursorNotFound",
	NamespaceExists:                          "NamespaceExists",
	MaxTimeMSExpired:                         "MaxTimeMSExpired",
	DollarPrefixedFieldName:                  "DollarPrefixedFieldName",
	InvalidIdField:                           "InvalidIdField",
	NotSingleValueField:                      "NotSingleValueField",
	InvalidDBRef:                             "InvalidDBRef",
	EmptyFieldName:                           "EmptyFieldName",
	DottedFieldName:                          "DottedFieldName",
	CommandNotFound:                          "CommandNotFound",
	ImmutableField:                           "ImmutableField",
	CannotCreateIndex:                        "CannotCreateIndex",
	IndexAlreadyExists:                       "IndexAlreadyExists",
	InvalidOptions:                           "InvalidOptions",
	InvalidNamespace:                         "InvalidNamespace",
	NoReplicationEnabled:                     "NoReplicationEnabled",
	IndexOptionsConflict:                     "IndexOptionsConflict",
	IndexKeySpecsConflict:                    "IndexKeySpecsConflict",
	NetworkTimeout:                           "NetworkTimeout",
	OperationFailed:                          "OperationFailed",
	DocumentValidationFailure:                "DocumentValidationFailure",
	CommandNotSupported:                      "CommandNotSupported",
	ConflictingOperationInProgress:           "ConflictingOperationInProgress",
	InvalidIndexSpecificationOption:          "InvalidIndexSpecificationOption",
	CannotIndexParallelArrays:                "CannotIndexParallelArrays",
	QueryPlanKilled:                          "QueryPlanKilled",
	TransactionTooOld:                        "TransactionTooOld",
	CursorKilled:                             "CursorKilled",
	NotImplemented:                           "NotImplemented",
	NoSuchTransaction:                        "NoSuchTransaction",
	ExceededTimeLimit:                        "ExceededTimeLimit",
	OperationNotSupportedInTransaction:       "OperationNotSupportedInTransaction",
	NoQueryExecutionPlans:                    "NoQueryExecutionPlans",
	QueryExceededMemoryLimitNoDiskUseAllowed: "QueryExceededMemoryLimitNoDiskUseAllowed",
	APIVersionError:                          "APIVersionError",
	APIStrictError:                           "APIStrictError",
	DuplicateKey:                             "DuplicateKey",
	Interrupted:                              "Interrupted",
	NotWritablePrimary:                       "NotWritablePrimary",
	BSONObjectTooLarge:                       "BSONObjectTooLarge",
	CursorInUse:                              "CursorInUse",
	AmbiguousIndexKeyPattern:                 "AmbiguousIndexKeyPattern",
	CannotBackfillArray:                      "CannotBackfillArray",
	UnknownReplWriteConcern:                  "UnknownReplWriteConcern",
	UnsatisfiableWriteConcern:                "UnsatisfiableWriteConcern",
	NotExactValueField:                       "NotExactValueField",
	ClientMetadataCannotBeMutated:            "ClientMetadataCannotBeMutated",
	QueryFeatureNotAllowed:                   "QueryFeatureNotAllowed",
	UnsupportedOpQueryCommand:                "UnsupportedOpQueryCommand",
	ConversionFailure:                        "ConversionFailure",
	ExceededMemoryLimit:                      "ExceededMemoryLimit",
	InvalidPipelineOperator:                  "InvalidPipelineOperator",
	CommandNotSupportedOnView:                "CommandNotSupportedOnView",
	OptionNotSupportedOnView:                 "OptionNotSupportedOnView",
	ViewDepthLimitExceeded:                   "ViewDepthLimitExceeded",
	DatabaseDifferCase:                       "DatabaseDifferCase",
	IncompatibleCollationVersion:             "IncompatibleCollationVersion",
	HostUnreachable:                          "HostUnreachable",
	HostNotFound:                             "HostNotFound",
	WriteConcernFailed:                       "WriteConcernFailed",
	ShutdownInProgress:                       "ShutdownInProgress",
	WriteConflict:                            "WriteConflict",
	ReadConcernMajorityNotAvailableYet:       "ReadConcernMajorityNotAvailableYet",
	PrimarySteppedDown:                       "PrimarySteppedDown",
	FailPointSetFailed:                       "FailPointSetFailed",
	SocketException:                          "SocketException",
	InterruptedAtShutdown:                    "InterruptedAtShutdown",
	InterruptedDueToReplStateChange:          "InterruptedDueToReplStateChange",
	NotPrimaryNoSecondaryOk:                  "NotPrimaryNoSecondaryOk",
	NotPrimaryOrSecondary:                    "NotPrimaryOrSecondary",
	RoleNotFound:                             "RoleNotFound",
	MechanismUnavailable:                     "MechanismUnavailable",
	InvalidRoleModification:                  "InvalidRoleModification",
	OutOfDiskSpace:                           "OutOfDiskSpace",
	IndexBuildAborted:                        "IndexBuildAborted",
	TransactionCommitted:                     "TransactionCommitted",
	TransactionTooLarge:                      "TransactionTooLarge",
	TransactionExceededLifetimeLimitSeconds:  "TransactionExceededLifetimeLimitSeconds",
	SnapshotUnavailable:                      "SnapshotUnavailable",
	NoMatchingDocument:                       "NoMatchingDocument",
	InvalidResumeToken:                       "InvalidResumeToken",
	ChangeStreamFatalError:                   "ChangeStreamFatalError",
	ChangeStreamHistoryLost:                  "ChangeStreamHistoryLost",
	TooManyLogicalSessions:                   "TooManyLogicalSessions",
}

// Name returns the codeName MongoDB sends with c. Codes that MongoDB raises
// as bare assertion ids get the name "Location<code>", as mongod reports them.
func (c Code) Name() string {
	if n, ok := names[c]; ok {
		return n
	}
	return "Location" + strconv.Itoa(int(c))
}

// String returns the codeName.
func (c Code) String() string { return c.Name() }
