package claimcheck_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/acemq-go/acemq/claimcheck"
)

// mode is the permission bits of the payload under key in dir.
func mode(t *testing.T, dir, key string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(filepath.Join(dir, key))
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// A payload file is readable by the fleet's other services by default
// (0644, as the Ruby library writes it): a consumer running as another
// user on the same directory must read it. Another mode is an option.
func TestDirFileModes(t *testing.T) {
	path := t.TempDir()
	key, err := newDir(t, path).Put(t.Context(), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if got := mode(t, path, key); got != 0o644 || claimcheck.DefaultFileMode != 0o644 {
		t.Errorf("a payload file has mode %v (DefaultFileMode %v); want -rw-r--r--", got, claimcheck.DefaultFileMode)
	}
	for _, want := range []fs.FileMode{0o600, 0o640, 0o664, 0o666} {
		d, err := claimcheck.NewDir(path, claimcheck.WithFileMode(want))
		if err != nil {
			t.Fatalf("WithFileMode(%v): %v", want, err)
		}
		key, err := d.Put(t.Context(), []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if got := mode(t, path, key); got != want {
			t.Errorf("WithFileMode(%v) wrote a file of mode %v", want, got)
		}
	}
}

// A mode without the owner's read and write (the store could not read
// back what it wrote) or with bits beyond 0777 (setuid, a directory) is
// refused by NewDir, not found out at the first Put.
func TestDirRefusesFileModesThatMakeNoSense(t *testing.T) {
	path := t.TempDir()
	for _, m := range []fs.FileMode{0, 0o400, 0o200, 0o044, 0o1644, 0o4644, fs.ModeDir | 0o644, 0o10644} {
		if _, err := claimcheck.NewDir(path, claimcheck.WithFileMode(m)); !errors.Is(err, claimcheck.ErrInvalidOption) {
			t.Errorf("WithFileMode(%#o): %v; want ErrInvalidOption", uint32(m), err)
		}
	}
	if _, err := claimcheck.NewDir(path, nil); !errors.Is(err, claimcheck.ErrInvalidOption) {
		t.Errorf("a nil option: %v; want ErrInvalidOption", err)
	}
}
