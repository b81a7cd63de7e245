//go:build !race

package match

// raceEnabled reports a -race build, whose timings run several times slower.
const raceEnabled = false
