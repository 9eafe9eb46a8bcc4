package chaos

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// What the harness reads of the broker beyond AMQP: its version and the
// dead letters a quorum queue holds (the management API), and what its log
// says while a run lasts.

// managementGet decodes the JSON at path of the management API at base
// (http://user:pass@host:port), within 10s.
func managementGet(ctx context.Context, base, path string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return brokertest.GetJSON(ctx, base, path, into)
}

// brokerVersion names the broker behind the management API at base, as
// "RabbitMQ 3.10.8, Erlang 25.2.3".
func brokerVersion(ctx context.Context, base string) (string, error) {
	var o struct {
		Product  string `json:"product_name"`
		Version  string `json:"rabbitmq_version"`
		Erlang   string `json:"erlang_version"`
		NodeName string `json:"node"`
	}
	if err := managementGet(ctx, base, "/api/overview", &o); err != nil {
		return "", fmt.Errorf("reading the broker's version: %w", err)
	}
	if o.Product == "" {
		o.Product = "RabbitMQ"
	}
	return fmt.Sprintf("%s %s, Erlang %s", o.Product, o.Version, o.Erlang), nil
}

// heldDeadLetters reads, for each of queues (of vhost /), the management
// API's messages_dlx: messages a quorum queue with at-least-once
// dead-lettering has dead-lettered but whose target has not confirmed them
// yet (one that refused them, or could not take them, gets them again
// later: RabbitMQ's dead_letter_worker_publisher_confirm_timeout, 180s by
// default). AMQP's passive declare does not count them. The figures are as
// of the broker's last statistics (every 5s by default). A queue the API
// does not know (yet), or whose statistics are missing (for a moment after
// its leader's node was killed), counts 0; the first base that answers is
// used.
func heldDeadLetters(ctx context.Context, bases []string, queues []string) (map[string]int, error) {
	var errs []error
	for _, base := range bases {
		var qs []struct {
			Name string `json:"name"`
			DLX  int    `json:"messages_dlx"`
		}
		if err := managementGet(ctx, base, "/api/queues/%2F?columns=name,messages_dlx", &qs); err != nil {
			errs = append(errs, err)
			continue
		}
		held := map[string]int{}
		for _, q := range qs {
			if slices.Contains(queues, q.Name) && q.DLX > 0 {
				held[q.Name] = q.DLX
			}
		}
		return held, nil
	}
	return nil, fmt.Errorf("reading messages_dlx through the management API: %v", errs)
}

// logMark is where a broker log file ended when a run started.
type logMark struct {
	path string
	size int64
}

func markLogs(paths []string) []logMark {
	marks := make([]logMark, 0, len(paths))
	for _, p := range paths {
		var size int64
		if st, err := os.Stat(p); err == nil {
			size = st.Size()
		}
		marks = append(marks, logMark{p, size})
	}
	return marks
}

// notable are the broker log lines a report counts: what RabbitMQ says when
// it drops a message or holds a dead letter.
var notable = []string{
	"leader not known", // a quorum queue without a leader: a cast dropped (classic dead-lettering), a call forwarded
	"dead-letter",      // anything about dead-lettering
	"dead letter",
	"delivery limit", // RabbitMQ 4's default delivery limit
}

// timestamp and pid prefixes, and queue and node names vary from line to
// line of one kind; the report groups lines without them.
var (
	logPrefix = regexp.MustCompile(`^\S+ \S+ \[\w+\] <[\d.]+> `)
	logQuoted = regexp.MustCompile(`'[^']*'`)
)

// readLogs counts, in each log since its mark, the lines that contain one of
// notable, grouped by their text without timestamp, pid and quoted names;
// each group is given with its count and one line as it was.
func readLogs(marks []logMark) []string {
	var out []string
	for _, m := range marks {
		f, err := os.Open(m.path)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", filepath.Base(m.path), err))
			continue
		}
		if st, err := f.Stat(); err == nil && st.Size() >= m.size {
			_, _ = f.Seek(m.size, io.SeekStart)
		} // else rotated or truncated: read it all
		counts := map[string]int{}
		sample := map[string]string{}
		var order []string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Bytes()
			if !slices.ContainsFunc(notable, func(s string) bool { return bytes.Contains(bytes.ToLower(line), []byte(strings.ToLower(s))) }) {
				continue
			}
			text := string(line)
			key := logQuoted.ReplaceAllString(logPrefix.ReplaceAllString(text, ""), "'…'")
			if counts[key] == 0 {
				order = append(order, key)
				sample[key] = text
			}
			counts[key]++
		}
		f.Close()
		for _, k := range order {
			s := sample[k]
			if len(s) > 300 {
				s = s[:300] + "…"
			}
			out = append(out, fmt.Sprintf("%s: %d× %s", filepath.Base(m.path), counts[k], s))
		}
	}
	return out
}
