package acemq_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Every Go block of docs/*.md (and README.md past its first, which
// TestREADMEExampleIsCompiled compiles) compiles: a reader who copies
// one gets the API as it is. Each block is turned into a package
// mechanically (docBlock.source); one `go build` and one `go vet` check
// them all, and //line directives make each error name its page and line.
//
// What a block may assume, besides what it declares itself:
//   - ctx (a context.Context) and conn (an *acemq.Conn), the two names
//     nearly every block uses;
//   - the packages it names (acemq., time., contract., ...): imported for it
//     from docImports when the block has no import of that name;
//   - declarations written, one a line, in an HTML comment right before
//     the block (invisible on the rendered page), at file scope:
//     <!-- go:
//     import "github.com/acemq-go/acemq/idempotency/sqlstore"
//     type Order struct{ ID string }
//     func ship(context.Context, Order) error
//     -->
//     A function declared there without a body gets one that panics.
//
// A block's lines that start at column 0 with func are file-scope
// declarations; an import declaration becomes the file's imports; all
// else is statements, run in a function returning error. A line that is
// only "..." stands for code left out. A block that is not Go for the
// compiler (a shell session, YAML) is not tagged go.
func TestEveryDocGoBlockCompiles(t *testing.T) {
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	// README.md's one Go block is compiled as readmeFirstLook, which
	// TestREADMEExampleIsCompiled holds equal to it; any other is built here.
	readme, err := readDocBlocks("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readme[min(1, len(readme)):]
	for _, page := range pages {
		bs, err := readDocBlocks(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	if len(blocks) == 0 {
		t.Fatal("found no Go block in docs/*.md")
	}

	// Inside the root module (so the workspace's modules resolve), under
	// testdata (so ./... never sees it).
	dir, err := os.MkdirTemp("testdata", "docblocks-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	for i, b := range blocks {
		src, err := b.source(root)
		if err != nil {
			t.Errorf("%s:%d: the Go block starting here cannot be wrapped: %v", b.page, b.line, err)
			continue
		}
		pkg := filepath.Join(dir, fmt.Sprintf("b%02d", i))
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "block.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(pkg))
	}

	// go build names up to ten errors of a package, go vet only its first:
	// vet only what builds.
	// With the test's own -race, the packages the blocks import are
	// already compiled (make test builds every test with it).
	var race []string
	if raceBuild {
		race = []string{"-race"}
	}
	out, err := exec.Command("go", slices.Concat([]string{"build"}, race, pkgs)...).CombinedOutput()
	if err == nil {
		out, err = exec.Command("go", slices.Concat([]string{"vet"}, race, pkgs)...).CombinedOutput()
	}
	if err == nil {
		return
	}
	// Group the errors by the block they are in.
	byBlock := map[int][]string{}
	var other []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		l = strings.ReplaceAll(l, root+string(filepath.Separator), "")
		l = strings.TrimPrefix(strings.TrimPrefix(l, "vet: "), "./")
		if strings.HasPrefix(l, "#") {
			continue
		}
		i := blockOf(blocks, l)
		if i < 0 {
			other = append(other, l)
			continue
		}
		byBlock[i] = append(byBlock[i], l)
	}
	var idx []int
	for i := range byBlock {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		t.Errorf("%s:%d: the Go block starting here does not compile:\n\t%s", blocks[i].page, blocks[i].line, strings.Join(byBlock[i], "\n\t"))
	}
	if len(other) > 0 || len(idx) == 0 {
		t.Errorf("go vet of the doc blocks: %v\n%s", err, strings.Join(other, "\n"))
	}
}

// docBlock is one ```go block of a page: its text, where its first line
// is, and the declarations its marker comment gives it.
type docBlock struct {
	page       string
	line       int // of the fence
	lines      []string
	marker     string
	markerLine int
}

var docMarker = regexp.MustCompile(`(?s)^<!-- go:(.*)-->$`)

func readDocBlocks(page string) ([]docBlock, error) {
	f, err := os.Open(page)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks  []docBlock
		cur     *docBlock
		comment []string // an HTML comment being read, or just read
		start   int      // its first line
		end     int      // its last line, once read
		n       int
	)
	s := bufio.NewScanner(f)
	for s.Scan() {
		n++
		l := s.Text()
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		case l == "```go":
			cur = &docBlock{page: page, line: n}
			if end == n-1 {
				if m := docMarker.FindStringSubmatch(strings.Join(comment, "\n")); m != nil {
					cur.marker, cur.markerLine = m[1], start
				}
			}
		case strings.HasPrefix(l, "<!--"):
			comment, start, end = []string{l}, n, 0
			if strings.HasSuffix(l, "-->") {
				end = n
			}
		case comment != nil && end == 0:
			comment = append(comment, l)
			if strings.HasSuffix(l, "-->") {
				end = n
			}
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a Go block is not closed", page, cur.line)
	}
	return blocks, s.Err()
}

// blockOf finds the block an error line ("page:line:col: ...") is in.
func blockOf(blocks []docBlock, errLine string) int {
	page, rest, ok := strings.Cut(errLine, ":")
	if !ok {
		return -1
	}
	num, _, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(num)
	if err != nil {
		return -1
	}
	for i, b := range blocks {
		first := b.line
		if b.marker != "" {
			first = b.markerLine
		}
		if b.page == page && n >= first && n <= b.line+len(b.lines) {
			return i
		}
	}
	return -1
}

// docImports are the packages a block may name without importing them.
var docImports = map[string]string{
	"acemq":       "github.com/acemq-go/acemq",
	"acemqtest":   "github.com/acemq-go/acemq/acemqtest",
	"contract":    "github.com/acemq-go/acemq/contract",
	"memory":      "github.com/acemq-go/acemq/transport/memory",
	"transport":   "github.com/acemq-go/acemq/transport",
	"encryption":  "github.com/acemq-go/acemq/encryption",
	"claimcheck":  "github.com/acemq-go/acemq/claimcheck",
	"outbox":      "github.com/acemq-go/acemq/outbox",
	"partition":   "github.com/acemq-go/acemq/partition",
	"pipeline":    "github.com/acemq-go/acemq/pipeline",
	"request":     "github.com/acemq-go/acemq/request",
	"saga":        "github.com/acemq-go/acemq/saga",
	"schedule":    "github.com/acemq-go/acemq/schedule",
	"stream":      "github.com/acemq-go/acemq/stream",
	"protobuf":    "github.com/acemq-go/acemq/codec/protobuf",
	"avro":        "github.com/acemq-go/acemq/codec/avro",
	"acemqprom":   "github.com/acemq-go/acemq/acemqprom",
	"acemqotel":   "github.com/acemq-go/acemq/acemqotel",
	"actuator":    "github.com/acemq-go/acemq/actuator",
	"idempotency": "github.com/acemq-go/acemq/idempotency",
	"context":     "context",
	"errors":      "errors",
	"fmt":         "fmt",
	"log":         "log",
	"os":          "os",
	"slog":        "log/slog",
	"sql":         "database/sql",
	"testing":     "testing",
	"time":        "time",
}

// source is the block as a Go file: its package, imports, the marker's
// declarations, its own file-scope declarations, and its statements in a
// function, each part under a //line directive naming where it is on the
// page, so the compiler's errors point there.
func (b docBlock) source(root string) ([]byte, error) {
	at := func(line int) string { return fmt.Sprintf("//line %s:%d\n", filepath.Join(root, b.page), line) }
	var imports, decls, stmts bytes.Buffer
	part := &stmts
	for i, l := range b.lines {
		switch {
		case strings.TrimSpace(l) == "...":
			l = "// ..."
		case strings.HasPrefix(l, "import "):
			part = &imports
		case strings.HasPrefix(l, "func "):
			part = &decls
		}
		part.WriteString(at(b.line+1+i) + l + "\n")
		if part != &stmts && (l == ")" || l == "}" || strings.HasPrefix(l, "import \"")) {
			part = &stmts
		}
	}

	var marker bytes.Buffer
	for i, l := range strings.Split(strings.TrimSpace(b.marker), "\n") {
		if l == "" {
			continue
		}
		part := &marker
		if strings.HasPrefix(l, "import ") {
			part = &imports
		}
		part.WriteString(at(b.markerLine+i) + bodiless.ReplaceAllString(l, "$1 { panic(0) }") + "\n")
	}
	src := "package docblock\n\n" + imports.String() + "\n" + marker.String() + "\n" + decls.String() +
		"\nvar (\n\tctx  = context.Background()\n\tconn *acemq.Conn\n)\n\nfunc _() error {\n" + stmts.String() + "return nil\n}\n"
	src, err := useVariables(src)
	if err != nil {
		return nil, err
	}
	src, err = addImports(src)
	return []byte(src), err
}

// useVariables uses, at the end of each function, the variables declared
// at its top: a block need not use all it declares.
func useVariables(src string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	type insert struct {
		at   int
		text string
	}
	var ins []insert
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || len(fn.Body.List) == 0 {
			continue
		}
		var uses strings.Builder
		for _, st := range fn.Body.List {
			for _, id := range declaredBy(st) {
				if id != "_" {
					fmt.Fprintf(&uses, "_ = %s\n", id)
				}
			}
		}
		at := fn.Body.Rbrace
		if fn.Name.Name == "_" { // before its return nil
			at = fn.Body.List[len(fn.Body.List)-1].Pos()
		}
		ins = append(ins, insert{fset.Position(at).Offset, uses.String()})
	}
	sort.Slice(ins, func(i, j int) bool { return ins[i].at > ins[j].at })
	for _, in := range ins {
		src = src[:in.at] + in.text + src[in.at:]
	}
	return src, nil
}

// bodiless matches a marker's function declared without a body.
var bodiless = regexp.MustCompile(`^(func .*[^{}])$`)

func declaredBy(st ast.Stmt) []string {
	var ids []string
	switch s := st.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			for _, e := range s.Lhs {
				ids = append(ids, e.(*ast.Ident).Name)
			}
		}
	case *ast.DeclStmt:
		if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				for _, n := range sp.(*ast.ValueSpec).Names {
					ids = append(ids, n.Name)
				}
			}
		}
	}
	return ids
}

// addImports imports each package of docImports the file names but does
// not import, as goimports would.
func addImports(src string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		have[name] = true
	}
	need := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Obj == nil && docImports[id.Name] != "" && !have[id.Name] {
				need[id.Name] = true
			}
		}
		return true
	})
	var names []string
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	var imp strings.Builder
	for _, n := range names {
		fmt.Fprintf(&imp, "import %q\n", docImports[n])
	}
	return strings.Replace(src, "package docblock\n", "package docblock\n\n"+imp.String(), 1), nil
}
