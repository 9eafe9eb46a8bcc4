package transport

import "testing"

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{
		EventLost: "lost", EventRecovered: "recovered", EventBlocked: "blocked", EventUnblocked: "unblocked",
		0: "EventKind(0)", 9: "EventKind(9)",
	} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
}
