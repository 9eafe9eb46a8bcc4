//go:build race

package acemq_test

// raceBuild: this test binary was built with -race (a build the go command
// runs from a test then uses the same, so that it reuses what the test's
// build compiled).
const raceBuild = true
