package brokerversion

import "testing"

func TestParse(t *testing.T) {
	for s, want := range map[string]Version{"3.10.8": {3, 10}, "4.0.5": {4, 0}, "4.3.6": {4, 3}, "4.3": {4, 3}} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "4", "x.y.z", "4.x.1"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) read a version", s)
		}
	}
}

func TestBehaviours(t *testing.T) {
	tests := []struct {
		v                      Version
		nackCounts, textMaxAge bool
		limit                  int
	}{
		{Version{3, 10}, true, true, 0},
		{Version{4, 0}, true, true, 20},
		{Version{4, 2}, true, true, 20},
		{Version{4, 3}, false, false, 20},
		{Version{5, 0}, false, false, 20},
	}
	for _, tt := range tests {
		if got := tt.v.NackCounts(); got != tt.nackCounts {
			t.Errorf("%v: NackCounts %v, want %v", tt.v, got, tt.nackCounts)
		}
		if got := tt.v.ComparesMaxAgeAsText(); got != tt.textMaxAge {
			t.Errorf("%v: ComparesMaxAgeAsText %v, want %v", tt.v, got, tt.textMaxAge)
		}
		if got := tt.v.DefaultDeliveryLimit(); got != tt.limit {
			t.Errorf("%v: DefaultDeliveryLimit %d, want %d", tt.v, got, tt.limit)
		}
	}
}
