//go:build race

package compiletest

// raceFlag builds as the test binary was built, with -race.
var raceFlag = []string{"-race"}
