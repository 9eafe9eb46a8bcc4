package contract_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// docRow is one row of a table in docs/contract.md: its first two cells,
// backticks removed.
type docRow struct {
	line        int
	name, value string
}

// docRows reads every table row of docs/contract.md whose first cell is
// code.
func docRows(t *testing.T) []docRow {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []docRow
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		cells := strings.Split(s.Text(), "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		unquote := func(c string) string { return strings.Trim(strings.TrimSpace(c), "`") }
		rows = append(rows, docRow{line: n, name: unquote(cells[1]), value: unquote(cells[2])})
	}
	return rows
}

// constants type-checks package contract from its source and returns its
// exported constants: what the page must list, with the values it must give.
// The check (its imports type-checked from source too) is done once for
// all the tests that ask.
func constants(t *testing.T) map[string]*types.Const {
	t.Helper()
	consts, err := checkedConstants()
	if err != nil {
		t.Fatal(err)
	}
	return consts
}

var checkedConstants = sync.OnceValues(func() (map[string]*types.Const, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("contract", fset, files, nil)
	if err != nil {
		return nil, err
	}
	consts := map[string]*types.Const{}
	for _, name := range pkg.Scope().Names() {
		if c, ok := pkg.Scope().Lookup(name).(*types.Const); ok && c.Exported() {
			consts[name] = c
		}
	}
	return consts, nil
})

// render writes a constant as the page does: strings as they are, durations
// in Go's syntax, numbers exactly.
func render(c *types.Const) string {
	if c.Val().Kind() == constant.String {
		return constant.StringVal(c.Val())
	}
	if named, ok := c.Type().(*types.Named); ok && named.Obj().Pkg().Path() == "time" && named.Obj().Name() == "Duration" {
		n, _ := constant.Int64Val(c.Val())
		return time.Duration(n).String()
	}
	if basic, ok := c.Type().(*types.Basic); ok && basic.Kind() == types.Byte {
		n, _ := constant.Int64Val(c.Val())
		return fmt.Sprintf("0x%02X", n) // a framing's byte, as the contract writes it
	}
	if c.Val().Kind() == constant.Float {
		f, _ := constant.Float64Val(c.Val())
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return c.Val().ExactString()
}

// TestDocListsEveryConstant holds docs/contract.md and the package to each
// other: every exported constant has a row giving its value, and every row
// naming a constant gives the value it has.
func TestDocListsEveryConstant(t *testing.T) {
	consts := constants(t)
	listed := map[string]bool{}
	constRow := regexp.MustCompile(`^contract\.([A-Za-z0-9]+)$`)
	for _, r := range docRows(t) {
		m := constRow.FindStringSubmatch(r.name)
		if m == nil {
			continue
		}
		c, ok := consts[m[1]]
		if !ok {
			t.Errorf("docs/contract.md:%d names contract.%s, which is no constant of the package", r.line, m[1])
			continue
		}
		listed[m[1]] = true
		if got := render(c); got != r.value {
			t.Errorf("docs/contract.md:%d gives contract.%s as %q; it is %q", r.line, m[1], r.value, got)
		}
	}
	for name := range consts {
		if !listed[name] {
			t.Errorf("contract.%s = %q is not listed in docs/contract.md", name, render(consts[name]))
		}
	}
}

// TestDocDelaysAndReasons checks the page's examples of the functions: the
// rendered delays and the reasons.
func TestDocDelaysAndReasons(t *testing.T) {
	call := regexp.MustCompile(`^contract\.(ExhaustedReason|TooOldReason)\(([^)]*)\)$`)
	delays, reasons := 0, 0
	for _, r := range docRows(t) {
		if m := call.FindStringSubmatch(r.name); m != nil {
			var got string
			switch m[1] {
			case "ExhaustedReason":
				var n int
				for _, c := range m[2] {
					n = n*10 + int(c-'0')
				}
				got = contract.ExhaustedReason(n)
			case "TooOldReason":
				d, err := time.ParseDuration(m[2])
				if err != nil {
					t.Fatalf("docs/contract.md:%d: %v", r.line, err)
				}
				got = contract.TooOldReason(d)
			}
			reasons++
			if got != r.value {
				t.Errorf("docs/contract.md:%d: %s is %q, the page says %q", r.line, r.name, got, r.value)
			}
		}
	}
	// The delay table's cells are not code: read them apart.
	f, err := os.ReadFile(filepath.Join("..", "docs", "contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	delayRow := regexp.MustCompile(`(?m)^\| ([0-9.]+(?:ms|s)) \| ([0-9]+[smh]) \|$`)
	for _, m := range delayRow.FindAllStringSubmatch(string(f), -1) {
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		delays++
		if got := contract.RenderDelay(d); got != m[2] {
			t.Errorf("docs/contract.md renders %s as %q; RenderDelay gives %q", m[1], m[2], got)
		}
	}
	if delays < 12 || reasons < 3 {
		t.Errorf("docs/contract.md has %d delay rows and %d reason rows; the page lost its tables", delays, reasons)
	}
}

// TestDocSetAsideTexts holds the page's table of the family's set-aside
// texts to ClassifyReason: each row's text has the row's class ("" for a
// text that is none of them), and every entry of SetAsideTexts is the one
// that classifies at least one row.
func TestDocSetAsideTexts(t *testing.T) {
	call := regexp.MustCompile(`^contract\.ClassifyReason\(("[^"]*")\)$`)
	texts := contract.SetAsideTexts()
	used := make([]bool, len(texts))
	rows := 0
	for _, r := range docRows(t) {
		m := call.FindStringSubmatch(r.name)
		if m == nil {
			continue
		}
		rows++
		text, err := strconv.Unquote(m[1])
		if err != nil {
			t.Fatalf("docs/contract.md:%d: %v", r.line, err)
		}
		got, ok := contract.ClassifyReason(text)
		if string(got) != r.value || ok != (r.value != "") {
			t.Errorf("docs/contract.md:%d: ClassifyReason(%q) = %q, %v; the page says %q", r.line, text, got, ok, r.value)
		}
		for i, st := range texts {
			if st.Start.MatchString(text) {
				used[i] = true
				break
			}
		}
	}
	for i, st := range texts {
		if !used[i] {
			t.Errorf("SetAsideTexts[%d] (%s, %s: %s) classifies no row of docs/contract.md", i, st.Start, st.Class, st.Writers)
		}
	}
	if rows < len(texts) {
		t.Errorf("docs/contract.md has %d ClassifyReason rows for %d texts; the page lost its table", rows, len(texts))
	}
}
