package encryption_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readSeeds reads the []byte values of a fuzz corpus directory (the
// "go test fuzz v1" format, one []byte argument a file).
func readSeeds(t *testing.T, dir string) [][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no seeds in %s: %v", dir, err)
	}
	var seeds [][]byte
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s is not a seed of one []byte", name)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seeds = append(seeds, []byte(s))
	}
	return seeds
}
