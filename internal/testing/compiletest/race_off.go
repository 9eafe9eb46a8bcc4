//go:build !race

package compiletest

// raceFlag builds as the test binary was built, without -race.
var raceFlag []string
