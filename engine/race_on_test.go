//go:build race

package engine_test

// raceEnabled reports a -race build: heavy tests shrink their data sets.
const raceEnabled = true
