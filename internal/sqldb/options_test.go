package sqldb

import (
	"strings"
	"testing"
	"time"
)

type option func(*Options) error

func TestApply(t *testing.T) {
	now := func() time.Time { return time.Time{} }
	o, err := Apply("outbox", Options{Table: "outbox"}, []option{WithTable("orders_outbox", "_pending"), WithClock(now), OwnDB()})
	if err != nil || o.Table != "orders_outbox" || !o.Owned || o.Now == nil {
		t.Fatalf("Apply = %+v, %v; want the table, owned, the clock", o, err)
	}
	for _, c := range []struct {
		opt  option
		want string
	}{
		{WithTable("1st", ""), `outbox: New: WithTable("1st"): use at most 63 letters`},
		{WithTable("a-b", ""), `outbox: New: WithTable("a-b")`},
		{WithTable(strings.Repeat("a", 56), "_pending"), "use at most 55 letters"},
		{WithTable("s.t", ""), `WithTable("s.t")`},
		{WithQualifiedTable("s.t.u"), `outbox: New: WithTable("s.t.u"): use letters, digits and underscores (optionally schema.table)`},
		{WithClock(nil), "outbox: New: WithClock: the clock is nil"},
		{nil, "outbox: New: an option is nil"},
	} {
		if _, err := Apply("outbox", Options{}, []option{c.opt}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply: %v, want an error with %q", err, c.want)
		}
	}
	if o, err := Apply("schema registry", Options{}, []option{WithQualifiedTable("registry.schemas")}); err != nil || o.Table != "registry.schemas" {
		t.Errorf("a qualified table: %+v, %v", o, err)
	}
}
