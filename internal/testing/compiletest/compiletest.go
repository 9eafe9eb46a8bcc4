// Package compiletest checks what the compiler says of statements: that an
// option given to a constructor that does not take it is a compile error,
// a fact no run-time test can show.
package compiletest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Case is one statement and what the compiler must say of it: Error is a
// piece of its error message, or "" when the statement must compile (a
// control, so that a file that fails for another reason fails the test).
type Case struct {
	Code  string
	Error string
}

// Check compiles one function, with params as its parameters, whose body
// is every case's statement on a line of its own, in a package importing
// imports, under testdata of the test's package (so that the workspace's
// modules resolve, and ./... never sees it). Each case must get its error
// and nothing else, and no other line any.
func Check(t *testing.T, imports []string, params string, cases []Case) {
	t.Helper()
	// testdata stays: removing it when it is empty could pull it from
	// under another run of the package's tests (make test runs some
	// packages in two parts at once), and git keeps no empty directory.
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "compiletest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var src strings.Builder
	src.WriteString("package compiletest\n\nimport (\n")
	for _, imp := range imports {
		fmt.Fprintf(&src, "\t%q\n", imp)
	}
	fmt.Fprintf(&src, ")\n\nfunc _(%s) {\n", params)
	first := strings.Count(src.String(), "\n") + 1 // the line of the first case
	for _, c := range cases {
		src.WriteString("\t" + c.Code + "\n")
	}
	src.WriteString("}\n")
	if err := os.WriteFile(filepath.Join(dir, "cases.go"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	// -e: every error, not the first ten. The race flag as the test's, so
	// that the imported packages come compiled from the test's build.
	out, _ := exec.Command("go", slices.Concat([]string{"build", "-gcflags=-e", "-o", os.DevNull}, raceFlag, []string{"./" + filepath.ToSlash(dir)})...).CombinedOutput()
	byLine := map[int][]string{}
	at := regexp.MustCompile(`cases\.go:(\d+):\d+: (.*)`)
	for _, l := range strings.Split(string(out), "\n") {
		if m := at.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			byLine[n] = append(byLine[n], m[2])
		} else if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			t.Errorf("go build said: %s", l)
		}
	}
	for i, c := range cases {
		got := strings.Join(byLine[first+i], "; ")
		delete(byLine, first+i)
		switch {
		case c.Error == "" && got != "":
			t.Errorf("%s: does not compile: %s", c.Code, got)
		case c.Error != "" && !strings.Contains(got, c.Error):
			t.Errorf("%s: the compiler said %q; want an error saying %q", c.Code, got, c.Error)
		}
	}
	for n, errs := range byLine {
		t.Errorf("line %d of the cases' file: %s", n, strings.Join(errs, "; "))
	}
}
