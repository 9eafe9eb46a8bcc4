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

// maxFuncLines bounds a function of the library, its braces included: one
// longer does more than one job (Topology.build validated and built at
// once) and is split by job.
const maxFuncLines = 100

// TestNoLongFunctions keeps every function of the library at most
// maxFuncLines long: the non-test Go files of every module but programs
// (package main: the command, the examples) and what serves tests or
// measures (internal/testing, bench).
func TestNoLongFunctions(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || path == "bench" || path == filepath.Join("internal", "testing")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil || f.Name.Name == "main" {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "a function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, name = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			start, end := fset.Position(n.Pos()), fset.Position(body.Rbrace)
			if lines := end.Line - start.Line + 1; lines > maxFuncLines {
				t.Errorf("%s: %s is %d lines long, more than %d: split it by job", start, name, lines, maxFuncLines)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
