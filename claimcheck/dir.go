package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"

	"github.com/google/uuid"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
)

// keyPattern is what a key must match before Dir makes it a file name.
var keyPattern = regexp.MustCompile(contract.ClaimCheckKeyPattern)

// tempPattern names Put's temporary files. Its leading dot is outside
// keyPattern, so that no key ever names a file being written.
const tempPattern = ".put-*"

// DefaultFileMode is the mode of a payload file: readable by every user,
// as the Ruby library writes it, so that a consumer of the fleet running
// as another user on the same directory reads it. The directory's own
// permissions are the place to keep others out.
const DefaultFileMode fs.FileMode = 0o644

// DirOption configures NewDir.
type DirOption func(*Dir) error

// WithFileMode writes payload files with mode instead of DefaultFileMode
// (0600 for a store that one user alone reads, say). The mode is set on
// each file explicitly, whatever the process's umask. A mode without the
// owner's read and write, or with bits beyond 0777, is refused.
func WithFileMode(mode fs.FileMode) DirOption {
	return func(d *Dir) error {
		if mode&^fs.ModePerm != 0 || mode&0o600 != 0o600 {
			return fmt.Errorf("%w: the file mode %#o: a payload file's mode is within 0777 and lets its owner read and write it", ErrInvalidOption, uint32(mode))
		}
		d.mode = mode
		return nil
	}
}

// Dir is a Store in a directory, one file per payload named by its key, safe
// for concurrent use by several processes sharing the directory (a local
// disk, or a network file system that renames atomically).
//
// Put writes a temporary file in the directory itself (so that the rename
// stays on one file system), syncs it, renames it to the key and syncs the
// directory: a key that Put returned names the whole payload, even after a
// crash, and no reader ever sees a partial file. That costs two fsyncs per
// offloaded payload, paid only by payloads above the codec's threshold; a
// message naming a key the disk lost would be parked, its payload gone.
// A crash during Put may leave a temporary file (".put-" and random
// digits); no key names it, and it may be removed once no Put is under way.
type Dir struct {
	path string
	mode fs.FileMode
	// syncFile and syncDir are (*os.File).Sync, and a test's failure.
	syncFile, syncDir func(*os.File) error
}

// NewDir returns the store in the directory at path, which must exist: a
// store that made its directory would take a share that is not mounted for
// an empty store, and park every message as if its payload were gone. Its
// files have DefaultFileMode unless WithFileMode says otherwise.
func NewDir(path string, opts ...DirOption) (*Dir, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("claimcheck: the store directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("claimcheck: the store directory %s is not a directory", path)
	}
	sync := (*os.File).Sync
	d := &Dir{path: path, mode: DefaultFileMode, syncFile: sync, syncDir: sync}
	if err := option.ApplyFuncs(d, opts); errors.Is(err, option.ErrNil) {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	} else if err != nil {
		return nil, err
	}
	return d, nil
}

// Path is the store's directory.
func (d *Dir) Path() string { return d.path }

// file is the path of key's payload, once key is known to be a plain name.
func (d *Dir) file(key string) (string, error) {
	if !keyPattern.MatchString(key) {
		return "", fmt.Errorf("%w %q: a store directory's keys match %s", ErrInvalidKey, key, contract.ClaimCheckKeyPattern)
	}
	return filepath.Join(d.path, key), nil
}

// Put implements Store: the key is a new UUID, and the file is written
// atomically (see Dir). A Put that fails leaves no file behind.
func (d *Dir) Put(ctx context.Context, payload []byte) (key string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	key = uuid.NewString()
	name, err := d.file(key)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(d.path, tempPattern)
	if err != nil {
		return "", fmt.Errorf("claimcheck: writing a payload in %s: %w", d.path, err)
	}
	written := tmp.Name() // what to remove if Put fails
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(written)
			err = fmt.Errorf("claimcheck: writing the payload for key %s in %s: %w", key, d.path, err)
		}
	}()
	// CreateTemp made it 0600; Chmod is not subject to the umask.
	if err := tmp.Chmod(d.mode); err != nil {
		return "", err
	}
	if _, err := tmp.Write(payload); err != nil {
		return "", err
	}
	// The data is on disk before a name points at it.
	if err := d.syncFile(tmp); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return "", err
	}
	written = name // no message names it until Put returns
	// The name is on disk before a message carries it.
	if runtime.GOOS != "windows" { // which cannot sync a directory
		dir, err := os.Open(d.path)
		if err != nil {
			return "", err
		}
		defer dir.Close()
		if err := d.syncDir(dir); err != nil {
			return "", fmt.Errorf("syncing the directory: %w", err)
		}
	}
	return key, nil
}

// Get implements Store.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name, err := d.file(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		// A directory gone (a share not mounted) is a store out of reach,
		// not a payload gone.
		if _, dirErr := os.Stat(d.path); dirErr != nil {
			return nil, fmt.Errorf("claimcheck: reading the payload under key %q: the store directory: %w", key, dirErr)
		}
		return nil, fmt.Errorf("%w (in %s)", notFound(key), d.path)
	}
	if err != nil {
		return nil, fmt.Errorf("claimcheck: reading the payload under key %q: %w", key, err)
	}
	return b, nil
}

// Delete implements Store.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name, err := d.file(key)
	if err != nil {
		return err
	}
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("claimcheck: deleting the payload under key %q: %w", key, err)
	}
	return nil
}
