package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/claimcheck"
)

func newDir(t *testing.T, path string) *claimcheck.Dir {
	t.Helper()
	d, err := claimcheck.NewDir(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// names lists the files in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestDirRoundTrip(t *testing.T) {
	path := t.TempDir()
	d := newDir(t, path)
	ctx := t.Context()
	key, err := d.Put(ctx, []byte("the payload"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, path); !slices.Equal(got, []string{key}) {
		t.Errorf("the directory holds %v, want just %s", got, key)
	}
	got, err := d.Get(ctx, key)
	if err != nil || string(got) != "the payload" {
		t.Errorf("Get = %q, %v", got, err)
	}
	// Another process's store on the same directory reads it.
	if got, err := newDir(t, path).Get(ctx, key); err != nil || string(got) != "the payload" {
		t.Errorf("Get through a second Dir = %q, %v", got, err)
	}
	deleted(t, d, key)
}

// deleted deletes key from s and sees it gone: Get fails with ErrNotFound
// naming the key, and deleting it again is no error.
func deleted(t *testing.T, s claimcheck.Store, key string) {
	t.Helper()
	ctx := t.Context()
	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, claimcheck.ErrNotFound) || !strings.Contains(err.Error(), key) {
		t.Errorf("Get after Delete: %v; want ErrNotFound naming the key", err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Errorf("deleting a key already gone: %v", err)
	}
}

func TestNewDirRefusesWhatIsNoDirectory(t *testing.T) {
	path := t.TempDir()
	if _, err := claimcheck.NewDir(filepath.Join(path, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NewDir of a missing directory: %v; want it refused, not made", err)
	}
	if _, err := os.Stat(filepath.Join(path, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NewDir made the directory: %v", err)
	}
	file := filepath.Join(path, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := claimcheck.NewDir(file); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("NewDir of a file: %v", err)
	}
}

// A key must match [A-Za-z0-9][A-Za-z0-9._-]{0,127} before it becomes a
// path: traversal, separators, hidden names (Put's temporary files) and
// long names are refused, and nothing outside the directory is read or
// removed.
func TestDirKeyValidation(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "store")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDir(t, path)
	ctx := t.Context()
	for _, key := range []string{
		"../secret", "..", ".", "", "a/b", "/etc/passwd", secret, `..\secret`, "a\\b",
		".put-123", "-rf", "_x", "a\x00b", "a b", "é", "a\n", strings.Repeat("a", 129),
	} {
		if _, err := d.Get(ctx, key); !errors.Is(err, claimcheck.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v; want ErrInvalidKey", key, err)
		}
		if err := d.Delete(ctx, key); !errors.Is(err, claimcheck.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v; want ErrInvalidKey", key, err)
		}
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "not yours" {
		t.Errorf("the file outside the store is %q, %v", b, err)
	}
	// Keys that fit are looked up (and not found).
	for _, key := range []string{"a", "A.b_c-9", "0..1", strings.Repeat("a", 128), "7d1e6c5a-2b7f-4c1a-9f0e-3c2d1b0a9e8f"} {
		if _, err := d.Get(ctx, key); !errors.Is(err, claimcheck.ErrNotFound) {
			t.Errorf("Get(%q) = %v; want ErrNotFound", key, err)
		}
	}
	// Through the codec, an invalid key parks the message.
	c := newCodec(t, acemq.Bytes, d)
	var got []byte
	err := c.Unmarshal("", []byte("\xAC\x01\x01../secret"), &got)
	if !errors.Is(err, claimcheck.ErrInvalidKey) || !acemq.IsFatal(err) || acemq.IsTemporary(err) || got != nil {
		t.Errorf("an offloaded body naming ../secret: %v, %q; want a fatal ErrInvalidKey", err, got)
	}
}

// Put writes a temporary file in the store's own directory, under a name
// no key can take, and renames it: a reader sees the whole file or none.
func TestDirPutIsAtomic(t *testing.T) {
	path := t.TempDir()
	d := newDir(t, path)
	payload := bytes.Repeat([]byte("0123456789"), 10000)
	var during []string
	claimcheck.SetSync(d, func(f *os.File) error {
		if filepath.Dir(f.Name()) != path {
			t.Errorf("the temporary file %s is not in the store's directory %s", f.Name(), path)
		}
		during = names(t, path)
		for _, n := range during {
			if _, err := d.Get(t.Context(), n); !errors.Is(err, claimcheck.ErrInvalidKey) {
				t.Errorf("while Put writes, %s is visible to Get: %v", n, err)
			}
		}
		return f.Sync()
	}, nil)
	key, err := d.Put(t.Context(), payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(during) != 1 || !strings.HasPrefix(during[0], ".put-") {
		t.Errorf("while Put wrote, the directory held %v; want one .put- file", during)
	}
	if got := names(t, path); !slices.Equal(got, []string{key}) {
		t.Errorf("after Put, the directory holds %v; want just %s", got, key)
	}
	if got, err := d.Get(t.Context(), key); err != nil || !bytes.Equal(got, payload) {
		t.Errorf("Get = %d bytes, %v", len(got), err)
	}
}

// A Put that fails, whether before the rename or after it (syncing the
// directory), leaves no file behind and says what failed.
func TestDirFailedPutLeavesNoFile(t *testing.T) {
	errDisk := errors.New("input/output error")
	fail := func(*os.File) error { return errDisk }
	for name, set := range map[string]func(*claimcheck.Dir){
		"syncing the file":      func(d *claimcheck.Dir) { claimcheck.SetSync(d, fail, nil) },
		"syncing the directory": func(d *claimcheck.Dir) { claimcheck.SetSync(d, nil, fail) },
	} {
		path := t.TempDir()
		d := newDir(t, path)
		set(d)
		key, err := d.Put(t.Context(), []byte("payload"))
		if key != "" || !errors.Is(err, errDisk) || !strings.Contains(err.Error(), "claimcheck: writing the payload for key ") {
			t.Errorf("%s: Put = %q, %v; want the disk's error", name, key, err)
		}
		if got := names(t, path); len(got) != 0 {
			t.Errorf("%s: a failed Put left %v", name, got)
		}
		// And the codec's publish fails with it.
		c := newCodec(t, acemq.Bytes, d, claimcheck.WithThreshold(0))
		if _, err := c.Marshal([]byte("x")); !errors.Is(err, errDisk) {
			t.Errorf("%s: Marshal = %v", name, err)
		}
	}
	// A cancelled context writes nothing.
	path := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := newDir(t, path).Put(ctx, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: %v", err)
	}
	if got := names(t, path); len(got) != 0 {
		t.Errorf("a cancelled Put left %v", got)
	}
}

// A store directory that is gone (a share not mounted) is the store out of
// reach, retried, not every payload gone.
func TestDirGoneIsUnreachable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "share")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	d := newDir(t, path)
	key, err := d.Put(t.Context(), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	_, err = d.Get(t.Context(), key)
	if err == nil || errors.Is(err, claimcheck.ErrNotFound) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Get with the directory gone: %v; want an error that is not ErrNotFound", err)
	}
	c := newCodec(t, acemq.Bytes, d)
	var got []byte
	if err := c.Unmarshal("", append([]byte{0xAC, 0x01, 0x01}, key...), &got); !acemq.IsTemporary(err) {
		t.Errorf("reading with the directory gone: %v; want it temporary", err)
	}
}
