package acemq_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// heavyModules are what a service that imports only the root must not
// download: each belongs to a module of its own (docs/modules.md).
var heavyModules = []string{
	"github.com/spf13/cobra",
	"github.com/chromedp/",
	"github.com/jackc/pgx",
	"modernc.org/sqlite",
	"github.com/hamba/avro",
	"google.golang.org/protobuf",
	"github.com/prometheus/",
	"go.opentelemetry.io/",
}

// maxServiceModules bounds a root-only service's module graph (its own
// module included); it was 57 while one module carried everything.
const maxServiceModules = 15

// A service that imports the root alone and connects over amqp:// has a
// small module graph, none of it heavy, and links only amqp091-go and uuid
// besides the standard library.
func TestAServiceOfTheRootAloneHasASmallModuleGraph(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/service\n\ngo 1.26\n\nrequire github.com/acemq-go/acemq v0.0.0\n\nreplace github.com/acemq-go/acemq => "+root+"\n")
	write("main.go", `package main

import (
	"context"

	"github.com/acemq-go/acemq"
)

func main() {
	conn, err := acemq.Connect(context.Background(), "amqp://localhost")
	if err == nil {
		conn.Close()
	}
}
`)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command: %v", err)
	}
	goTool := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		// The service is a module of its own, outside this repository's go.work.
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goTool("mod", "tidy")
	goTool("build", "-o", os.DevNull, ".")

	modules := strings.Fields(goTool("list", "-m", "-f", "{{.Path}}", "all"))
	t.Logf("%d modules: %s", len(modules), strings.Join(modules, " "))
	if len(modules) > maxServiceModules {
		t.Errorf("the service's graph has %d modules, want at most %d", len(modules), maxServiceModules)
	}
	for _, m := range modules {
		for _, heavy := range heavyModules {
			if strings.HasPrefix(m, heavy) {
				t.Errorf("the service's graph holds %s", m)
			}
		}
	}

	linked := strings.Fields(goTool("list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "."))
	slices.Sort(linked)
	linked = slices.Compact(linked)
	want := []string{"example.com/service", "github.com/acemq-go/acemq", "github.com/google/uuid", "github.com/rabbitmq/amqp091-go"}
	if !slices.Equal(linked, want) {
		t.Errorf("the service links the modules %v, want %v", linked, want)
	}
}
