package acemq

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// firstSeen is 2026-02-03T04:05:06.789Z, the contract's example instant.
var firstSeen = time.Date(2026, 2, 3, 4, 5, 6, 789_000_000, time.UTC)

const firstSeenMillis = int64(1770091506789)

func TestHeaderNames(t *testing.T) {
	// CONTRACT.md section 6, verbatim.
	for got, want := range map[string]string{
		contract.HeaderID:             "x-acemq-id",
		contract.HeaderType:           "x-acemq-type",
		contract.HeaderVersion:        "x-acemq-version",
		contract.HeaderCorrelation:    "x-acemq-correlation",
		contract.HeaderCausation:      "x-acemq-causation",
		contract.HeaderAttempt:        "x-acemq-attempt",
		contract.HeaderFirstSeen:      "x-acemq-first-seen",
		contract.HeaderOrigin:         "x-acemq-origin",
		contract.HeaderError:          "x-acemq-error",
		contract.HeaderClaim:          "x-acemq-claim",
		contract.HeaderReplayedFrom:   "acemq-replayed-from",
		contract.HeaderReplayedAt:     "acemq-replayed-at",
		contract.HeaderReplayCount:    "acemq-replay-count",
		contract.HeaderTraceParent:    "traceparent",
		contract.HeaderTraceState:     "tracestate",
		contract.ReservedHeaderPrefix: "x-acemq-",
	} {
		if got != want {
			t.Errorf("header constant = %q, want %q", got, want)
		}
	}
	if firstSeen.UnixMilli() != firstSeenMillis {
		t.Fatalf("test fixture: %v is %d ms", firstSeen, firstSeen.UnixMilli())
	}
}

func TestReadEnvelopeDefaults(t *testing.T) {
	for name, m := range map[string]transport.Message{
		"nil headers":   {},
		"empty headers": {Headers: transport.Table{}},
		"all empty strings": {Headers: transport.Table{
			contract.HeaderID: "", contract.HeaderType: "", contract.HeaderVersion: "", contract.HeaderCorrelation: "",
			contract.HeaderCausation: "", contract.HeaderAttempt: "", contract.HeaderFirstSeen: "",
			contract.HeaderOrigin: "", contract.HeaderError: "", contract.HeaderClaim: "",
		}},
		"all nil": {Headers: transport.Table{
			contract.HeaderID: nil, contract.HeaderType: nil, contract.HeaderVersion: nil, contract.HeaderCorrelation: nil,
			contract.HeaderCausation: nil, contract.HeaderAttempt: nil, contract.HeaderFirstSeen: nil,
			contract.HeaderOrigin: nil, contract.HeaderError: nil, contract.HeaderClaim: nil,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			want := Envelope{Type: "message", Version: 1, Attempt: 1, Headers: transport.Table{}}
			if got := ReadEnvelope(m); !reflect.DeepEqual(got, want) {
				t.Errorf("ReadEnvelope = %+v, want %+v", got, want)
			}
		})
	}
}

func TestReadEnvelopeIntegers(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want int // 1 is also the default
	}{
		{"int", int(7), 7},
		{"int8", int8(7), 7},
		{"int16", int16(7), 7},
		{"int32", int32(7), 7},
		{"int64", int64(7), 7},
		{"uint", uint(7), 7},
		{"uint8", uint8(7), 7},
		{"uint16", uint16(7), 7},
		{"uint32", uint32(7), 7},
		{"uint64", uint64(7), 7},
		{"integral float32", float32(7), 7},
		{"integral float64", float64(7), 7},
		{"numeric string", "7", 7},
		{"numeric string with spaces", "  7 \t\n", 7},
		{"numeric string with plus", "+7", 7},
		{"numeric []byte", []byte(" 7 "), 7},
		{"largest int64", int64(math.MaxInt64), math.MaxInt64},
		{"largest int8", int8(math.MaxInt8), math.MaxInt8},
		{"largest uint32", uint32(math.MaxUint32), math.MaxUint32},

		{"zero", int64(0), 1},
		{"negative", int64(-3), 1},
		{"negative int8", int8(-1), 1},
		{"negative string", "-3", 1},
		{"non-integral float", 2.5, 1},
		{"non-integral float32", float32(2.5), 1},
		{"NaN", math.NaN(), 1},
		{"+Inf", math.Inf(1), 1},
		{"float beyond int64", 1e19, 1},
		{"uint64 beyond int64", uint64(math.MaxUint64), 1},
		{"string beyond int64", "99999999999999999999", 1},
		{"decimal string", "2.0", 1},
		{"hex string", "0x7", 1},
		{"text", "seven", 1},
		{"empty string", "", 1},
		{"spaces only", "   ", 1},
		{"invalid UTF-8", "7\xff", 1},
		{"bool", true, 1},
		{"nil", nil, 1},
		{"nested table", transport.Table{"a": int64(7)}, 1},
		{"array", []any{int64(7)}, 1},
		{"time", firstSeen, 1},
	}
	for _, header := range []string{contract.HeaderAttempt, contract.HeaderVersion} {
		for _, tt := range tests {
			t.Run(header+"/"+tt.name, func(t *testing.T) {
				e := ReadEnvelope(transport.Message{Headers: transport.Table{header: tt.in}})
				got := e.Attempt
				if header == contract.HeaderVersion {
					got = e.Version
				}
				if got != tt.want {
					t.Errorf("%s %#v read as %d, want %d", header, tt.in, got, tt.want)
				}
			})
		}
	}
}

func TestReadEnvelopeStrings(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string // "" is absent: the header's default
	}{
		{"string", "orders.v2", "orders.v2"},
		{"[]byte", []byte("orders.v2"), "orders.v2"},
		{"unicode", "commande-réservée", "commande-réservée"},
		{"kept as is, spaces and all", " a b ", " a b "},
		{"empty string", "", ""},
		{"empty []byte", []byte{}, ""},
		{"invalid UTF-8 string", "orders\xff", ""},
		{"invalid UTF-8 []byte", []byte{'o', 0xc3}, ""},
		{"integer", int64(5), ""},
		{"bool", true, ""},
		{"nil", nil, ""},
		{"nested table", transport.Table{"a": "b"}, ""},
	}
	fields := map[string]func(Envelope) string{
		contract.HeaderType:      func(e Envelope) string { return e.Type },
		contract.HeaderCausation: func(e Envelope) string { return e.Causation },
		contract.HeaderOrigin:    func(e Envelope) string { return e.Origin },
		contract.HeaderError:     func(e Envelope) string { return e.Error },
		contract.HeaderClaim:     func(e Envelope) string { return e.Claim },
	}
	// A missing type is "message" (CONTRACT.md section 6): a message alone
	// has no routing key to default to.
	absent := map[string]string{contract.HeaderType: "message"}
	for header, field := range fields {
		for _, tt := range tests {
			t.Run(header+"/"+tt.name, func(t *testing.T) {
				want := tt.want
				if want == "" {
					want = absent[header]
				}
				e := ReadEnvelope(transport.Message{Headers: transport.Table{header: tt.in}})
				if got := field(e); got != want {
					t.Errorf("%s %#v read as %q, want %q", header, tt.in, got, want)
				}
			})
		}
	}
}

func TestReadEnvelopeIDAndCorrelation(t *testing.T) {
	tests := []struct {
		name                  string
		headers               transport.Table
		messageID             string
		wantID, wantCorrelate string
	}{
		{"header", transport.Table{contract.HeaderID: "a"}, "", "a", "a"},
		{"header as []byte", transport.Table{contract.HeaderID: []byte("a")}, "", "a", "a"},
		{"header wins over message-id", transport.Table{contract.HeaderID: "a"}, "m", "a", "a"},
		{"message-id fallback", nil, "m", "m", "m"},
		{"empty header falls back", transport.Table{contract.HeaderID: ""}, "m", "m", "m"},
		{"blank header falls back", transport.Table{contract.HeaderID: "  "}, "m", "m", "m"},
		{"unreadable header falls back", transport.Table{contract.HeaderID: int64(1)}, "m", "m", "m"},
		{"invalid UTF-8 header falls back", transport.Table{contract.HeaderID: "a\xff"}, "m", "m", "m"},
		{"invalid UTF-8 message-id", nil, "m\xff", "", ""},
		{"blank message-id", nil, " ", "", ""},
		{"no id at all", nil, "", "", ""},
		{"correlation kept", transport.Table{contract.HeaderID: "a", contract.HeaderCorrelation: "c"}, "", "a", "c"},
		{"empty correlation defaults", transport.Table{contract.HeaderID: "a", contract.HeaderCorrelation: ""}, "", "a", "a"},
		{"unreadable correlation defaults", transport.Table{contract.HeaderID: "a", contract.HeaderCorrelation: 3.5}, "", "a", "a"},
		{"correlation defaults to message-id", transport.Table{contract.HeaderCorrelation: []byte{}}, "m", "m", "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ReadEnvelope(transport.Message{Headers: tt.headers, MessageID: tt.messageID})
			if e.ID != tt.wantID || e.Correlation != tt.wantCorrelate {
				t.Errorf("ID, Correlation = %q, %q, want %q, %q", e.ID, e.Correlation, tt.wantID, tt.wantCorrelate)
			}
		})
	}
}

func TestReadEnvelopeFirstSeen(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want time.Time // zero is unknown
	}{
		{"int64 ms", firstSeenMillis, firstSeen},
		{"uint64 ms", uint64(firstSeenMillis), firstSeen},
		{"float ms", float64(firstSeenMillis), firstSeen},
		{"numeric string", " 1770091506789 ", firstSeen},
		{"numeric []byte", []byte("1770091506789"), firstSeen},
		{"AMQP timestamp", firstSeen.Add(123 * time.Microsecond).In(time.FixedZone("CET", 3600)), firstSeen},
		{"1 ms", int64(1), time.UnixMilli(1).UTC()},
		{"zero", int64(0), time.Time{}},
		{"negative", int64(-1), time.Time{}},
		{"timestamp before 1970", time.Unix(-10, 0), time.Time{}},
		{"zero timestamp", time.Time{}, time.Time{}},
		{"RFC 3339 is not epoch ms", "2026-02-03T04:05:06.789Z", time.Time{}},
		{"non-integral float", 1770091506789.5, time.Time{}},
		{"empty", "", time.Time{}},
		{"garbage", "yesterday", time.Time{}},
		{"missing", nil, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ReadEnvelope(transport.Message{Headers: transport.Table{contract.HeaderFirstSeen: tt.in}})
			if !reflect.DeepEqual(e.FirstSeen, tt.want) {
				t.Errorf("first-seen %#v read as %v, want %v", tt.in, e.FirstSeen, tt.want)
			}
		})
	}
}

func TestReadEnvelopeProperties(t *testing.T) {
	e := ReadEnvelope(transport.Message{ContentType: "application/json", ReplyTo: "amq.rabbitmq.reply-to"})
	if e.ContentType != "application/json" || e.ReplyTo != "amq.rabbitmq.reply-to" {
		t.Errorf("ContentType, ReplyTo = %q, %q", e.ContentType, e.ReplyTo)
	}
	e = ReadEnvelope(transport.Message{ContentType: "text/plain\xff", ReplyTo: "q\xff"})
	if e.ContentType != "" || e.ReplyTo != "" {
		t.Errorf("invalid UTF-8 properties read as %q, %q, want empty", e.ContentType, e.ReplyTo)
	}
}

func TestReadEnvelopeStripsReservedHeaders(t *testing.T) {
	nested := transport.Table{"x-acemq-id": "inner", "deep": transport.Table{"k": []any{int64(1)}}}
	m := transport.Message{Headers: transport.Table{
		contract.HeaderID:           "a",
		contract.HeaderAttempt:      int64(2),
		"x-acemq-unknown":           "future header",
		"x-acemq-":                  "bare prefix",
		"X-ACEMQ-ID":                "shouted",
		"X-AceMQ-Attempt":           int32(9),
		"x-AcEmQ-whatever":          true,
		contract.HeaderReplayedFrom: "orders.dlq",
		contract.HeaderReplayCount:  int64(1),
		contract.HeaderTraceParent:  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		contract.HeaderTraceState:   "congo=t61rcWkgMzE",
		"x-acemq":                   "no dash: not the prefix",
		"x-acem-id":                 "not the prefix",
		"xx-acemq-id":               "prefix not at the start",
		"tenant":                    "acme",
		"nested":                    nested,
		"x-death":                   []any{transport.Table{"count": int64(1)}},
		"":                          "empty key",
		"x-acemq-\xff":              "invalid UTF-8 key, reserved",
		"\xffx-acemq-":              "invalid UTF-8 key, not reserved",
		"x-acemq-attempt-no":        int64(4),
	}}
	want := transport.Table{
		contract.HeaderReplayedFrom: "orders.dlq",
		contract.HeaderReplayCount:  int64(1),
		contract.HeaderTraceParent:  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		contract.HeaderTraceState:   "congo=t61rcWkgMzE",
		"x-acemq":                   "no dash: not the prefix",
		"x-acem-id":                 "not the prefix",
		"xx-acemq-id":               "prefix not at the start",
		"tenant":                    "acme",
		"nested":                    nested,
		"x-death":                   []any{transport.Table{"count": int64(1)}},
		"":                          "empty key",
		"\xffx-acemq-":              "invalid UTF-8 key, not reserved",
	}
	e := ReadEnvelope(m)
	if !reflect.DeepEqual(e.Headers, want) {
		t.Errorf("Headers = %v\nwant      %v", transport.FormatTable(e.Headers), transport.FormatTable(want))
	}
	// Exact names carry the envelope; case variants are only stripped.
	if e.ID != "a" || e.Attempt != 2 {
		t.Errorf("ID, Attempt = %q, %d, want a, 2", e.ID, e.Attempt)
	}
	// Headers is the handler's own table.
	e.Headers["tenant"] = "changed"
	if m.Headers["tenant"] != "acme" {
		t.Error("ReadEnvelope shares its Headers table with the message")
	}
}

func TestReadEnvelopeHugeTable(t *testing.T) {
	h := transport.Table{contract.HeaderAttempt: "3"}
	deep := transport.Table{}
	for i := range 100_000 {
		h[fmt.Sprintf("k%d", i)] = int64(i)
		h[fmt.Sprintf("x-acemq-k%d", i)] = int64(i)
		deep = transport.Table{"d": deep}
	}
	h["deep"] = deep
	e := ReadEnvelope(transport.Message{Headers: h})
	if e.Attempt != 3 || len(e.Headers) != 100_001 {
		t.Errorf("Attempt = %d, %d headers; want 3, 100001", e.Attempt, len(e.Headers))
	}
}

func TestAge(t *testing.T) {
	now := firstSeen.Add(90 * time.Second)
	tests := []struct {
		name      string
		firstSeen time.Time
		want      time.Duration
	}{
		{"unknown", time.Time{}, UnknownAge},
		{"past", firstSeen, 90 * time.Second},
		{"now", now, 0},
		{"future (clock skew)", now.Add(time.Minute), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Envelope{FirstSeen: tt.firstSeen}).Age(now); got != tt.want {
				t.Errorf("Age = %v, want %v", got, tt.want)
			}
		})
	}
	if UnknownAge >= 0 {
		t.Error("UnknownAge must be negative")
	}
}

func TestComplete(t *testing.T) {
	now := firstSeen.Add(456 * time.Microsecond).In(time.FixedZone("CET", 3600))
	e := Envelope{}.Complete("orders.new", now)
	id, err := uuid.Parse(e.ID)
	if err != nil || id.Version() != 4 || id.Variant() != uuid.RFC4122 || e.ID != id.String() {
		t.Errorf("ID %q is not a canonical UUID v4 (%v)", e.ID, err)
	}
	want := Envelope{
		ID: e.ID, Type: "orders.new", Version: 1, Correlation: e.ID, Attempt: 1,
		FirstSeen: firstSeen, Origin: defaultOrigin(),
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("Complete = %+v\nwant       %+v", e, want)
	}
	if other := (Envelope{}).Complete("orders.new", now); other.ID == e.ID {
		t.Error("two envelopes got the same ID")
	}
	if got := (Envelope{}).Complete("", now).Type; got != "message" {
		t.Errorf("Type with no routing key = %q, want message", got)
	}

	set := Envelope{
		ID: "a", Type: "order.created", Version: 3, Correlation: "c", Causation: "z",
		Attempt: 4, FirstSeen: firstSeen.Add(-time.Hour), Origin: "billing@host-1",
		Error: "e", Claim: "s3://bucket/key", ContentType: "application/json", ReplyTo: "r",
		Headers: transport.Table{"tenant": "acme"},
	}
	if got := set.Complete("orders.new", now); !reflect.DeepEqual(got, set) {
		t.Errorf("Complete changed set values: %+v", got)
	}

	for name, tt := range map[string]struct{ in, want time.Time }{
		"sub-millisecond first-seen is cut": {firstSeen.Add(999 * time.Microsecond), firstSeen},
		"first-seen before 1970 is unknown": {time.Unix(-1, 0), firstSeen},
	} {
		if got := (Envelope{FirstSeen: tt.in}).Complete("q", now).FirstSeen; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: FirstSeen = %v, want %v", name, got, tt.want)
		}
	}
}

func TestDefaultOrigin(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	if got := defaultOrigin(); got != "acemq@"+host {
		t.Errorf("defaultOrigin = %q, want acemq@%s", got, host)
	}
}

func fullEnvelope() Envelope {
	return Envelope{
		ID:          "7a0d1a8e-4c1b-4c53-9f43-2d0c3b8f5e11",
		Type:        "order.created",
		Version:     2,
		Correlation: "corr-1",
		Causation:   "cause-1",
		Attempt:     3,
		FirstSeen:   firstSeen,
		Origin:      "billing@host-1",
		Error:       "exhausted 3 attempts: boom",
		Claim:       "s3://bucket/key",
		ContentType: "application/json",
		ReplyTo:     "replies",
		Headers:     transport.Table{"tenant": "acme", contract.HeaderTraceParent: "00-abc-def-01", "n": int32(5)},
	}
}

func TestWrite(t *testing.T) {
	m := transport.Message{
		Headers:   transport.Table{"stale": "dropped", contract.HeaderError: "stale"},
		MessageID: "old",
		Body:      []byte("{}"),
	}
	e := fullEnvelope()
	if err := e.Write(&m); err != nil {
		t.Fatal(err)
	}
	want := transport.Message{
		Headers: transport.Table{
			"tenant":                   "acme",
			contract.HeaderTraceParent: "00-abc-def-01",
			"n":                        int32(5),
			"x-acemq-id":               "7a0d1a8e-4c1b-4c53-9f43-2d0c3b8f5e11",
			"x-acemq-type":             "order.created",
			"x-acemq-version":          int64(2),
			"x-acemq-correlation":      "corr-1",
			"x-acemq-causation":        "cause-1",
			"x-acemq-attempt":          int64(3),
			"x-acemq-first-seen":       int64(1770091506789),
			"x-acemq-origin":           "billing@host-1",
			"x-acemq-error":            "exhausted 3 attempts: boom",
			"x-acemq-claim":            "s3://bucket/key",
		},
		MessageID:   "7a0d1a8e-4c1b-4c53-9f43-2d0c3b8f5e11",
		ContentType: "application/json",
		ReplyTo:     "replies",
		Persistent:  true,
		Body:        []byte("{}"),
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Write gave %+v\nwant       %+v", m, want)
	}
	e.Headers["tenant"] = "changed"
	if m.Headers["tenant"] != "acme" {
		t.Error("Write shares the envelope's Headers table with the message")
	}
}

func TestWriteOmitsAbsentValues(t *testing.T) {
	e := Envelope{ID: "a", Version: 1, Attempt: 1}
	var m transport.Message
	if err := e.Write(&m); err != nil {
		t.Fatal(err)
	}
	want := transport.Table{contract.HeaderID: "a", contract.HeaderVersion: int64(1), contract.HeaderAttempt: int64(1)}
	if !reflect.DeepEqual(m.Headers, want) {
		t.Errorf("Headers = %v, want %v", transport.FormatTable(m.Headers), transport.FormatTable(want))
	}
}

func TestWriteOnlyStringsAndInt64(t *testing.T) {
	e := fullEnvelope().Complete("orders.new", firstSeen)
	var m transport.Message
	if err := e.Write(&m); err != nil {
		t.Fatal(err)
	}
	for k, v := range m.Headers {
		if !isReserved(k) {
			continue
		}
		switch v := v.(type) {
		case string:
			if v == "" {
				t.Errorf("%s written as an empty string", k)
			}
		case int64:
		default:
			t.Errorf("%s written as %T, want string or int64", k, v)
		}
	}
}

func TestWriteRefusesReservedHeaders(t *testing.T) {
	for _, name := range []string{"x-acemq-id", "x-acemq-attempt", "x-acemq-unknown", "X-ACEMQ-ID", "X-AceMQ-Claim", "x-acemq-"} {
		t.Run(name, func(t *testing.T) {
			e := fullEnvelope()
			e.Headers[name] = "v"
			m := transport.Message{MessageID: "untouched"}
			err := e.Write(&m)
			if !errors.Is(err, ErrReservedHeader) {
				t.Fatalf("Write = %v, want ErrReservedHeader", err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
				t.Errorf("error %q does not name %q", err, name)
			}
			if m.MessageID != "untouched" || m.Headers != nil {
				t.Errorf("a refused Write changed the message: %+v", m)
			}
		})
	}
}

func TestWriteRefusesInvalidEnvelopes(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Envelope)
		field string
	}{
		{"empty ID", func(e *Envelope) { e.ID = "" }, "ID"},
		{"blank ID", func(e *Envelope) { e.ID = " \t" }, "ID"},
		{"zero attempt", func(e *Envelope) { e.Attempt = 0 }, "Attempt"},
		{"negative attempt", func(e *Envelope) { e.Attempt = -1 }, "Attempt"},
		{"zero version", func(e *Envelope) { e.Version = 0 }, "Version"},
		{"invalid UTF-8 type", func(e *Envelope) { e.Type = "\xff" }, "Type"},
		{"invalid UTF-8 error", func(e *Envelope) { e.Error = "boom\xc3" }, "Error"},
		{"invalid UTF-8 reply-to", func(e *Envelope) { e.ReplyTo = "\xff" }, "ReplyTo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := fullEnvelope()
			tt.edit(&e)
			var m transport.Message
			err := e.Write(&m)
			if !errors.Is(err, ErrInvalidEnvelope) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("Write = %v, want ErrInvalidEnvelope naming %s", err, tt.field)
			}
			if m.Headers != nil {
				t.Error("a refused Write changed the message")
			}
		})
	}
	if err := fullEnvelope().Write(nil); err == nil {
		t.Error("Write(nil) succeeded")
	}
}

func TestRoundTrip(t *testing.T) {
	now := firstSeen.Add(time.Minute)
	tests := map[string]Envelope{
		"full":               fullEnvelope(),
		"completed zero":     Envelope{Headers: transport.Table{}}.Complete("orders.new", now),
		"no routing key":     Envelope{Headers: transport.Table{}}.Complete("", now),
		"unicode":            Envelope{Type: "commande.créée", Claim: "☃", Headers: transport.Table{"clé": "été"}}.Complete("q", now),
		"with replay header": Envelope{Headers: transport.Table{contract.HeaderReplayedFrom: "orders.new.dlq", contract.HeaderReplayCount: int64(2)}}.Complete("q", now),
	}
	for name, e := range tests {
		t.Run(name, func(t *testing.T) {
			var m transport.Message
			if err := e.Write(&m); err != nil {
				t.Fatal(err)
			}
			if got := ReadEnvelope(m); !reflect.DeepEqual(got, e) {
				t.Errorf("ReadEnvelope(Write(e)) = %+v\nwant                     %+v", got, e)
			}
		})
	}
}

// A message from another library, read leniently, is written back in the
// canonical form and then reads the same.
func TestRewriteIsCanonical(t *testing.T) {
	in := transport.Message{
		MessageID: "m-1",
		Headers: transport.Table{
			contract.HeaderType:      []byte("order.created"),
			contract.HeaderVersion:   int32(2),
			contract.HeaderAttempt:   " 3 ",
			contract.HeaderFirstSeen: float64(firstSeenMillis),
			contract.HeaderCausation: "",
			"X-AceMQ-Debug":          "stripped",
			"tenant":                 "acme",
		},
	}
	e := ReadEnvelope(in).Complete("orders.new", firstSeen.Add(time.Hour))
	var out transport.Message
	if err := e.Write(&out); err != nil {
		t.Fatal(err)
	}
	want := transport.Table{
		contract.HeaderID:          "m-1",
		contract.HeaderType:        "order.created",
		contract.HeaderVersion:     int64(2),
		contract.HeaderCorrelation: "m-1",
		contract.HeaderAttempt:     int64(3),
		contract.HeaderFirstSeen:   firstSeenMillis,
		contract.HeaderOrigin:      defaultOrigin(),
		"tenant":                   "acme",
	}
	if !reflect.DeepEqual(out.Headers, want) {
		t.Errorf("Headers = %v\nwant      %v", transport.FormatTable(out.Headers), transport.FormatTable(want))
	}
	if again := ReadEnvelope(out); !reflect.DeepEqual(again, e) {
		t.Errorf("re-read %+v\nwant    %+v", again, e)
	}
}

// fuzzKeys are the names a fuzzed header is most likely to get.
var fuzzKeys = []string{
	contract.HeaderID, contract.HeaderType, contract.HeaderVersion, contract.HeaderCorrelation, contract.HeaderCausation,
	contract.HeaderAttempt, contract.HeaderFirstSeen, contract.HeaderOrigin, contract.HeaderError, contract.HeaderClaim,
	contract.HeaderReplayedFrom, contract.HeaderReplayedAt, contract.HeaderReplayCount, contract.HeaderTraceParent,
	contract.HeaderRoute, contract.HeaderRoutePosition, contract.HeaderRouteID,
	"X-ACEMQ-ID", "x-acemq-unknown", "tenant",
}

// fuzzBytes hands out the fuzzer's bytes; when they run out it gives zeros.
type fuzzBytes []byte

func (b *fuzzBytes) next(n int) []byte {
	n = min(n, len(*b))
	out := (*b)[:n]
	*b = (*b)[n:]
	return out
}

func (b *fuzzBytes) byte() byte {
	if v := b.next(1); len(v) == 1 {
		return v[0]
	}
	return 0
}

func (b *fuzzBytes) uint64() uint64 {
	var n uint64
	for i, v := range b.next(8) {
		n |= uint64(v) << (8 * i)
	}
	return n
}

func (b *fuzzBytes) string() string { return string(b.next(int(b.byte() % 32))) }

// value builds a header value of any type AMQP can carry.
func (b *fuzzBytes) value(depth int) any {
	n := b.uint64()
	switch b.byte() % 20 {
	case 0:
		return b.string()
	case 1:
		return []byte(b.string())
	case 2:
		return int8(n)
	case 3:
		return int16(n)
	case 4:
		return int32(n)
	case 5:
		return int64(n)
	case 6:
		return uint8(n)
	case 7:
		return uint16(n)
	case 8:
		return uint32(n)
	case 9:
		return n
	case 10:
		return math.Float64frombits(n)
	case 11:
		return float32(int32(n))
	case 12:
		return float64(int64(n) % 1e15)
	case 13:
		return fmt.Sprintf(" %d ", int64(n))
	case 14:
		return n&1 == 1
	case 15:
		return time.UnixMilli(int64(n))
	case 16:
		if depth < 3 {
			return transport.Table{b.string(): b.value(depth + 1)}
		}
	case 17:
		if depth < 3 {
			return []any{b.value(depth + 1), b.value(depth + 1)}
		}
	case 18:
		return int(int64(n))
	}
	return nil
}

func fuzzMessage(data []byte, messageID string) transport.Message {
	b := fuzzBytes(data)
	h := transport.Table{}
	for len(b) > 0 && len(h) < 64 {
		k := b.byte()
		key := fuzzKeys[int(k)%len(fuzzKeys)]
		if k >= 128 {
			key = b.string()
		}
		h[key] = b.value(0)
	}
	return transport.Message{Headers: h, MessageID: messageID, ContentType: messageID, ReplyTo: messageID}
}

func FuzzReadEnvelope(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte{0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0, 0, 0}, "m-1")
	f.Add([]byte{5, 3, 0, 0, 0, 0, 0, 0, 0, 13}, "")
	f.Add([]byte{6, 0x65, 0x20, 0x0e, 0x2c, 0x9c, 0x01, 0, 0, 12}, "")
	f.Add([]byte{200, 3, 'x', '-', 'a', 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 16, 1, 'k'}, "\xff")
	f.Fuzz(func(t *testing.T, data []byte, messageID string) {
		m := fuzzMessage(data, messageID)
		e := ReadEnvelope(m)
		if e.Attempt < 1 || e.Version < 1 {
			t.Errorf("Attempt %d, Version %d", e.Attempt, e.Version)
		}
		if e.Headers == nil {
			t.Error("Headers is nil")
		}
		for k := range e.Headers {
			if strings.HasPrefix(strings.ToLower(k), contract.ReservedHeaderPrefix) {
				t.Errorf("reserved header %q in Headers", k)
			}
		}
		for _, s := range []string{e.ID, e.Type, e.Correlation, e.Causation, e.Origin, e.Error, e.Claim, e.ContentType, e.ReplyTo} {
			if !utf8.ValidString(s) {
				t.Errorf("invalid UTF-8 %q", s)
			}
		}
		if e.Correlation == "" && e.ID != "" {
			t.Error("Correlation did not default to ID")
		}
		if e.Route.Position < -1 || !utf8.ValidString(e.Route.ID) {
			t.Errorf("Route %#v", e.Route)
		}
		for _, s := range e.Route.Steps {
			if !utf8.ValidString(s) {
				t.Errorf("invalid UTF-8 step %q", s)
			}
		}
		if !e.FirstSeen.IsZero() && e.FirstSeen.UnixMilli() <= 0 {
			t.Errorf("FirstSeen %v is not after 1970", e.FirstSeen)
		}
		if age := e.Age(time.UnixMilli(1 << 50)); age < 0 && age != UnknownAge {
			t.Errorf("Age %v", age)
		}

		// Whatever was read can be republished, and reads back the same.
		c := e.Complete("q", firstSeen)
		var out transport.Message
		if err := c.Write(&out); err != nil {
			t.Fatalf("Write of a read envelope: %v", err)
		}
		again := ReadEnvelope(out)
		// Header values may hold NaN, which is not equal to itself; Write
		// leaves the route out.
		again.Headers, c.Headers, c.Route = nil, nil, Route{}
		if !reflect.DeepEqual(again, c) {
			t.Errorf("re-read %+v\nwant    %+v", again, c)
		}
	})
}

// A missing type reads as the routing key, then "message" (CONTRACT.md
// section 6), in the consumer's Envelope, its observer's DeliveryInfo and
// for a message read alone (package deadletter, acemq dlq), which has no
// routing key.
func TestReadTypeDefault(t *testing.T) {
	tests := []struct {
		name       string
		typ        any // the x-acemq-type header; nil leaves it out
		routingKey string
		want       string // read from the delivery
		wantAlone  string // read from the message alone
	}{
		{"no header", nil, "order.placed", "order.placed", "message"},
		{"no header, no routing key", nil, "", "message", "message"},
		{"empty header", "", "order.placed", "order.placed", "message"},
		{"header not UTF-8", "order\xff", "order.placed", "order.placed", "message"},
		{"header not a string", int64(3), "order.placed", "order.placed", "message"},
		{"routing key not UTF-8", nil, "order\xff", "message", "message"},
		{"header wins", "order.created", "order.placed", "order.created", "order.created"},
		{"header as []byte", []byte("order.created"), "", "order.created", "order.created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := transport.Table{}
			if tt.typ != nil {
				h[contract.HeaderType] = tt.typ
			}
			d := transport.Delivery{Message: transport.Message{Headers: h, Body: []byte("{}")}, RoutingKey: tt.routingKey}
			if got := readDelivery(d).Type; got != tt.want {
				t.Errorf("readDelivery Type = %q, want %q", got, tt.want)
			}
			if got := ReadEnvelope(d.Message).Type; got != tt.wantAlone {
				t.Errorf("ReadEnvelope Type = %q, want %q", got, tt.wantAlone)
			}
			var seen Envelope
			in, _ := handleDelivery(context.Background(), "orders.new", JSON, nil, func(_ context.Context, m Message[map[string]any]) Decision {
				seen = m.Envelope
				return Accept()
			}, d, firstSeen)
			if in.DecodeErr != nil || seen.Type != tt.want {
				t.Errorf("the handler saw Type %q (decode error %v), want %q", seen.Type, in.DecodeErr, tt.want)
			}
			c := &Consumer{queue: "orders.new", observer: NopObserver{}, handlerCtx: context.Background()}
			if info := c.start(d).info; info.Type != tt.want {
				t.Errorf("DeliveryInfo.Type = %q, want %q", info.Type, tt.want)
			}
		})
	}
}

// A message without an id (no x-acemq-id, or a blank one, and no AMQP
// message-id) reads as ID "", the same for the consumer's handler, its
// observer and ReadEnvelope (what package deadletter reads): no id is made
// up, since a made-up id would change with every read.
func TestReadNoID(t *testing.T) {
	for name, m := range map[string]transport.Message{
		"no header":                      {},
		"empty header":                   {Headers: transport.Table{contract.HeaderID: ""}},
		"blank header, blank message-id": {Headers: transport.Table{contract.HeaderID: " "}, MessageID: "\t"},
		"header not UTF-8":               {Headers: transport.Table{contract.HeaderID: "\xff"}},
	} {
		t.Run(name, func(t *testing.T) {
			m.Body = []byte("{}")
			d := transport.Delivery{Message: m, RoutingKey: "orders.new"}
			var seen []string
			for range 2 {
				handleDelivery(context.Background(), "orders.new", JSON, nil, func(_ context.Context, m Message[map[string]any]) Decision {
					seen = append(seen, m.Envelope.ID, m.Envelope.Correlation)
					return Accept()
				}, d, firstSeen)
			}
			c := &Consumer{queue: "orders.new", observer: NopObserver{}, handlerCtx: context.Background()}
			seen = append(seen, ReadEnvelope(m).ID, ReadEnvelope(m).Correlation, c.start(d).info.MessageID)
			for i, id := range seen {
				if id != "" {
					t.Errorf("read %d: id %q, want \"\"", i, id)
				}
			}
		})
	}
}

// The observer's DeliveryInfo names a message by the id its handler sees.
func TestDeliveryInfoID(t *testing.T) {
	c := &Consumer{queue: "orders.new", observer: NopObserver{}, handlerCtx: context.Background()}
	for _, tt := range []struct {
		m    transport.Message
		want string
	}{
		{transport.Message{Headers: transport.Table{contract.HeaderID: "a"}, MessageID: "m"}, "a"},
		{transport.Message{Headers: transport.Table{contract.HeaderID: "  "}, MessageID: "m"}, "m"},
		{transport.Message{MessageID: "m\xff"}, ""},
	} {
		d := transport.Delivery{Message: tt.m}
		if got, env := c.start(d).info.MessageID, readDelivery(d).ID; got != tt.want || env != tt.want {
			t.Errorf("%+v: DeliveryInfo.MessageID %q, Envelope.ID %q, want %q", tt.m, got, env, tt.want)
		}
	}
}

func TestRouteHeaderNames(t *testing.T) {
	// CONTRACT.md section 13, verbatim.
	if contract.HeaderRoute != "x-acemq-route" || contract.HeaderRoutePosition != "x-acemq-route-position" || contract.HeaderRouteID != "x-acemq-route-id" {
		t.Errorf("route headers %q, %q, %q", contract.HeaderRoute, contract.HeaderRoutePosition, contract.HeaderRouteID)
	}
}

// The step-form routing slip (CONTRACT.md section 13) is read into Route,
// leniently (section 6), and stays out of the application headers.
func TestReadRoute(t *testing.T) {
	const run = "5f0c6cbe-6a9b-4a8e-9d8e-1f2a3b4c5d6e"
	tests := []struct {
		name    string
		headers transport.Table
		want    Route
		current string // "" when there is no current step
	}{
		{"none", nil, Route{}, ""},
		{"as Java writes it", transport.Table{contract.HeaderRoute: "validate,enrich,store", contract.HeaderRoutePosition: int32(1), contract.HeaderRouteID: run},
			Route{Steps: []string{"validate", "enrich", "store"}, Position: 1, ID: run}, "enrich"},
		{"longstr as []byte, position as a long", transport.Table{contract.HeaderRoute: []byte("validate,store"), contract.HeaderRoutePosition: int64(0), contract.HeaderRouteID: []byte(run)},
			Route{Steps: []string{"validate", "store"}, ID: run}, "validate"},
		{"one step", transport.Table{contract.HeaderRoute: "store"}, Route{Steps: []string{"store"}}, "store"},
		{"spaces trimmed, empty names kept", transport.Table{contract.HeaderRoute: " a , ,b ", contract.HeaderRoutePosition: "2"},
			Route{Steps: []string{"a", "", "b"}, Position: 2}, "b"},
		{"position as uint8", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: uint8(1)}, Route{Steps: []string{"a", "b"}, Position: 1}, "b"},
		{"position as int16", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int16(1)}, Route{Steps: []string{"a", "b"}, Position: 1}, "b"},
		{"negative position reads as no step", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int32(-1)}, Route{Steps: []string{"a", "b"}, Position: -1}, ""},
		{"unreadable position reads as no step", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: "first"}, Route{Steps: []string{"a", "b"}, Position: -1}, ""},
		{"empty position reads as absent", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: ""}, Route{Steps: []string{"a", "b"}}, "a"},
		{"position past the steps is kept", transport.Table{contract.HeaderRoute: "a,b", contract.HeaderRoutePosition: int32(2)}, Route{Steps: []string{"a", "b"}, Position: 2}, ""},
		{"empty route", transport.Table{contract.HeaderRoute: "", contract.HeaderRouteID: ""}, Route{}, ""},
		{"blank route", transport.Table{contract.HeaderRoute: "  "}, Route{}, ""},
		{"route not UTF-8", transport.Table{contract.HeaderRoute: "a,\xff"}, Route{}, ""},
		{"route not a string", transport.Table{contract.HeaderRoute: []any{"a", "b"}}, Route{}, ""},
		{"id only", transport.Table{contract.HeaderRouteID: run}, Route{ID: run}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := maps.Clone(tt.headers)
			if h == nil {
				h = transport.Table{}
			}
			h["tenant"] = "acme"
			e := ReadEnvelope(transport.Message{Headers: h})
			if !reflect.DeepEqual(e.Route, tt.want) {
				t.Errorf("Route = %#v, want %#v", e.Route, tt.want)
			}
			if got, ok := e.Route.Current(); got != tt.current || ok != (tt.current != "") {
				t.Errorf("Current = %q, %v, want %q", got, ok, tt.current)
			}
			if !reflect.DeepEqual(e.Headers, transport.Table{"tenant": "acme"}) {
				t.Errorf("Headers = %v, want only tenant", transport.FormatTable(e.Headers))
			}
		})
	}
}

// Write leaves the slip out: this library does not write one.
func TestWriteLeavesRouteOut(t *testing.T) {
	e := fullEnvelope()
	e.Route = Route{Steps: []string{"a", "b"}, Position: 1, ID: "r"}
	var m transport.Message
	if err := e.Write(&m); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{contract.HeaderRoute, contract.HeaderRoutePosition, contract.HeaderRouteID} {
		if v, ok := m.Headers[h]; ok {
			t.Errorf("Write wrote %s: %#v", h, v)
		}
	}
}

// Every republish (a retry in the consumer or on a rung, a dead letter, a
// park, a message put back) keeps the slip's headers as they came, so that
// the message goes on along its route.
func TestRepublicationKeepsRoute(t *testing.T) {
	route := transport.Table{contract.HeaderRoute: "validate,enrich,store", contract.HeaderRoutePosition: int32(1), contract.HeaderRouteID: "run-1"}
	for _, s := range []settlement{
		{Outcome: contract.RetriedInConsumer, Target: "orders.new", Attempt: 2},
		{Outcome: contract.RetriedOnRung, Target: "orders.new.retry.40s", Attempt: 2},
		{Outcome: contract.DeadLettered, Target: "orders.new.dlq", Reason: "exhausted 3 attempts: boom"},
		{Outcome: contract.Parked, Target: "orders.new.parked", Reason: "could not be decoded: x"},
		{Outcome: contract.PutBack, Target: "orders.new"},
	} {
		m := transport.Message{Headers: maps.Clone(route), Body: []byte("{}")}
		m.Headers[contract.HeaderID] = "a"
		p := republication(m, s)
		for k, v := range route {
			if got := p.Message.Headers[k]; !reflect.DeepEqual(got, v) {
				t.Errorf("%s: %s republished as %#v, want %#v", s.Outcome, k, got, v)
			}
		}
		if got := ReadEnvelope(p.Message).Route; !reflect.DeepEqual(got, Route{Steps: []string{"validate", "enrich", "store"}, Position: 1, ID: "run-1"}) {
			t.Errorf("%s: the republished message reads Route %#v", s.Outcome, got)
		}
	}
}

// Integers arrive in whatever width the publisher chose: the Go peer writes
// x-acemq-version and x-acemq-attempt as int32 (AMQP I), Java as int or
// long. Each row is an AMQP field type as amqp091-go delivers it (read.go:
// b int8, B uint8, s int16, u uint16, I int32, i uint32, l int64, f and d
// floats, S longstr as string, x bytes as []byte).
func TestReadEnvelopeAMQPIntegerWidths(t *testing.T) {
	tests := []struct {
		field string // the AMQP field type
		in    any
		want  int
	}{
		{"b (short-short int)", int8(3), 3},
		{"b at its largest", int8(math.MaxInt8), math.MaxInt8},
		{"B (short-short uint)", uint8(3), 3},
		{"B at its largest", uint8(math.MaxUint8), math.MaxUint8},
		{"s (short int)", int16(3), 3},
		{"s at its largest", int16(math.MaxInt16), math.MaxInt16},
		{"u (short uint)", uint16(3), 3},
		{"u at its largest", uint16(math.MaxUint16), math.MaxUint16},
		{"I (long int), the Go peer's", int32(3), 3},
		{"I at its largest", int32(math.MaxInt32), math.MaxInt32},
		{"i (long uint)", uint32(3), 3},
		{"i at its largest", uint32(math.MaxUint32), math.MaxUint32},
		{"l (long-long int)", int64(3), 3},
		{"l at its largest", int64(math.MaxInt64), math.MaxInt64},
		{"f (float), integral", float32(3), 3},
		{"d (double), integral", float64(3), 3},
		{"S (longstr), numeric", "3", 3},
		{"S, numeric with spaces", " 3 ", 3},
		{"x (byte array), numeric", []byte("3"), 3},
		{"b negative", int8(-3), 1},
		{"I zero", int32(0), 1},
		{"I negative", int32(math.MinInt32), 1},
		{"S not a number", "three", 1},
	}
	headers := map[string]func(Envelope) int{
		contract.HeaderAttempt: func(e Envelope) int { return e.Attempt },
		contract.HeaderVersion: func(e Envelope) int { return e.Version },
	}
	for header, field := range headers {
		for _, tt := range tests {
			t.Run(header+"/"+tt.field, func(t *testing.T) {
				if got := field(ReadEnvelope(transport.Message{Headers: transport.Table{header: tt.in}})); got != tt.want {
					t.Errorf("%s %T(%v) read as %d, want %d", header, tt.in, tt.in, got, tt.want)
				}
			})
		}
	}
	// The other integers: first-seen (epoch ms, needs 64 bits unless tiny)
	// and the route's position. (The replay count, read by package
	// deadletter: TestReadReplayed there.)
	for _, tt := range tests {
		if tt.want <= 1 {
			continue
		}
		t.Run("others/"+tt.field, func(t *testing.T) {
			h := transport.Table{contract.HeaderFirstSeen: tt.in, contract.HeaderRoutePosition: tt.in}
			e := ReadEnvelope(transport.Message{Headers: h})
			if e.FirstSeen.UnixMilli() != int64(tt.want) || e.Route.Position != tt.want {
				t.Errorf("%T(%v): first-seen %d ms, route position %d, want %d",
					tt.in, tt.in, e.FirstSeen.UnixMilli(), e.Route.Position, tt.want)
			}
		})
	}
}

// The AMQP correlation-id, which request-reply matches by, is written and
// read beside the x-acemq-correlation header, not in its place.
func TestEnvelopeCorrelationIDProperty(t *testing.T) {
	var m transport.Message
	e := Envelope{CorrelationID: "req-1", Correlation: "conv-1"}.Complete("q", time.Now())
	if err := e.Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.CorrelationID != "req-1" || m.Headers[contract.HeaderCorrelation] != "conv-1" {
		t.Fatalf("correlation-id %q, header %v", m.CorrelationID, m.Headers[contract.HeaderCorrelation])
	}
	if got := ReadEnvelope(m); got.CorrelationID != "req-1" || got.Correlation != "conv-1" {
		t.Fatalf("read correlation-id %q, correlation %q", got.CorrelationID, got.Correlation)
	}
}
