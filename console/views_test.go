package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var shownIDs = regexp.MustCompile(`<span class="msgid">([^<]+)</span>`)

// The queue page shows a page of the snapshot at a time, with next and
// previous, and filters it without reading the queue again.
func TestQueuePages(t *testing.T) {
	f := newFixture(t, 25, nil)
	page := func(query string) response {
		t.Helper()
		r := get(t, f, "/queue?name="+f.dlq+query)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d\n%s", query, r.status, r.body)
		}
		return r
	}
	ids := func(r response) []string {
		var out []string
		for _, m := range shownIDs.FindAllStringSubmatch(r.body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	r := page("&size=10")
	if got := ids(r); len(got) != 10 || got[0] != "id-00000" || got[9] != "id-00009" {
		t.Errorf("page 1 shows %v", got)
	}
	if !strings.Contains(r.body, `id="next"`) || strings.Contains(r.body, `id="prev"`) || !strings.Contains(r.body, "Messages 1 to 10 of the 25 read") {
		t.Errorf("page 1's paging:\n%s", r.body)
	}
	r = page("&size=10&page=3")
	if got := ids(r); len(got) != 5 || got[0] != "id-00020" || got[4] != "id-00024" {
		t.Errorf("page 3 shows %v", got)
	}
	if strings.Contains(r.body, `id="next"`) || !strings.Contains(r.body, `id="prev"`) {
		t.Errorf("page 3's paging:\n%s", r.body)
	}
	// Messages published now are not in the snapshot until a refresh.
	publish(t, f.conn, f.dlq, 1)
	r = page("&size=10&page=3&match=" + url.QueryEscape(`reason contains "timeout"`))
	if got := ids(r); len(got) != 0 || !strings.Contains(r.body, "of the 12 matching read") {
		t.Errorf("page 3 of the 12 timeouts shows %v:\n%s", got, r.body)
	}
	if got := ids(page("&size=10&match=" + url.QueryEscape(`reason contains "timeout" && id >= "id-00020"`))); strings.Join(got, " ") != "id-00021 id-00023" {
		t.Errorf("the filter shows %v, want id-00021 and id-00023", got)
	}
	if r := page("&refresh=1&size=50"); !strings.Contains(r.body, "Snapshot of 26 messages") {
		t.Errorf("a refresh does not read the message published since:\n%s", r.body)
	}
	if n := depth(t, f, f.dlq); n != 26 {
		t.Errorf("%d messages in %s, want 26", n, f.dlq)
	}
}

var groupForm = regexp.MustCompile(`(?s)<tr class="group"><td>(\d+)</td><td>[^<]*</td><td><a [^>]*>([^<]*)</a></td>.*?name="match" value="([^"]*)"`)

// Reasons are grouped by template, and a group is replayed through the
// usual confirmation and job: those messages move, the others stay.
func TestReplayAReasonGroup(t *testing.T) {
	f := newFixture(t, 10, nil)
	r := get(t, f, "/queue?name="+f.dlq)
	groups := groupForm.FindAllStringSubmatch(r.body, -1)
	if len(groups) != 2 {
		t.Fatalf("%d reason groups, want 2:\n%s", len(groups), r.body)
	}
	var match string
	for _, g := range groups {
		if g[1] != "5" {
			t.Errorf("group %q counts %s, want 5", g[2], g[1])
		}
		if strings.Contains(g[2], "timeout") {
			match = unescape(g[3])
		}
	}
	if match == "" {
		t.Fatalf("no timeout group among %v", groups)
	}
	token := csrf(t, f)
	form := url.Values{"csrf": {token}, "op": {"replay matching"}, "queue": {f.dlq}, "match": {match}}
	if c := post(t, f, "/confirm", form, nil); !strings.Contains(c.body, "Replay 5 messages matching reasonTemplate ==") {
		t.Fatalf("the group's confirmation (HTTP %d):\n%s", c.status, c.body)
	}
	if state := awaitJob(t, f, runAction(t, f, form, 5)); !strings.Contains(state, "replayed 5 of the 10 messages taken (the queue held 10); 5 left in place") {
		t.Fatalf("the group's replay: %s", state)
	}
	if n := depth(t, f, f.source); n != 5 {
		t.Errorf("%d messages replayed to %s, want 5", n, f.source)
	}
	if r := get(t, f, "/queue?name="+f.dlq); strings.Contains(r.body, "timeout calling stock") || !strings.Contains(r.body, "Snapshot of 5 messages") {
		t.Errorf("after the replay the page shows:\n%s", r.body)
	}
}

func unescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&quot;", `"`, "&lt;", "<", "&gt;", ">", "&amp;", "&", "&#39;", "'").Replace(s)
}

// A purge removes what its confirmation counted, once the queue's name is
// typed: a message dead-lettered after the confirmation stays.
func TestPurgeRemovesWhatItsConfirmationCounted(t *testing.T) {
	f := newFixture(t, 4, nil)
	token := csrf(t, f)
	form := url.Values{"csrf": {token}, "op": {"purge all"}, "queue": {f.dlq}}
	c := post(t, f, "/confirm", form, nil)
	if !strings.Contains(c.body, "delete the 4 messages counted") || !strings.Contains(c.body, `name="typed"`) {
		t.Fatalf("the purge's confirmation:\n%s", c.body)
	}
	form.Set("token", purgeToken(t, c.body))
	form.Set("count", "4")
	for _, typed := range []string{"", "orders.new", f.dlq + " "} {
		form.Set("typed", typed)
		if r := post(t, f, "/run", form, nil); r.status != http.StatusBadRequest || !strings.Contains(r.body, "type its name") {
			t.Errorf("a purge with %q typed: HTTP %d\n%s", typed, r.status, r.body)
		}
	}
	publish(t, f.conn, f.dlq, 5) // id-00000 to id-00004 again: a second copy of each
	form.Set("typed", f.dlq)
	state := awaitJob(t, f, runAction(t, f, form, 4))
	if !strings.Contains(state, "purged 4 of the 4 messages taken (the queue held 9); 0 left in place; "+f.dlq+" holds 5 ready now, 5 of them not taken by this job") {
		t.Errorf("the purge: %s", state)
	}
	if n := depth(t, f, f.dlq); n != 5 {
		t.Errorf("%d messages left, want the 5 published after the confirmation", n)
	}
	// The confirmation is used up.
	if r := post(t, f, "/run", form, nil); r.status != http.StatusGone {
		t.Errorf("a second run of one confirmation: HTTP %d\n%s", r.status, r.body)
	}
}

func TestAPageOfAQueueThatIsNotADeadLetterQueueReadsNothing(t *testing.T) {
	f := newFixture(t, 1, nil)
	publish(t, f.conn, f.source, 3)
	r := get(t, f, "/queue?name="+f.source)
	if r.status != http.StatusOK || !strings.Contains(r.body, `id="not-read"`) || strings.Contains(r.body, `class="id"`) || !strings.Contains(r.body, "3 ready") {
		t.Errorf("the page of a live queue: HTTP %d\n%s", r.status, r.body)
	}
	token := csrf(t, f)
	if r := post(t, f, "/confirm", url.Values{"csrf": {token}, "op": {"export all"}, "queue": {f.source}}, nil); r.status != http.StatusBadRequest || !strings.Contains(r.body, "acts only on the queues it can look at") {
		t.Errorf("an export of a live queue: HTTP %d\n%s", r.status, r.body)
	}
	if n := depth(t, f, f.source); n != 3 {
		t.Errorf("%d messages in %s, want 3", n, f.source)
	}
}
