package schedule

import (
	"time"

	"github.com/acemq-go/acemq/contract"
)

// rungFor is the routing rule (CONTRACT.md section 12): what remains under
// a second (or is past) is delivered now (ok false); anything else waits on
// the longest rung not longer than what remains, so that no rung holds a
// message past its due time, and four hours is four one-hour hops.
func rungFor(remaining time.Duration) (rung time.Duration, ok bool) {
	if remaining < contract.ScheduleDeliverBelow {
		return 0, false
	}
	for _, d := range contract.ScheduleRungDelays() {
		if d <= remaining {
			return d, true
		}
	}
	return 0, false // unreachable: the shortest rung is ScheduleDeliverBelow
}
