package acemq_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Patterns and example programs, tests included, reach the broker through
// *Conn, where the Observer and the interceptors see what goes by: none
// calls Conn.Transport(), the driver SPI's way in.
func TestPatternsReachTheBrokerThroughConn(t *testing.T) {
	dirs := []string{"stream", "partition", "request", "schedule", "pipeline", "slip", "saga", "outbox", "idempotency", "examples"}
	fset := token.NewFileSet()
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files++
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 0 {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Transport" {
						t.Errorf("%s: calls Transport(); go through the Conn", fset.Position(call.Pos()))
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 50 {
		t.Fatalf("read %d Go files in %v: the walk found too few to prove anything", files, dirs)
	}
}
