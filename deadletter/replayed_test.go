package deadletter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

// fixtureReplayedAt is 1770091506789 ms, the replayed-at of the family's fixture.
var fixtureReplayedAt = time.Date(2026, 2, 3, 4, 5, 6, 789_000_000, time.UTC)

func TestReplayedWrite(t *testing.T) {
	tests := []struct {
		name string
		r    deadletter.Replayed
		want transport.Table
	}{
		{
			"all set",
			deadletter.Replayed{From: "orders.new.dlq", At: fixtureReplayedAt, Count: 2},
			transport.Table{
				"acemq-replayed-from": "orders.new.dlq",
				"acemq-replayed-at":   "2026-02-03T04:05:06.789Z",
				"acemq-replay-count":  int64(2),
			},
		},
		{
			"always three fractional digits, in UTC",
			deadletter.Replayed{At: time.Date(2026, 2, 3, 5, 5, 6, 0, time.FixedZone("CET", 3600))},
			transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06.000Z"},
		},
		{
			"sub-millisecond digits are cut",
			deadletter.Replayed{At: fixtureReplayedAt.Add(999 * time.Microsecond)},
			transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06.789Z"},
		},
		{
			"count omitted when 0",
			deadletter.Replayed{From: "orders.new.parked", At: fixtureReplayedAt},
			transport.Table{
				"acemq-replayed-from": "orders.new.parked",
				"acemq-replayed-at":   "2026-02-03T04:05:06.789Z",
			},
		},
		{"nothing", deadletter.Replayed{}, transport.Table{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := transport.Table{}
			tt.r.Write(h)
			if !reflect.DeepEqual(h, tt.want) {
				t.Errorf("Write gave %v, want %v", transport.FormatTable(h), transport.FormatTable(tt.want))
			}
		})
	}
}

func TestReplayedWriteReplacesAndRemoves(t *testing.T) {
	h := transport.Table{
		"tenant":              "acme",
		"acemq-replayed-from": "old.dlq",
		"acemq-replayed-at":   "2020-01-01T00:00:00.000Z",
		"acemq-replay-count":  int64(1),
	}
	deadletter.Replayed{From: "orders.new.dlq"}.Write(h)
	want := transport.Table{"tenant": "acme", "acemq-replayed-from": "orders.new.dlq"}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("Write gave %v, want %v", transport.FormatTable(h), transport.FormatTable(want))
	}
	deadletter.Replayed{}.Write(nil) // the zero Replayed touches nothing
}

func TestReadReplayed(t *testing.T) {
	tests := []struct {
		name string
		h    transport.Table
		want deadletter.Replayed
	}{
		{"nil table", nil, deadletter.Replayed{}},
		{
			"as written",
			transport.Table{
				"acemq-replayed-from": "orders.new.dlq",
				"acemq-replayed-at":   "2026-02-03T04:05:06.789Z",
				"acemq-replay-count":  int64(2),
			},
			deadletter.Replayed{From: "orders.new.dlq", At: fixtureReplayedAt, Count: 2},
		},
		{"at as epoch ms int64", transport.Table{"acemq-replayed-at": int64(1770091506789)}, deadletter.Replayed{At: fixtureReplayedAt}},
		{"at as epoch ms int32 (too small, but an integer)", transport.Table{"acemq-replayed-at": int32(1000)}, deadletter.Replayed{At: time.UnixMilli(1000).UTC()}},
		{"at as epoch ms uint64", transport.Table{"acemq-replayed-at": uint64(1770091506789)}, deadletter.Replayed{At: fixtureReplayedAt}},
		{"at as epoch ms string", transport.Table{"acemq-replayed-at": " 1770091506789 "}, deadletter.Replayed{At: fixtureReplayedAt}},
		{"at as []byte", transport.Table{"acemq-replayed-at": []byte("2026-02-03T04:05:06.789Z")}, deadletter.Replayed{At: fixtureReplayedAt}},
		{"at with an offset", transport.Table{"acemq-replayed-at": "2026-02-03T05:05:06.789+01:00"}, deadletter.Replayed{At: fixtureReplayedAt}},
		{"at without fraction", transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06Z"}, deadletter.Replayed{At: fixtureReplayedAt.Truncate(time.Second)}},
		{"at with nanoseconds", transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06.789123456Z"}, deadletter.Replayed{At: fixtureReplayedAt.Add(123456)}},
		{"at as AMQP timestamp", transport.Table{"acemq-replayed-at": fixtureReplayedAt}, deadletter.Replayed{At: fixtureReplayedAt}},
		{"at garbage", transport.Table{"acemq-replayed-at": "yesterday"}, deadletter.Replayed{}},
		{"at date only", transport.Table{"acemq-replayed-at": "2026-02-03"}, deadletter.Replayed{}},
		{"at zero ms", transport.Table{"acemq-replayed-at": int64(0)}, deadletter.Replayed{}},
		{"at empty", transport.Table{"acemq-replayed-at": ""}, deadletter.Replayed{}},
		{"count as string", transport.Table{"acemq-replay-count": "3"}, deadletter.Replayed{Count: 3}},
		{"count as uint8", transport.Table{"acemq-replay-count": uint8(3)}, deadletter.Replayed{Count: 3}},
		{"count as float", transport.Table{"acemq-replay-count": 3.0}, deadletter.Replayed{Count: 3}},
		// The integer widths an AMQP writer may choose (the envelope's own
		// headers read them alike: envelope_test.go in the root).
		{"count as int8 (b)", transport.Table{"acemq-replay-count": int8(3)}, deadletter.Replayed{Count: 3}},
		{"count as int16 (s)", transport.Table{"acemq-replay-count": int16(3)}, deadletter.Replayed{Count: 3}},
		{"count as uint16 (u)", transport.Table{"acemq-replay-count": uint16(3)}, deadletter.Replayed{Count: 3}},
		{"count as int32 (I)", transport.Table{"acemq-replay-count": int32(3)}, deadletter.Replayed{Count: 3}},
		{"count as uint32 (i)", transport.Table{"acemq-replay-count": uint32(3)}, deadletter.Replayed{Count: 3}},
		{"count as int64 (l), at its largest", transport.Table{"acemq-replay-count": int64(math.MaxInt64)}, deadletter.Replayed{Count: math.MaxInt64}},
		{"count as float32 (f)", transport.Table{"acemq-replay-count": float32(3)}, deadletter.Replayed{Count: 3}},
		{"count as []byte (x), with spaces", transport.Table{"acemq-replay-count": []byte(" 3 ")}, deadletter.Replayed{Count: 3}},
		{"count negative", transport.Table{"acemq-replay-count": int64(-3)}, deadletter.Replayed{}},
		{"count unreadable", transport.Table{"acemq-replay-count": "many"}, deadletter.Replayed{}},
		{"from as []byte", transport.Table{"acemq-replayed-from": []byte("q.dlq")}, deadletter.Replayed{From: "q.dlq"}},
		{"from invalid UTF-8", transport.Table{"acemq-replayed-from": "q\xff"}, deadletter.Replayed{}},
		{"from not a string", transport.Table{"acemq-replayed-from": int64(1)}, deadletter.Replayed{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := deadletter.ReadReplayed(tt.h); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("deadletter.ReadReplayed = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReplayedRoundTrip(t *testing.T) {
	for _, r := range []deadletter.Replayed{
		{},
		{From: "orders.new.dlq", At: fixtureReplayedAt, Count: 1},
		{From: "orders.new.parked", At: fixtureReplayedAt},
		{Count: 7},
	} {
		h := transport.Table{}
		r.Write(h)
		if got := deadletter.ReadReplayed(h); !reflect.DeepEqual(got, r) {
			t.Errorf("deadletter.ReadReplayed(Write(%+v)) = %+v", r, got)
		}
	}
}

// deadletter.Replayed headers are application headers: they survive an envelope's
// read and write.
func TestReplayHeadersAreApplicationHeaders(t *testing.T) {
	e := acemq.Envelope{Headers: transport.Table{}}.Complete("orders.new", fixtureReplayedAt)
	r := deadletter.Replayed{From: "orders.new.dlq", At: fixtureReplayedAt, Count: 1}
	r.Write(e.Headers)
	var m transport.Message
	if err := e.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := deadletter.ReadReplayed(acemq.ReadEnvelope(m).Headers); !reflect.DeepEqual(got, r) {
		t.Errorf("deadletter.ReadReplayed = %+v, want %+v", got, r)
	}
}

// The family's fixture (testdata/fixtures/envelope.json, written by the
// Java reference): its replay headers read back, whichever integer width
// amqp091 delivers them in, and a replay writes them as CONTRACT.md section
// 6 says: acemq-replayed-at in RFC 3339 UTC with milliseconds (Java writes
// epoch ms: the same instant), the count a long, the queue a longstr.
func TestReplayedFixture(t *testing.T) {
	data, err := os.ReadFile("../testdata/fixtures/envelope.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Cases []struct {
			Case    string         `json:"case"`
			Headers map[string]any `json:"headers"`
		} `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || len(raw.Cases) == 0 {
		t.Fatalf("envelope.json: %v, %d cases", err, len(raw.Cases))
	}
	widths := map[string]func(int64) any{
		"as longs (l)": func(n int64) any { return n },
		"as short-short ints (b) where they fit": func(n int64) any {
			if n == int64(int8(n)) {
				return int8(n)
			}
			return n
		},
		"as numeric strings":    func(n int64) any { return fmt.Sprint(n) },
		"as unsigned longs (L)": func(n int64) any { return uint64(n) },
	}
	replayed := 0
	for _, c := range raw.Cases {
		num := func(k string) (int64, bool) {
			n, ok := c.Headers[k].(json.Number)
			if !ok {
				return 0, false
			}
			i, err := n.Int64()
			if err != nil {
				t.Fatalf("%s: %s is %s", c.Case, k, n)
			}
			return i, true
		}
		want := deadletter.Replayed{}
		want.From, _ = c.Headers[contract.HeaderReplayedFrom].(string)
		if n, ok := num(contract.HeaderReplayCount); ok {
			want.Count = int(n)
		}
		at, hasAt := num(contract.HeaderReplayedAt)
		if hasAt {
			want.At = time.UnixMilli(at).UTC()
		}
		if want != (deadletter.Replayed{}) {
			replayed++
		}
		for width, narrow := range widths {
			t.Run(c.Case+"/"+width, func(t *testing.T) {
				h := transport.Table{}
				for k, v := range c.Headers {
					if n, ok := v.(json.Number); ok {
						i, _ := n.Int64()
						h[k] = narrow(i)
					} else {
						h[k] = v
					}
				}
				got := deadletter.ReadReplayed(h)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("ReadReplayed = %+v, want %+v", got, want)
				}
				out := transport.Table{}
				got.Write(out)
				if v, ok := out[contract.HeaderReplayedAt]; hasAt != ok || ok && v != time.UnixMilli(at).UTC().Format("2006-01-02T15:04:05.000Z") {
					t.Errorf("acemq-replayed-at written as %T %#v, want the longstr of the fixture's %d ms", v, v, at)
				}
				if v, ok := out[contract.HeaderReplayCount]; ok && v != int64(want.Count) {
					t.Errorf("acemq-replay-count written as %T %#v, want the long %d", v, v, want.Count)
				}
				if v, ok := out[contract.HeaderReplayedFrom]; ok && v != want.From {
					t.Errorf("acemq-replayed-from written as %T %#v, want the longstr %q", v, v, want.From)
				}
			})
		}
	}
	if replayed == 0 {
		t.Error("no case of envelope.json carries replay headers")
	}
}

// Whatever the replay headers hold, they read as a count of at least 0 and
// a valid UTF-8 queue name, without a panic.
func FuzzReadReplayed(f *testing.F) {
	f.Add("orders.new.dlq", "2026-02-03T04:05:06.789Z", int64(2), []byte("3"))
	f.Add("q\xff", " 1770091506789 ", int64(-1), []byte{0xff})
	f.Fuzz(func(t *testing.T, from, at string, count int64, raw []byte) {
		for _, h := range []transport.Table{
			{contract.HeaderReplayedFrom: from, contract.HeaderReplayedAt: at, contract.HeaderReplayCount: count},
			{contract.HeaderReplayedFrom: raw, contract.HeaderReplayedAt: raw, contract.HeaderReplayCount: raw},
			{contract.HeaderReplayedFrom: count, contract.HeaderReplayedAt: count, contract.HeaderReplayCount: at},
		} {
			if r := deadletter.ReadReplayed(h); r.Count < 0 || !utf8.ValidString(r.From) {
				t.Errorf("ReadReplayed(%v) = %+v", transport.FormatTable(h), r)
			}
		}
	})
}
