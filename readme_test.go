package acemq_test

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The README's first Go example is compiled as readmeFirstLook in
// readme_example_test.go: the two must say the same, and that file may
// import nothing of the module but its root package.
func TestREADMEExampleIsCompiled(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## A first look\n\n```go\n(.*?)```\n").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no Go example under \"## A first look\"")
	}
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(src), "func readmeFirstLook(ctx context.Context) error {\n")
	end := strings.Index(string(src), "\treturn nil\n}\n")
	if start < 0 || end < start {
		t.Fatal("readme_example_test.go lost readmeFirstLook")
	}
	var body strings.Builder
	for _, line := range strings.SplitAfter(string(src[start:end]), "\n")[1:] {
		body.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if body.String() != string(m[1]) {
		t.Errorf("README.md's example and readmeFirstLook differ; make them the same.\nREADME.md:\n%s\nreadme_example_test.go:\n%s", m[1], body.String())
	}

	f, err := parser.ParseFile(token.NewFileSet(), "readme_example_test.go", src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if strings.Contains(strings.Split(path, "/")[0], ".") && path != "github.com/acemq-go/acemq" {
			t.Errorf("the README's example imports %s: a service author's first look imports only the root package", path)
		}
	}
}
