// Command console-replay times a replay of the same number of dead letters
// (10,000 by default) through `acemq dlq replay` and through the console, in
// alternating rounds on one broker, and prints each round's figures.
//
//	go build -o /tmp/acemq ./cmd/acemq
//	cd bench && go run ./cmd/console-replay -cli /tmp/acemq
//
// The CLI's figure is the whole process, from start to exit: it connects,
// replays and prints. The console's figure runs from the confirmed POST
// /run to the job's end, followed by the job's JSON as the page's script
// does; the confirmation (which counts the messages) is printed apart. The broker is ACEMQ_TEST_URL (or -url), its management
// API ACEMQ_TEST_MANAGEMENT_URL (or -management-url).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq/bench/internal/brokerflags"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func main() {
	var (
		broker   = brokerflags.Register()
		cli      = flag.String("cli", "acemq", "the acemq binary")
		messages = flag.Int("messages", 10000, "dead letters per replay")
		rounds   = flag.Int("rounds", 3, "rounds of each")
	)
	flag.Parse()
	if err := run(broker, *cli, *messages, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "console-replay:", err)
		os.Exit(1)
	}
}

func run(broker brokerflags.Broker, cli string, messages, rounds int) error {
	ctx := context.Background()
	conn, endpoint, err := broker.Connect(ctx, "console-replay bench")
	if err != nil {
		return err
	}
	defer conn.Close()
	tr := conn.Transport()
	source := fmt.Sprintf("bench.console-replay.%d", time.Now().UnixNano())
	dlq := contract.DeadLetterQueue(source)
	for _, q := range []string{source, dlq} {
		if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
			return err
		}
		defer tr.DeleteQueue(context.Background(), q)
	}
	s, err := console.New(console.Config{Conn: conn, Endpoint: endpoint})
	if err != nil {
		return err
	}
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()

	fmt.Printf("replay of %d dead letters, %s to %s, %d rounds\n", messages, dlq, source, rounds)
	var cliTimes, consoleTimes []time.Duration
	defer func() {
		if len(consoleTimes) > 0 {
			fmt.Printf("median of %d rounds: CLI %s, console %s\n", len(consoleTimes), median(cliTimes).Round(time.Millisecond), median(consoleTimes).Round(time.Millisecond))
		}
	}()
	for round := 1; round <= rounds; round++ {
		if err := seed(ctx, tr, source, dlq, messages); err != nil {
			return err
		}
		start := time.Now()
		out, err := exec.Command(cli, "dlq", "replay", dlq, "--url", broker.URL()).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s dlq replay: %w\n%s", cli, err, out)
		}
		cliTime := time.Since(start)
		if err := check(ctx, tr, source, dlq, messages); err != nil {
			return fmt.Errorf("after the CLI: %w", err)
		}

		if err := seed(ctx, tr, source, dlq, messages); err != nil {
			return err
		}
		count, run, err := replayThroughConsole(srv.URL, dlq, messages)
		if err != nil {
			return err
		}
		if err := check(ctx, tr, source, dlq, messages); err != nil {
			return fmt.Errorf("after the console: %w", err)
		}
		cliTimes, consoleTimes = append(cliTimes, cliTime), append(consoleTimes, run)
		fmt.Printf("round %d: CLI %s (whole process); console %s (POST /run to done), its confirmation %s\n",
			round, cliTime.Round(time.Millisecond), run.Round(time.Millisecond), count.Round(time.Millisecond))
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// seed empties both queues and puts n dead letters in dlq.
func seed(ctx context.Context, tr transport.Transport, source, dlq string, n int) error {
	for _, q := range []string{source, dlq} {
		if _, err := tr.PurgeQueue(ctx, q); err != nil {
			return err
		}
	}
	var pending []*transport.Confirmation
	for i := range n {
		id := fmt.Sprintf("m-%06d", i)
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: dlq, Mandatory: true, Message: transport.Message{
			Headers: transport.Table{contract.HeaderID: id, contract.HeaderAttempt: int64(5),
				contract.HeaderError: contract.ExhaustedReason(5) + ": timeout"},
			ContentType: contract.ContentTypeJSON, MessageID: id, Persistent: true, Body: fmt.Appendf(nil, `{"n":%d}`, i)}})
		if err != nil {
			return err
		}
		pending = append(pending, c)
	}
	for _, c := range pending {
		if err := c.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func check(ctx context.Context, tr transport.Transport, source, dlq string, n int) error {
	s, err := tr.InspectQueue(ctx, source)
	if err != nil {
		return err
	}
	d, err := tr.InspectQueue(ctx, dlq)
	if err != nil {
		return err
	}
	if s.Messages != n || d.Messages != 0 {
		return fmt.Errorf("%d in %s and %d in %s, want %d and 0", s.Messages, source, d.Messages, dlq, n)
	}
	return nil
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// replayThroughConsole does what the browser does: the queue page for its
// form's token, the confirmation (a dry run), the run, then the job's JSON
// until it is done.
func replayThroughConsole(base, dlq string, n int) (count, run time.Duration, err error) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := body(http.Get(base + "/queue?name=" + url.QueryEscape(dlq) + "&limit=1"))
	if err != nil {
		return 0, 0, err
	}
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		return 0, 0, errors.New("no CSRF token on the queue page")
	}
	form := url.Values{"csrf": {m[1]}, "op": {"replay all"}, "queue": {dlq}}
	start := time.Now()
	confirm, err := body(http.PostForm(base+"/confirm", form))
	if err != nil {
		return 0, 0, err
	}
	count = time.Since(start)
	if want := fmt.Sprintf("Replay %d messages", n); !strings.Contains(confirm, want) {
		return 0, 0, fmt.Errorf("the confirmation does not say %q", want)
	}
	form.Set("count", strconv.Itoa(n))
	start = time.Now()
	resp, err := noRedirect.PostForm(base+"/run", form)
	if err != nil {
		return 0, 0, err
	}
	resp.Body.Close()
	job := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || job == "" {
		return 0, 0, fmt.Errorf("POST /run: HTTP %d", resp.StatusCode)
	}
	for {
		text, err := body(http.Get(base + strings.Replace(job, "/job?", "/job.json?", 1)))
		if err != nil {
			return 0, 0, err
		}
		var st struct {
			Done  bool   `json:"done"`
			Moved int    `json:"moved"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(text), &st); err != nil {
			return 0, 0, err
		}
		if st.Done {
			if st.Error != "" || st.Moved != n {
				return 0, 0, fmt.Errorf("the job moved %d: %s", st.Moved, st.Error)
			}
			return count, time.Since(start), nil
		}
		time.Sleep(10 * time.Millisecond) // finer than the page's 250 ms, to time the job itself
	}
}

func body(resp *http.Response, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: HTTP %d", resp.Request.URL.Path, resp.StatusCode)
	}
	return string(b), err
}
