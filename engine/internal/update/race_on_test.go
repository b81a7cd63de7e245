//go:build race

package update

// raceEnabled reports a -race build, whose timings run several times slower.
const raceEnabled = true
