package schedule

import (
	"time"

	"github.com/acemq-go/acemq/contract"
)

// hopSlack is how far what remains may fall short of a rung for the
// message to wait on it still: half the shortest rung. Each hop takes
// milliseconds (hundreds when many messages fall due at once), so a
// message due in 90s comes back from its second 10s rung with 9.99s
// left: by the letter of the rule the 1s rung, nine hops of it, and a
// delivery up to a second early; with the slack, the third 10s rung that
// section 12's own example names, and a delivery a little late.
const hopSlack = contract.ScheduleDeliverBelow / 2

// rungFor is the routing rule (CONTRACT.md section 12): what remains under
// a second (or is past) is delivered now (ok false); anything else waits on
// the longest rung not longer than what remains (give or take hopSlack),
// so that four hours is four one-hour hops.
func rungFor(remaining time.Duration) (rung time.Duration, ok bool) {
	if remaining < contract.ScheduleDeliverBelow {
		return 0, false
	}
	for _, d := range contract.ScheduleRungDelays() {
		if d <= remaining+hopSlack {
			return d, true
		}
	}
	return 0, false // unreachable: the shortest rung is ScheduleDeliverBelow
}
