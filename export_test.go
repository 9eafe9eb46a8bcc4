package acemq

// WithTestBackoff lets the tests of package acemq_test, on a real broker,
// fail many republishes in a row without a second's pause between them.
var WithTestBackoff = withTestBackoff
