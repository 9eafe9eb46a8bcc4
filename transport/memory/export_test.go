package memory

// WithSettleTimeout is withSettleTimeout, for the tests of package
// memory_test.
var WithSettleTimeout = withSettleTimeout
