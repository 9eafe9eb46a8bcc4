package contract_test

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/contract"
)

// plainWord is a value that is an ordinary word ("quorum", "parked",
// "acemq", "message", "unknown"): spelled alone, it is as often a CLI verb,
// a metric label or a log word as the contract's value.
var plainWord = regexp.MustCompile(`^[a-z]*$`)

// checkedValues are the contract's string constants that no string literal
// outside the package may equal: every one but the plain words (the queue
// types too: e.name("quorum") names a test's queue). Header names are
// checked although some are plain words (traceparent): spelled alone, they
// can mean nothing else.
func checkedValues(t *testing.T) map[string]string {
	t.Helper()
	checked := map[string]string{}
	for name, c := range constants(t) {
		if c.Val().Kind() != constant.String {
			continue
		}
		v := constant.StringVal(c.Val())
		if plainWord.MatchString(v) && !strings.HasPrefix(name, "Header") {
			continue
		}
		if prev, ok := checked[v]; !ok || name < prev {
			checked[v] = name
		}
	}
	return checked
}

// literalPrefixes are the contract's prefixes: no literal outside the
// package may start with one (x-acemq-owner is ReservedHeaderPrefix +
// "owner").
var literalPrefixes = map[string]string{
	contract.ReservedHeaderPrefix:   "ReservedHeaderPrefix",
	contract.HeaderFirstDeathPrefix: "HeaderFirstDeathPrefix",
	contract.HeaderLastDeathPrefix:  "HeaderLastDeathPrefix",
}

// TestNoContractLiterals keeps package contract the one place the module
// (with the bench module in bench/) spells the contract. It parses every
// non-test .go file outside contract/ and fails on a string literal (not
// an import path or a struct tag) that
//   - equals a checked value (checkedValues: every string constant but
//     the plain words),
//   - starts with one of literalPrefixes, or
//   - starts as one of the family's set-aside texts (ClassifyReason).
//
// A value found inside a longer literal (help text, an error message that
// names x-message-ttl or Q.dlq) is not a spelling of the contract and is
// not checked. Test files are left out: a test spells the wire as it
// expects to see it.
func TestNoContractLiterals(t *testing.T) {
	checked := checkedValues(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != ".." && (path == filepath.Join("..", "contract") || name == "testdata" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		tags := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if field, ok := n.(*ast.Field); ok && field.Tag != nil {
				tags[field.Tag] = true
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.ImportSpec); ok {
				return false
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || tags[lit] {
				return true
			}
			at := fset.Position(lit.Pos())
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", at, err)
				return true
			}
			if name, ok := checked[s]; ok {
				t.Errorf("%s: %q is contract.%s", at, s, name)
				return true
			}
			for p, name := range literalPrefixes {
				if strings.HasPrefix(s, p) {
					t.Errorf("%s: %q starts with contract.%s", at, s, name)
				}
			}
			if class, ok := contract.ClassifyReason(s); ok {
				t.Errorf("%s: %q is a set-aside text of class %s: read it from package contract", at, s, class)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d Go files; the walk lost the module", files)
	}
}
