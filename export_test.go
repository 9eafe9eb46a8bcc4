package acemq

// WithTestBackoff lets the tests of package acemq_test, on a real broker,
// fail many republishes in a row without a second's pause between them.
var WithTestBackoff = withTestBackoff

// BreakerWork is how many goroutines and timers of c's circuit breaker are
// under way.
func BreakerWork(c *Consumer) int { return c.circuit.work.count() }
