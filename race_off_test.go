//go:build !race

package acemq_test

// raceBuild: this test binary was built without -race.
const raceBuild = false
