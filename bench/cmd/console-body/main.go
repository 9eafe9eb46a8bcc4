// Command console-body measures what a large request body costs the
// console: it serves a console (on memory://, in this process) and sends
// it 50 MB bodies (a form, announced and chunked; an import file; a
// topology file; the import file is accepted, within the default maximum
// of 256 MiB, and counted by a dry run), and prints, for each, the process's resident memory
// before, its peak during the request (VmHWM, reset before each request
// through /proc/self/clear_refs), and the answer. Linux only.
//
//	cd bench && go run ./cmd/console-body [-mb 50]
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/console"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

func main() {
	mb := flag.Int("mb", 50, "the size of each body, in MB (10^6 bytes)")
	flag.Parse()
	if err := run(int64(*mb) * 1000 * 1000); err != nil {
		fmt.Fprintln(os.Stderr, "console-body:", err)
		os.Exit(1)
	}
}

func run(size int64) error {
	ctx := context.Background()
	mb := memory.NewBroker()
	defer mb.Close()
	conn, err := acemq.New(mb.Connect())
	if err != nil {
		return err
	}
	defer conn.Close()
	dlq := contract.DeadLetterQueue("bench.body")
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: dlq, Type: transport.Classic, Durable: true}); err != nil {
		return err
	}
	line, err := exportLine(ctx, conn, dlq)
	if err != nil {
		return err
	}
	s, err := console.New(console.Config{Conn: conn, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer s.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = s.Serve(sctx, l) }()
	base := "http://" + l.Addr().String()

	page, err := http.Get(base + "/queue?name=" + dlq)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(b)
	if m == nil {
		return errors.New("no CSRF token on the queue page")
	}
	token := string(m[1])

	fmt.Printf("%s: %d-byte bodies to a console on memory://, %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), size, runtime.Version())
	form := func(chunked bool) (io.Reader, string, int64) {
		prefix := "csrf=" + token + "&op=purge+all&queue=" + dlq + "&pad="
		r := io.MultiReader(strings.NewReader(prefix), io.LimitReader(repeat("a"), size-int64(len(prefix))))
		if chunked {
			return r, "application/x-www-form-urlencoded", -1
		}
		return r, "application/x-www-form-urlencoded", size
	}
	upload := func(content string) func(bool) (io.Reader, string, int64) {
		return func(bool) (io.Reader, string, int64) {
			var head bytes.Buffer
			mw := multipart.NewWriter(&head)
			_ = mw.WriteField("csrf", token)
			_ = mw.WriteField("queue", dlq)
			_, _ = mw.CreateFormFile("file", "big.jsonl")
			tail := "\r\n--" + mw.Boundary() + "--\r\n"
			file := size - int64(head.Len()) - int64(len(tail))
			file -= file % int64(len(content)) // whole lines
			n := int64(head.Len()) + file + int64(len(tail))
			return io.MultiReader(&head, io.LimitReader(repeat(content), file), strings.NewReader(tail)), mw.FormDataContentType(), n
		}
	}
	for _, c := range []struct {
		name, path string
		chunked    bool
		body       func(bool) (io.Reader, string, int64)
	}{
		{"a form, its length announced", "/confirm", false, form},
		{"a form, chunked", "/confirm", true, form},
		{"an import file that is not an export (refused on line 1)", "/import", false, upload("not an export\n")},
		{"an import file (an export of the same message, repeated)", "/import", false, upload(line)},
		{"an import file, chunked", "/import", true, upload(line)},
		{"a topology file", "/drift", false, upload("queues: []\n")},
	} {
		runtime.GC()
		debug.FreeOSMemory()
		before := status("VmRSS")
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			return fmt.Errorf("resetting the peak RSS: %w", err)
		}
		body, contentType, length := c.body(c.chunked)
		req, _ := http.NewRequest(http.MethodPost, base+c.path, body)
		req.Header.Set("Content-Type", contentType)
		req.ContentLength = length
		if c.chunked {
			req.ContentLength = -1
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		answer := ""
		if err != nil {
			answer = "the connection ended: " + err.Error()
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answer = resp.Status + ": " + what(b)
		}
		peak := status("VmHWM")
		fmt.Printf("%-58s POST %-8s RSS before %5.1f MB, peak %5.1f MB (+%.1f MB), %v; %s\n", c.name, c.path,
			mib(before), mib(peak), mib(peak-before), time.Since(start).Round(time.Millisecond), answer)
	}
	return nil
}

// exportLine is one message of dlq as acemq dlq export writes it.
func exportLine(ctx context.Context, conn *acemq.Conn, dlq string) (string, error) {
	c, err := conn.Transport().Publish(ctx, transport.Publishing{RoutingKey: dlq, Mandatory: true, Message: transport.Message{
		Headers:     transport.Table{contract.HeaderID: "id-1", contract.HeaderError: "payment declined"},
		ContentType: contract.ContentTypeJSON, MessageID: "id-1", Persistent: true, Body: bytes.Repeat([]byte(`{"n":1}`), 100)}})
	if err != nil {
		return "", err
	}
	if err := c.Wait(ctx); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := deadletter.Export(ctx, conn, dlq, &b, true, deadletter.Options{}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// repeat reads s again and again.
func repeat(s string) io.Reader {
	return &repeater{s: s}
}

type repeater struct {
	s   string
	off int
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}

// what is the page's heading and message.
func what(page []byte) string {
	var parts []string
	for _, re := range []*regexp.Regexp{regexp.MustCompile(`<h1>([^<]*)</h1>`), regexp.MustCompile(`id="(?:error|what)"[^>]*>([^<]*)<`)} {
		if m := re.FindSubmatch(page); m != nil {
			parts = append(parts, strings.TrimSpace(string(m[1])))
		}
	}
	s := strings.Join(parts, ": ")
	if len(s) > 110 {
		s = s[:110] + "…"
	}
	return s
}

// status is a field of /proc/self/status, in bytes.
func status(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
