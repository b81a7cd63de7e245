package engine_test

import "testing"

// TestValidationScripts runs testdata/validation: collection validators
// ($jsonSchema, query operators, $expr), validationLevel and
// validationAction, bypassDocumentValidation, the DocumentValidationFailure
// errInfo, and $jsonSchema as a query operator.
func TestValidationScripts(t *testing.T) { runScripts(t, "validation") }
