package acemq

import (
	"reflect"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
)

func TestReplayWrite(t *testing.T) {
	tests := []struct {
		name string
		r    Replay
		want transport.Table
	}{
		{
			"all set",
			Replay{From: "orders.new.dlq", At: firstSeen, Count: 2},
			transport.Table{
				"acemq-replayed-from": "orders.new.dlq",
				"acemq-replayed-at":   "2026-02-03T04:05:06.789Z",
				"acemq-replay-count":  int64(2),
			},
		},
		{
			"always three fractional digits, in UTC",
			Replay{At: time.Date(2026, 2, 3, 5, 5, 6, 0, time.FixedZone("CET", 3600))},
			transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06.000Z"},
		},
		{
			"sub-millisecond digits are cut",
			Replay{At: firstSeen.Add(999 * time.Microsecond)},
			transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06.789Z"},
		},
		{
			"count omitted when 0",
			Replay{From: "orders.new.parked", At: firstSeen},
			transport.Table{
				"acemq-replayed-from": "orders.new.parked",
				"acemq-replayed-at":   "2026-02-03T04:05:06.789Z",
			},
		},
		{"nothing", Replay{}, transport.Table{}},
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

func TestReplayWriteReplacesAndRemoves(t *testing.T) {
	h := transport.Table{
		"tenant":              "acme",
		"acemq-replayed-from": "old.dlq",
		"acemq-replayed-at":   "2020-01-01T00:00:00.000Z",
		"acemq-replay-count":  int64(1),
	}
	Replay{From: "orders.new.dlq"}.Write(h)
	want := transport.Table{"tenant": "acme", "acemq-replayed-from": "orders.new.dlq"}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("Write gave %v, want %v", transport.FormatTable(h), transport.FormatTable(want))
	}
	Replay{}.Write(nil) // the zero Replay touches nothing
}

func TestReadReplay(t *testing.T) {
	tests := []struct {
		name string
		h    transport.Table
		want Replay
	}{
		{"nil table", nil, Replay{}},
		{
			"as written",
			transport.Table{
				"acemq-replayed-from": "orders.new.dlq",
				"acemq-replayed-at":   "2026-02-03T04:05:06.789Z",
				"acemq-replay-count":  int64(2),
			},
			Replay{From: "orders.new.dlq", At: firstSeen, Count: 2},
		},
		{"at as epoch ms int64", transport.Table{"acemq-replayed-at": int64(1770091506789)}, Replay{At: firstSeen}},
		{"at as epoch ms int32 (too small, but an integer)", transport.Table{"acemq-replayed-at": int32(1000)}, Replay{At: time.UnixMilli(1000).UTC()}},
		{"at as epoch ms uint64", transport.Table{"acemq-replayed-at": uint64(1770091506789)}, Replay{At: firstSeen}},
		{"at as epoch ms string", transport.Table{"acemq-replayed-at": " 1770091506789 "}, Replay{At: firstSeen}},
		{"at as []byte", transport.Table{"acemq-replayed-at": []byte("2026-02-03T04:05:06.789Z")}, Replay{At: firstSeen}},
		{"at with an offset", transport.Table{"acemq-replayed-at": "2026-02-03T05:05:06.789+01:00"}, Replay{At: firstSeen}},
		{"at without fraction", transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06Z"}, Replay{At: firstSeen.Truncate(time.Second)}},
		{"at with nanoseconds", transport.Table{"acemq-replayed-at": "2026-02-03T04:05:06.789123456Z"}, Replay{At: firstSeen.Add(123456)}},
		{"at as AMQP timestamp", transport.Table{"acemq-replayed-at": firstSeen}, Replay{At: firstSeen}},
		{"at garbage", transport.Table{"acemq-replayed-at": "yesterday"}, Replay{}},
		{"at date only", transport.Table{"acemq-replayed-at": "2026-02-03"}, Replay{}},
		{"at zero ms", transport.Table{"acemq-replayed-at": int64(0)}, Replay{}},
		{"at empty", transport.Table{"acemq-replayed-at": ""}, Replay{}},
		{"count as string", transport.Table{"acemq-replay-count": "3"}, Replay{Count: 3}},
		{"count as uint8", transport.Table{"acemq-replay-count": uint8(3)}, Replay{Count: 3}},
		{"count as float", transport.Table{"acemq-replay-count": 3.0}, Replay{Count: 3}},
		{"count negative", transport.Table{"acemq-replay-count": int64(-3)}, Replay{}},
		{"count unreadable", transport.Table{"acemq-replay-count": "many"}, Replay{}},
		{"from as []byte", transport.Table{"acemq-replayed-from": []byte("q.dlq")}, Replay{From: "q.dlq"}},
		{"from invalid UTF-8", transport.Table{"acemq-replayed-from": "q\xff"}, Replay{}},
		{"from not a string", transport.Table{"acemq-replayed-from": int64(1)}, Replay{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReadReplay(tt.h); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadReplay = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReplayRoundTrip(t *testing.T) {
	for _, r := range []Replay{
		{},
		{From: "orders.new.dlq", At: firstSeen, Count: 1},
		{From: "orders.new.parked", At: firstSeen},
		{Count: 7},
	} {
		h := transport.Table{}
		r.Write(h)
		if got := ReadReplay(h); !reflect.DeepEqual(got, r) {
			t.Errorf("ReadReplay(Write(%+v)) = %+v", r, got)
		}
	}
}

// Replay headers are application headers: they survive an envelope's
// read and write.
func TestReplayHeadersAreApplicationHeaders(t *testing.T) {
	e := Envelope{Headers: transport.Table{}}.Complete("orders.new", firstSeen)
	r := Replay{From: "orders.new.dlq", At: firstSeen, Count: 1}
	r.Write(e.Headers)
	var m transport.Message
	if err := e.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := ReadReplay(ReadEnvelope(m).Headers); !reflect.DeepEqual(got, r) {
		t.Errorf("ReadReplay = %+v, want %+v", got, r)
	}
}
