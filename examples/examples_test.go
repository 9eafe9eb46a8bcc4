// Package examples_test holds the examples to the output their docs pages
// show. Every directory here with a main.go is an example: it is built
// once, run on memory:// (and SQLite
// in a temporary directory, where it keeps a database), and what it prints
// must be, byte for byte, the block of the docs page that shows it (but
// standing-load, whose lines vary from run to run: TestStandingLoad holds
// it to the family's line format):
//
//	<!-- output of go run ./examples/<name> -->
//	```text
//	...
//	```
//
// With the test broker (ACEMQ_TEST_URL) it runs again with -broker on it,
// and -db on the test PostgreSQL (ACEMQ_TEST_POSTGRES_URL) when it takes
// one, and must print the same. Under CI=true a missing server fails that
// run; elsewhere it skips, as every broker test does.
package examples_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
)

// runTimeout bounds one run of an example, which takes seconds.
const runTimeout = 2 * time.Minute

func TestExamples(t *testing.T) {
	names := examples(t)
	pages := docsPages(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want, shown := shownOutput(pages, name)
			bin := build(t, name)
			flags := flagsOf(t, bin)
			if !flags["broker"] {
				t.Fatalf("examples/%s takes no -broker flag: every example runs on memory:// by default and on RabbitMQ with -broker", name)
			}

			t.Run("memory", func(t *testing.T) {
				got := run(t, bin)
				if shown != nil {
					t.Fatalf("%v\nIt printed:\n%s", shown, got)
				}
				compare(t, name, want, got)
			})
			t.Run("servers", func(t *testing.T) {
				if shown != nil {
					t.Fatal(shown)
				}
				args := []string{"-broker", brokertest.URL(t)}
				if flags["db"] {
					args = append(args, "-db", dbtest.PostgresURL(t))
				}
				compare(t, name, want, run(t, bin, args...))
			})
		})
	}
}

// examples are the directories here that hold a main.go.
func examples(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob(filepath.Join("*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mains) == 0 {
		t.Fatal("no examples/*/main.go found")
	}
	var names []string
	for _, m := range mains {
		if name := filepath.Dir(m); name != standingLoad { // TestStandingLoad's
			names = append(names, name)
		}
	}
	return names
}

// docsPages reads docs/*.md, by file name.
func docsPages(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages["docs/"+filepath.Base(f)] = string(b)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	return pages
}

// marker is the comment that introduces an example's output in a docs
// page.
func marker(name string) string { return "<!-- output of go run ./examples/" + name + " -->" }

// shownOutput is the output block that follows name's marker in pages: it
// must be in exactly one place, and followed by a ```text fence.
func shownOutput(pages map[string]string, name string) (string, error) {
	block := regexp.MustCompile(regexp.QuoteMeta(marker(name)) + "[ \t]*\n```text\n((?s:.*?))```[ \t]*(\n|$)")
	var found []string
	var out string
	for page, text := range pages {
		n := strings.Count(text, marker(name))
		for range n {
			found = append(found, page)
		}
		if n == 0 {
			continue
		}
		m := block.FindStringSubmatch(text)
		if m == nil {
			return "", fmt.Errorf("%s: %s is not followed by a ```text block", page, marker(name))
		}
		out = m[1]
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no docs page shows the output of examples/%s: add to its page\n%s\n```text\n(its output)\n```", name, marker(name))
	case 1:
		return out, nil
	}
	return "", fmt.Errorf("the output of examples/%s is shown %d times (%s): keep one", name, len(found), strings.Join(found, ", "))
}

// build compiles examples/name once, into the test's temporary directory.
func build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "./"+name)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/%s: %v\n%s", name, err, out)
	}
	return bin
}

// flagsOf lists the flags bin takes, from its -h usage (package flag's:
// "  -name type").
func flagsOf(t *testing.T, bin string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("%s -h: %v\n%s", filepath.Base(bin), err, out)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([A-Za-z0-9_-]+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	return flags
}

// run runs bin with args and returns its stdout; a failure, or stderr,
// is shown.
func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s did not end within %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), runTimeout, &stdout, &stderr)
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), err, &stdout, &stderr)
	}
	if stderr.Len() > 0 {
		t.Logf("%s wrote to stderr:\n%s", filepath.Base(bin), &stderr)
	}
	return stdout.String()
}

// compare fails t, with a diff, when got is not want.
func compare(t *testing.T, name, want, got string) {
	t.Helper()
	if got != want {
		t.Errorf("examples/%s printed what its docs page does not show (- docs, + printed):\n%s", name, lineDiff(want, got))
	}
}

// lineDiff is a line diff of a and b: unchanged lines indented, removed
// ones marked -, added ones +.
func lineDiff(a, b string) string {
	x, y := lines(a), lines(b)
	// common[i][j] is the length of the longest common subsequence of
	// x[i:] and y[j:].
	common := make([][]int, len(x)+1)
	for i := range common {
		common[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				common[i][j] = common[i+1][j+1] + 1
			} else {
				common[i][j] = max(common[i+1][j], common[i][j+1])
			}
		}
	}
	var out strings.Builder
	line := func(mark, s string) {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		out.WriteString(mark + s)
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			line("  ", x[i])
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || common[i+1][j] >= common[i][j+1]):
			line("- ", x[i])
			i++
		default:
			line("+ ", y[j])
			j++
		}
	}
	return out.String()
}

// lines splits s after each newline; a last line without one is a line too.
func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func TestShownOutput(t *testing.T) {
	block := marker("x") + "\n```text\none\ntwo\n```\n"
	for _, c := range []struct {
		what  string
		pages map[string]string
		want  string // the output, or a word of the error
	}{
		{"one block", map[string]string{"docs/a.md": "intro\n" + block + "more\n"}, "one\ntwo\n"},
		{"at the end of the page", map[string]string{"docs/a.md": strings.TrimSuffix(block, "\n")}, "one\ntwo\n"},
		{"missing", map[string]string{"docs/a.md": "intro\n" + marker("xy") + "\n```text\n```\n"}, "no docs page"},
		{"no fence", map[string]string{"docs/a.md": marker("x") + "\n\n```text\none\n```\n"}, "not followed"},
		{"another fence", map[string]string{"docs/a.md": marker("x") + "\n```go\none\n```\n"}, "not followed"},
		{"twice", map[string]string{"docs/a.md": block, "docs/b.md": block}, "2 times"},
	} {
		got, err := shownOutput(c.pages, "x")
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) || (err == nil) != strings.HasSuffix(c.want, "\n") {
			t.Errorf("%s: got %q, want %q", c.what, got, c.want)
		}
	}
}

func TestLineDiff(t *testing.T) {
	got := lineDiff("a\nb\nc\n", "a\nB\nc\nd")
	want := "  a\n- b\n+ B\n  c\n+ d\n"
	if got != want {
		t.Errorf("lineDiff = %q, want %q", got, want)
	}
}
