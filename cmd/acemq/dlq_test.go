package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/internal/brokerversion"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// deadLetters puts n dead letters of source in source.dlq, declaring
// source, source.dlq and source.parked on the broker at url, through the
// connection it returns.
func deadLetters(t *testing.T, url, source string, n int) *acemq.Conn {
	t.Helper()
	ctx := t.Context()
	conn, err := connect(ctx, url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	tr := conn.Transport()
	for _, q := range []string{source, contract.DeadLetterQueue(source), contract.ParkedQueue(source)} {
		if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), q) })
	}
	first := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC).UnixMilli()
	for i := range n {
		reason := "exhausted 5 attempts: payment declined"
		if i%3 == 0 {
			reason = "exhausted 5 attempts: timeout calling stock"
		}
		id := fmt.Sprintf("id-%03d", i)
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: contract.DeadLetterQueue(source), Mandatory: true, Message: transport.Message{
			Headers: transport.Table{contract.HeaderID: id, contract.HeaderType: "order.created", contract.HeaderAttempt: int64(5),
				contract.HeaderFirstSeen: first, contract.HeaderError: reason, "tenant": "acme"},
			ContentType: "application/json", MessageID: id, Persistent: true, Body: fmt.Appendf(nil, `{"n":%d}`, i),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

func depthOf(t *testing.T, tr transport.Transport, queue string) int {
	t.Helper()
	s, err := tr.InspectQueue(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	return s.Messages
}

func wantRun(t *testing.T, r result, code int, stdout string) {
	t.Helper()
	if r.code != code || r.stdout != stdout {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s", r.code, r.stdout, r.stderr, code, stdout)
	}
}

// Every dlq verb on memory://, as an operator runs them one after another.
func TestDLQVerbs(t *testing.T) {
	url := "memory://cli-dlq-verbs"
	tr := deadLetters(t, url, "orders.new", 30).Transport()
	at := []string{"--url", url}

	r := run(t, "", append([]string{"dlq", "show", "orders.new.dlq", "--limit", "2"}, at...)...)
	if r.code != 0 || strings.Count(r.stdout, "reason:  exhausted 5 attempts") != 2 || strings.Count(r.stdout, "class:   exhausted\n") != 2 ||
		!strings.Contains(r.stdout, "1. id-000  type order.created  attempt 5  age ") ||
		!strings.Contains(r.stdout, `body:    "{\"n\":1}" (application/json)`) {
		t.Errorf("show printed (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", append([]string{"dlq", "show", "orders.new.dlq", "--limit", "0", "--json"}, at...)...)
	var shown []shownMessage
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || len(shown) != 30 || shown[29].ID != "id-029" || shown[29].ReasonClass != "exhausted" {
		t.Errorf("show --json: %v; %d messages; stdout:\n%.400s", err, len(shown), r.stdout)
	}
	wantRun(t, run(t, "", append([]string{"dlq", "show", "orders.new.dlq", "--reasons"}, at...)...), 0,
		"COUNT  CLASS\n30     exhausted\n\nCOUNT  CLASS      REASON\n20     exhausted  exhausted 5 attempts: payment declined\n10     exhausted  exhausted 5 attempts: timeout calling stock\n")

	wantRun(t, run(t, "", append([]string{"dlq", "replay", "orders.new.dlq", "--dry-run", "--match", `reason contains "timeout"`}, at...)...), 0,
		"orders.new.dlq: would replay 10 of the 30 messages taken (the queue held 30); 20 left in place\n")
	r = run(t, "", append([]string{"dlq", "replay", "orders.new.dlq", "--match", `reason contains "timeout"`, "--limit", "4"}, at...)...)
	wantRun(t, r, 0, "orders.new.dlq: replayed 4 of the 10 messages taken (the queue held 30); 6 left in place\n")
	if r.stderr != "" {
		t.Errorf("a run of 30 messages printed progress lines:\n%s", r.stderr)
	}
	if n := depthOf(t, tr, "orders.new"); n != 4 {
		t.Errorf("orders.new holds %d, want 4", n)
	}

	wantRun(t, run(t, "", append([]string{"dlq", "park", "orders.new.dlq", "--match", `headers["tenant"] == "acme" && body matches "\"n\":2[0-9]"`}, at...)...), 0,
		"orders.new.dlq: parked 10 of the 26 messages taken (the queue held 26); 16 left in place\n")

	file := filepath.Join(t.TempDir(), "dlq.jsonl")
	wantRun(t, run(t, "", append([]string{"dlq", "export", "orders.new.dlq", "--out", file}, at...)...), 0,
		"orders.new.dlq: exported 16 of the 16 messages taken (the queue held 16); 0 left in place\n")
	r = run(t, "", append([]string{"dlq", "export", "orders.new.dlq", "--out", file}, at...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "file exists") {
		t.Errorf("a second export to the same file: exit %d, %s", r.code, r.stderr)
	}
	wantRun(t, run(t, "", append([]string{"dlq", "purge", "orders.new.dlq", "--yes"}, at...)...), 0,
		"purged orders.new.dlq: 16 messages deleted\n")
	wantRun(t, run(t, "", append([]string{"dlq", "import", file, "--to", "orders.new.dlq"}, at...)...), 0,
		file+": imported 16 of the 16 messages taken; 0 left in place\n")
	if n := depthOf(t, tr, "orders.new.dlq"); n != 16 {
		t.Errorf("orders.new.dlq holds %d after the import, want 16", n)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wantRun(t, run(t, string(data), append([]string{"dlq", "import", "-", "--to", "orders.new.parked", "--dry-run"}, at...)...), 0,
		"-: would import 16 of the 16 messages taken; 0 left in place\n")
}

// Mistakes are refused before anything connects.
func TestDLQUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"dlq", "replay"}, "takes 1 argument (QUEUE), found 0"},
		{[]string{"dlq", "replay", "orders.new"}, "name the target with --to"},
		{[]string{"dlq", "replay", "orders.new.dlq", "--to", "orders.new.dlq"}, "cannot be replayed into itself"},
		{[]string{"dlq", "replay", "orders.new.dlq", "--match", "reason ==="}, "does not compile"},
		{[]string{"dlq", "replay", "orders.new.dlq", "--match", "attempt"}, "does not compile"},
		{[]string{"dlq", "replay", "orders.new.dlq", "--limit", "-1"}, "--limit must be 0 (all) or more"},
		{[]string{"dlq", "replay", "orders.new.dlq", "--rate", "-5"}, "--rate must be 0 (unlimited) or more"},
		{[]string{"dlq", "park", "orders.new.parked"}, "is not one"},
		{[]string{"dlq", "purge", "orders.new.dlq"}, "add --yes"},
		{[]string{"dlq", "export", "orders.new.dlq"}, "needs --out FILE"},
		{[]string{"dlq", "import", "x.jsonl"}, "needs --to QUEUE"},
		{[]string{"dlq", "show", "q", "--limit", "-2"}, "--limit must be 0 (all) or more"},
		{[]string{"dlq", "resend", "orders.new.dlq"}, `unknown command "resend"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := tt.args
			if tt.args[1] != "resend" {
				args = append(args, "--url", "amqp://nobody:secret@localhost:1/") // never reached
			}
			r := run(t, "", args...)
			if r.code != exitFailure || !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "Usage:") {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, %q and the usage", r.code, r.stderr, exitFailure, tt.want)
			}
		})
	}
}

// What a failing replay reports: what it did, and where the rest are.
func TestDLQReplayIntoAMissingQueue(t *testing.T) {
	url := "memory://cli-dlq-missing"
	deadLetters(t, url, "orders.new", 3)
	r := run(t, "", "dlq", "replay", "orders.new.dlq", "--to", "orders.nowhere", "--url", url)
	if r.code != exitFailure || r.stdout != "" || !strings.Contains(r.stderr, "the queue orders.nowhere does not exist; declare it first") || strings.Contains(r.stderr, "Usage:") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// deliveryLimitDeadLetter has the broker dead-letter a message of source
// into source.dlq for its delivery limit, as RabbitMQ 4 does to a message
// whose consumer is killed 20 times while holding it: source is a quorum
// queue with x-delivery-limit 2, dead-lettering through acemq.dlx. The
// message is first nacked with requeue 3 times, which dead-letters it up
// to RabbitMQ 4.2; from 4.3 a nack no longer counts, and it is then
// rejected with requeue, which every version counts, until the broker
// takes it away. It fails the test unless the broker's version did what
// it does (brokerversion.NackCounts).
func deliveryLimitDeadLetter(t *testing.T, tr transport.Transport, source string) {
	t.Helper()
	ctx := t.Context()
	v, err := brokerversion.Of(tr)
	if err != nil {
		t.Fatal(err)
	}
	dlq := contract.DeadLetterQueue(source)
	ladder, err := retry.NewLadder(source, acemq.NoRetry(), contract.ContractRungs)
	if err != nil {
		t.Fatal(err)
	}
	if err := ladder.DeclareDeadLetters(ctx, tr); err != nil {
		t.Fatal(err)
	}
	const limit = 2
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: source, Type: transport.Quorum, Durable: true, Arguments: transport.Table{
		contract.ArgDeliveryLimit: int64(limit), contract.ArgDeadLetterExchange: contract.DeadLetterExchange, contract.ArgDeadLetterRoutingKey: dlq,
	}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{source, dlq, contract.ParkedQueue(source)} {
		t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), q) })
	}
	c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: source, Mandatory: true, Message: transport.Message{
		Headers:     transport.Table{contract.HeaderID: "limit-1", contract.HeaderType: "order.created", contract.HeaderAttempt: int64(1)},
		ContentType: "application/json", MessageID: "limit-1", Persistent: true, Body: []byte(`{"n":1}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	taker, err := tr.Take(ctx, source)
	if err != nil {
		t.Fatal(err)
	}
	defer taker.Close()
	nacked, rejected := 0, 0
	for deadline := time.Now().Add(10 * time.Second); depthOf(t, tr, dlq) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the broker did not dead-letter the message nacked %d and rejected %d times within 10s", source, nacked, rejected)
		}
		d, ok, err := taker.Next(ctx)
		switch {
		case err != nil:
			t.Fatal(err)
		case ok && nacked <= limit:
			if err := d.Nack(true); err != nil {
				t.Fatal(err)
			}
			nacked++
		case ok:
			if err := d.Reject(true); err != nil {
				t.Fatal(err)
			}
			rejected++
		default:
			time.Sleep(10 * time.Millisecond) // on its way back, or to the dead-letter queue
		}
	}
	want := limit + 1 // the returns that pass the limit
	if v.NackCounts() {
		want = 0 // the nacks did it
	}
	if nacked != limit+1 || rejected != want {
		t.Errorf("RabbitMQ %s dead-lettered a message of x-delivery-limit %d after %d nacks and %d rejects, want %d and %d",
			v, limit, nacked, rejected, limit+1, want)
	}
}

// declareLadder declares source's ladder of kind under policy, deleting its
// rungs when the test ends.
func declareLadder(t *testing.T, tr transport.Transport, source string, policy acemq.RetryPolicy, kind contract.RungKind) {
	t.Helper()
	ladder, err := retry.NewLadder(source, policy, kind)
	if err != nil {
		t.Fatal(err)
	}
	if err := ladder.Declare(t.Context(), tr); err != nil {
		t.Fatal(err)
	}
	for _, q := range ladder.Queues() {
		t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), q) })
	}
}

// On the test broker: list finds the dead-letter and parked queues through
// the management API with their head's reason class, and the rungs of their
// sources; show and match read the broker's own dead-lettering (a quorum
// queue's delivery limit); a replay moves a dead-letter queue home.
func TestDLQOnBroker(t *testing.T) {
	url := brokertest.URL(t)
	source := brokertest.UniqueName(t, "cli-dlq")
	tr := deadLetters(t, url, source, 12).Transport()
	at := []string{"--url", url}
	mgmt := append([]string{"--management-url", brokertest.ManagementURL()}, at...)

	// Two waits of an hour, one on each kind of rung.
	ctx := t.Context()
	for _, kind := range []contract.RungKind{contract.ContractRungs, contract.AtLeastOnceRungs} {
		declareLadder(t, tr, source, acemq.Fixed(2, time.Hour), kind)
	}
	rungs := []string{contract.RungQueue(source, time.Hour, contract.ContractRungs), source + ".retry.quorum.1h"}
	for i, q := range []string{rungs[0], rungs[0], rungs[1]} {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{
			Headers: transport.Table{contract.HeaderID: fmt.Sprintf("waiting-%d", i), contract.HeaderAttempt: int64(2)}, Persistent: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}

	limited := brokertest.UniqueName(t, "cli-dlq-limit")
	deliveryLimitDeadLetter(t, tr, limited)
	limitedDLQ := contract.DeadLetterQueue(limited)

	r := run(t, "", append([]string{"dlq", "list"}, mgmt...)...)
	rows := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(contract.DeadLetterQueue(source)) + ` +` + regexp.QuoteMeta(source) + ` +12 +\d+h\d+m\d+s +exhausted$`),
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(contract.ParkedQueue(source)) + ` +` + regexp.QuoteMeta(source) + ` +0 +- +-$`),
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(limitedDLQ) + ` +` + regexp.QuoteMeta(limited) + ` +1 +- +delivery_limit$`),
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(source) + ` +2 +3$`),
		regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(limited) + ` +0 +0$`),
	}
	for _, row := range rows {
		if r.code != 0 || !strings.HasPrefix(r.stdout, "QUEUE") || !row.MatchString(r.stdout) {
			t.Errorf("list: exit %d, stdout:\n%s\nstderr:\n%s\nwant a row matching %s", r.code, r.stdout, r.stderr, row)
		}
	}
	r = run(t, "", append([]string{"dlq", "list", "--json"}, mgmt...)...)
	var listed struct {
		Queues  []map[string]any
		Sources []deadletter.SourceInfo
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatalf("list --json: exit %d, %v\nstdout:\n%s\nstderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	found := map[string]map[string]any{}
	for _, q := range listed.Queues {
		found[q["name"].(string)] = q
	}
	if want := map[string]any{"name": contract.ParkedQueue(source), "source": source, "messages": 0.0, "consumers": 0.0}; !reflect.DeepEqual(found[contract.ParkedQueue(source)], want) {
		t.Errorf("list --json lists %s as %v, want %v", contract.ParkedQueue(source), found[contract.ParkedQueue(source)], want)
	}
	if got := found[limitedDLQ]["headReasonClass"]; got != "delivery_limit" {
		t.Errorf("list --json gives %s the head reason class %v, want delivery_limit", limitedDLQ, got)
	}
	wantSource := deadletter.SourceInfo{Source: source, Waiting: 3, Rungs: []deadletter.RungInfo{
		{Name: rungs[0], Kind: contract.ContractRungs, Delay: "1h", Messages: 2},
		{Name: rungs[1], Kind: contract.AtLeastOnceRungs, Delay: "1h", Messages: 1},
	}}
	var gotSource deadletter.SourceInfo
	for _, s := range listed.Sources {
		if s.Source == source {
			gotSource = s
		}
	}
	if !reflect.DeepEqual(gotSource, wantSource) {
		t.Errorf("list --json lists the source %s as %+v, want %+v", source, gotSource, wantSource)
	}

	deliveryLimit := "the broker dead-lettered it from " + limited + " (delivery_limit): returned to the queue more times than its delivery limit (x-delivery-limit) allows"
	r = run(t, "", append([]string{"dlq", "show", limitedDLQ, "--json"}, at...)...)
	var shown []shownMessage
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || len(shown) != 1 ||
		shown[0].ID != "limit-1" || shown[0].Reason != deliveryLimit || shown[0].ReasonClass != "delivery_limit" {
		t.Errorf("show --json of %s: %v; stdout:\n%s", limitedDLQ, err, r.stdout)
	}
	if _, ok := shown[0].Headers[contract.HeaderError]; ok || len(shown) != 1 || shown[0].Headers["x-death"] == nil {
		t.Errorf("the broker's dead letter has headers %v, want x-death and no x-acemq-error", shown[0].Headers)
	}
	wantRun(t, run(t, "", append([]string{"dlq", "show", limitedDLQ, "--reasons"}, at...)...), 0,
		"COUNT  CLASS\n1      delivery_limit\n\nCOUNT  CLASS           REASON\n1      delivery_limit  "+deliveryLimit+"\n")
	wantRun(t, run(t, "", append([]string{"dlq", "replay", limitedDLQ, "--dry-run", "--match", `reasonClass == "delivery_limit" && reason contains "` + limited + `"`}, at...)...), 0,
		limitedDLQ+": would replay 1 of the 1 message taken (the queue held 1); 0 left in place\n")

	wantRun(t, run(t, "", append([]string{"dlq", "replay", contract.DeadLetterQueue(source)}, at...)...), 0,
		fmt.Sprintf("%s: replayed 12 of the 12 messages taken (the queue held 12); 0 left in place\n", contract.DeadLetterQueue(source)))
	if n := depthOf(t, tr, source); n != 12 {
		t.Errorf("%s holds %d, want 12", source, n)
	}
}

// show --reasons classes the texts Ruby and the Go peer write (CONTRACT.md
// section 20) as deadletter.ReasonOf does, in Q.dlq and in Q.parked, where
// a text no template knows would be classed rejected and parked.
func TestDLQReasonsOfOtherLibraries(t *testing.T) {
	url := "memory://cli-dlq-other-libraries"
	tr := deadLetters(t, url, "orders.new", 0).Transport()
	texts := []string{
		"gave up after 3 attempts: Timeout::Error",
		"gave up on a message older than 120.0 seconds: slow",
		"rejected by the handler: no sku",
		"retrying cannot help: schema v9 unknown",
		"the handler rejected it: no sku",
	}
	for _, q := range []string{contract.DeadLetterQueue("orders.new"), contract.ParkedQueue("orders.new")} {
		for i, text := range texts {
			id := fmt.Sprintf("other-%d", i)
			c, err := tr.Publish(t.Context(), transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{
				MessageID: id, Persistent: true, Body: []byte(`{}`), ContentType: "application/json",
				Headers: transport.Table{contract.HeaderID: id, contract.HeaderError: text},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		wantRun(t, run(t, "", "dlq", "show", q, "--reasons", "--url", url), 0, `COUNT  CLASS
2      rejected
1      exhausted
1      fatal
1      too_old

COUNT  CLASS      REASON
1      exhausted  gave up after 3 attempts: Timeout::Error
1      fatal      retrying cannot help: schema v9 unknown
1      rejected   rejected by the handler: no sku
1      rejected   the handler rejected it: no sku
1      too_old    gave up on a message older than 120.0 seconds: slow
`)
	}
}

// What show, show --reasons and list print, from messages as this library,
// another, and RabbitMQ 4.0 (its delivery limit) set them aside, on
// memory:// at a fixed time.
func TestDLQGolden(t *testing.T) {
	url := "memory://cli-dlq-golden"
	conn := deadLetters(t, url, "orders.new", 2)
	tr := conn.Transport()
	ctx := t.Context()
	first := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	died := time.Date(2026, 11, 1, 8, 3, 0, 0, time.UTC)
	now := first.Add(90 * time.Minute)
	publish := func(queue string, m transport.Message) {
		t.Helper()
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: queue, Mandatory: true, Message: m})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	envelope := func(id string, more transport.Table) transport.Table {
		h := transport.Table{contract.HeaderID: id, contract.HeaderType: "order.created", contract.HeaderAttempt: int64(1), contract.HeaderFirstSeen: first.UnixMilli()}
		maps.Copy(h, more)
		return h
	}
	// As RabbitMQ 4.0.5 dead-letters a message of a quorum queue for its
	// delivery limit.
	publish("orders.new.dlq", transport.Message{ContentType: "application/json", Persistent: true, Body: []byte(`{"n":7}`),
		Headers: envelope("limit-7", transport.Table{
			"x-death": []any{transport.Table{"count": int64(1), "exchange": "", "queue": "orders.new", "reason": "delivery_limit",
				"routing-keys": []any{"orders.new"}, "time": died}},
			"x-first-death-exchange": "", "x-first-death-queue": "orders.new", "x-first-death-reason": "delivery_limit",
			"x-last-death-exchange": "", "x-last-death-queue": "orders.new", "x-last-death-reason": "delivery_limit",
		})})
	publish("orders.new.dlq", transport.Message{ContentType: "application/json", Persistent: true, Body: []byte(`{"n":8}`),
		Headers: envelope("ruby-8", transport.Table{contract.HeaderError: "gave up after 5 attempts: Timeout::Error"})})
	publish("orders.new.dlq", transport.Message{Persistent: true, Body: []byte("by hand"), Headers: envelope("hand-9", nil)})
	publish("orders.new.parked", transport.Message{ContentType: "application/json", Persistent: true, Body: []byte("order 10, not JSON {"),
		Headers: envelope("bad-10", transport.Table{contract.HeaderError: "could not be decoded: invalid character 'o' looking for beginning of value"})})
	publish("orders.new.parked", transport.Message{ContentType: "application/json", Persistent: true, Body: []byte(`{"n":11}`),
		Headers: envelope("person-11", transport.Table{contract.HeaderError: "needs a person: address unknown"})})
	// Rungs of both kinds, whose names sort otherwise than their waits.
	for kind, policy := range map[contract.RungKind]acemq.RetryPolicy{
		contract.ContractRungs:    acemq.Exponential(6, 40*time.Second, 5*time.Minute),
		contract.AtLeastOnceRungs: acemq.Fixed(3, time.Hour),
	} {
		declareLadder(t, tr, "orders.new", policy, kind)
	}
	publish("orders.new.retry.quorum.1h", transport.Message{Persistent: true, Headers: envelope("waiting-12", nil)})
	publish("orders.new.retry.160s", transport.Message{Persistent: true, Headers: envelope("waiting-13", nil)})
	publish("orders.new.retry.160s", transport.Message{Persistent: true, Headers: envelope("waiting-14", nil)})

	reader, err := preview.New(preview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var shown []shownMessage
	for _, q := range []string{"orders.new.dlq", "orders.new.parked"} {
		if err := deadletter.Browse(ctx, conn, q, 0, func(m transport.Message) error {
			shown = append(shown, showMessage(ctx, reader, q, m, now))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var text, js strings.Builder
	if err := writeShown(&text, "orders.new.dlq", shown); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(&js, shown); err != nil {
		t.Fatal(err)
	}
	wantGolden(t, "dlq-show", text.String())
	wantGolden(t, "dlq-show-json", js.String())

	text.Reset()
	js.Reset()
	counts, err := deadletter.Reasons(ctx, conn, "orders.new.dlq")
	if err != nil {
		t.Fatal(err)
	}
	if err := writeReasons(&text, "orders.new.dlq", counts, false); err != nil {
		t.Fatal(err)
	}
	if err := writeReasons(&js, "orders.new.dlq", counts, true); err != nil {
		t.Fatal(err)
	}
	wantGolden(t, "dlq-reasons", text.String())
	wantGolden(t, "dlq-reasons-json", js.String())

	text.Reset()
	js.Reset()
	// As the management API lists them, by name; a rung of a queue without
	// dead-letter queues is left out.
	names := []string{"orders.new", "orders.new.dlq", "orders.new.parked", "orders.new.retry.160s", "orders.new.retry.40s",
		"orders.new.retry.5m", "orders.new.retry.80s", "orders.new.retry.quorum.1h", "shipments.retry.1m"}
	queues := make([]transport.Queue, len(names))
	for i, n := range names {
		queues[i] = transport.Queue{Name: n, Type: transport.Classic}
	}
	l, err := deadletter.List(ctx, conn, queues, now)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := admin.Endpoint{URL: "http://localhost:15672", Vhost: "/"}
	if err := writeQueueList(&text, endpoint, l, false); err != nil {
		t.Fatal(err)
	}
	if err := writeQueueList(&js, endpoint, l, true); err != nil {
		t.Fatal(err)
	}
	wantGolden(t, "dlq-list", text.String())
	wantGolden(t, "dlq-list-json", js.String())
}

// Without a terminal, progress is a line at every tenth of the way, but not
// more often than every 1000 messages.
func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, "replay q.dlq")
	for i := 1; i <= 20_000; i++ {
		p.update(deadletter.Progress{Total: 20_000, Taken: i, Moved: i - i/4, Left: i / 4})
	}
	p.finish()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 10 || lines[0] != "replay q.dlq: 2000 of 20000 taken, 1500 moved, 500 left, 0 doubtful" ||
		lines[9] != "replay q.dlq: 20000 of 20000 taken, 15000 moved, 5000 left, 0 doubtful" {
		t.Errorf("progress lines:\n%s", b.String())
	}
	b.Reset()
	p = newProgress(&b, "import f")
	for i := 1; i <= 2500; i++ {
		p.update(deadletter.Progress{Taken: i, Moved: i})
	}
	if want := "import f: 1000 of ? taken, 1000 moved, 0 left, 0 doubtful\nimport f: 2000 of ? taken, 2000 moved, 0 left, 0 doubtful\n"; b.String() != want {
		t.Errorf("progress lines without a total:\n%s\nwant\n%s", b.String(), want)
	}
}

// Ctrl-C (the context ending) stops a replay after the messages in hand,
// with exit status 130 and what it did.
func TestDLQReplayInterrupted(t *testing.T) {
	url := "memory://cli-dlq-interrupted"
	tr := deadLetters(t, url, "orders.new", 30).Transport()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan result)
	go func() {
		var stdout, stderr strings.Builder
		code := execute(ctx, []string{"dlq", "replay", "orders.new.dlq", "--rate", "20", "--url", url}, strings.NewReader(""), &stdout, &stderr)
		done <- result{stdout.String(), stderr.String(), code}
	}()
	for deadline := time.Now().Add(10 * time.Second); depthOf(t, tr, "orders.new") < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the replay moved fewer than 3 messages in 10s")
		}
	}
	cancel()
	r := <-done
	moved, left := depthOf(t, tr, "orders.new"), depthOf(t, tr, "orders.new.dlq")
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "interrupted: replay stopped after the messages in hand") ||
		!strings.HasPrefix(r.stdout, fmt.Sprintf("orders.new.dlq: replayed %d of the ", moved)) || moved+left != 30 {
		t.Errorf("exit %d, stdout %q, stderr %q; %d moved and %d left of 30", r.code, r.stdout, r.stderr, moved, left)
	}
}

// RabbitMQ refuses basic.get on a quorum queue with single active consumer
// (a partition of a partition.Set): show and export, which read with it,
// fail saying so, naming the queue, and take nothing away.
func TestDLQOnASingleActiveConsumerQueue(t *testing.T) {
	url := "memory://cli-dlq-sac"
	conn, err := connect(t.Context(), url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	tr := conn.Transport()
	const q = "orders.p0"
	if err := tr.DeclareQueue(t.Context(), transport.Queue{Name: q, Type: transport.Quorum, Durable: true,
		Arguments: transport.Table{contract.ArgSingleActiveConsumer: true}}); err != nil {
		t.Fatal(err)
	}
	c, err := tr.Publish(t.Context(), transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte("m")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	const why = "basic.get operations are not supported by"
	for _, args := range [][]string{
		{"dlq", "show", q},
		{"dlq", "show", q, "--reasons"},
		{"dlq", "export", q, "--out", filepath.Join(t.TempDir(), "out.jsonl")},
	} {
		r := run(t, "", append(args, "--url", url)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, q) || !strings.Contains(r.stderr, why) {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if n := depthOf(t, tr, q); n != 1 {
		t.Errorf("%s holds %d messages after the refusals, want 1", q, n)
	}
}
