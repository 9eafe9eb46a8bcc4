package memory

import (
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
)

// Erlang's ~p, as RabbitMQ 3.10 printed these values in its replies.
func TestErlangTerms(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want string
	}{
		{1.5, "1.5"},
		{1000.0, "1.0e3"},
		{1e21, "1.0e21"},
		{0.001, "0.001"},
		{float32(2.25), "2.25"},
		{100.0, "100.0"},
		{-0.5, "-0.5"},
		{0.0, "0.0"},
		{1e-7, "1.0e-7"},
		{123456.789, "123456.789"},
		{int8(-3), "-3"},
		{true, "true"},
		{nil, "undefined"},
		{time.Unix(1000, 0), "1000"},
		{transport.Table{"a": int64(1)}, `[{<<"a">>,long,1}]`},
		{transport.Table{"c": int64(2), "a": "b"}, `[{<<"a">>,longstr,<<"b">>},{<<"c">>,long,2}]`},
		{[]any{int64(1), "x"}, `[{long,1},{longstr,<<"x">>}]`},
		{[]byte{0, 1}, "<<0,1>>"},
	} {
		if got := erlangTerm(tt.v); got != tt.want {
			t.Errorf("erlangTerm(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
}

func TestSameArg(t *testing.T) {
	for _, tt := range []struct {
		a, b any
		same bool
	}{
		{int64(1000), int32(1000), true},
		{int64(1000), uint16(1000), true},
		{int64(1000), time.Unix(1000, 0), true}, // a timestamp is an integer to RabbitMQ
		{"drop-head", []byte("drop-head"), true},
		{int64(1000), "1000", false},
		{int64(1000), 1000.0, false},
		{float32(1.5), 1.5, true},
		{true, true, true},
		{nil, nil, true},
		{transport.Table{"a": int64(1)}, transport.Table{"a": int64(1)}, true},
		{transport.Table{"a": int64(1)}, transport.Table{"a": int32(1)}, false},
		{[]any{"x"}, []any{"x"}, true},
		{[]any{"x"}, []any{"y"}, false},
	} {
		if got := sameArg(tt.a, tt.b); got != tt.same {
			t.Errorf("sameArg(%#v, %#v) = %v", tt.a, tt.b, got)
		}
	}
}
