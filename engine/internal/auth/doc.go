// Package auth holds MongoDB's access control model, free of storage and
// commands: actions, resources and privileges, the built-in roles, SCRAM
// credentials (SCRAM-SHA-1 and SCRAM-SHA-256, as mongod derives and stores
// them) and the server side of a SASL conversation.
//
// It must not import storage, command or server; the command layer keeps
// users and roles in admin.system.users and admin.system.roles and asks this
// package what they allow.
//
// Invariants:
//
//	I1. A password never leaves NewCredentials: only the salted SCRAM
//	    keys are returned, stored and compared.
//	I2. Every path over user input is bounded: role graphs are walked
//	    breadth first with a visited set, SASL payloads are limited in
//	    size, and a conversation takes a fixed number of steps.
//	I3. Privileges on a database or on any database ({db: "", collection:
//	    ""}) never cover system.* collections, as in MongoDB; only
//	    anyResource or an exact namespace does.
//
// https://www.mongodb.com/docs/manual/core/authorization/
package auth
