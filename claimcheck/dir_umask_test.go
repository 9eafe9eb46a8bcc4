//go:build unix

package claimcheck_test

import (
	"io/fs"
	"syscall"
	"testing"

	"github.com/acemq-go/acemq/claimcheck"
)

// The mode is set explicitly, so a service's umask (077 under many
// systemd units) does not decide it. syscall.Umask is process-wide: this
// test is not parallel (no parallel test runs beside a sequential one) and
// puts the umask back.
func TestDirFileModeIgnoresTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	t.Cleanup(func() { syscall.Umask(old) })
	path := t.TempDir()
	for _, want := range []fs.FileMode{claimcheck.DefaultFileMode, 0o664} {
		d, err := claimcheck.NewDir(path, claimcheck.WithFileMode(want))
		if err != nil {
			t.Fatal(err)
		}
		key, err := d.Put(t.Context(), []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if got := mode(t, path, key); got != want {
			t.Errorf("under umask 077, WithFileMode(%v) wrote a file of mode %v", want, got)
		}
	}
}
