package engine_test

import "testing"

// TestWriteScripts runs testdata/writes: parameters and edge cases of the
// write commands (findAndModify, update, insert) through the driver.
func TestWriteScripts(t *testing.T) { runScripts(t, "writes") }

// TestCommandScripts runs testdata/commands: arguments every command
// takes (the API parameters) through the driver.
func TestCommandScripts(t *testing.T) { runScripts(t, "commands") }

// TestIndexedScripts runs testdata/indexed: query semantics that depend on
// indexes (bounds at the edges of BSON order, DISTINCT_SCAN), which need
// commands beyond find and so stay out of testdata/query.
func TestIndexedScripts(t *testing.T) { runScripts(t, "indexed") }
