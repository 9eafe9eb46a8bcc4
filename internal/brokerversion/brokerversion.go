// Package brokerversion says what the RabbitMQ behind a connection does
// where the supported versions (3.10, 4.0, 4.3) differ, read from the
// version the broker reports (transport.State's ServerVersion; memory://
// reports the version it emulates). It is the one place that decides by
// version: code and tests ask it what the broker does, never compare
// version numbers themselves.
package brokerversion

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/acemq-go/acemq/transport"
)

// Version is a RabbitMQ version, as far as behaviours tell versions apart.
type Version struct{ Major, Minor int }

// Parse reads the version a broker reports ("3.10.8", "4.3.6").
func Parse(s string) (Version, error) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) >= 2 {
		major, err1 := strconv.Atoi(parts[0])
		minor, err2 := strconv.Atoi(parts[1])
		if err1 == nil && err2 == nil {
			return Version{major, minor}, nil
		}
	}
	return Version{}, fmt.Errorf("brokerversion: the broker reports no version of the form MAJOR.MINOR.PATCH: %q", s)
}

// Of is the version of the broker tr is connected to.
func Of(tr transport.Transport) (Version, error) {
	return Parse(tr.State().ServerVersion)
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

func (v Version) atLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// NackCounts reports whether a nack with requeue counts towards a quorum
// queue's delivery limit (and its x-delivery-count): up to 4.2. From 4.3 a
// nack says "not processed" and only a reject with requeue, or a channel
// closed holding the message, counts (measured on 4.3.6; x-acquired-count
// counts every return).
func (v Version) NackCounts() bool { return !v.atLeast(4, 3) }

// DefaultDeliveryLimit is the delivery limit of a quorum queue declared
// without x-delivery-limit: 20 from 4.0, none (0) on 3.10.
func (v Version) DefaultDeliveryLimit() int {
	if v.atLeast(4, 0) {
		return 20
	}
	return 0
}

// ComparesMaxAgeAsText reports whether a stream redeclared with another
// rendering of the same x-max-age (604800s over 7D) is PRECONDITION_FAILED:
// up to 4.2 the broker compares the text; from 4.3 it compares the
// duration (a different duration is refused on every version, 4.3 naming
// both in milliseconds).
func (v Version) ComparesMaxAgeAsText() bool { return !v.atLeast(4, 3) }
