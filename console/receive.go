package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

// received is the file of an upload, streamed to a temporary file as it
// arrived: an upload is never held in memory.
type received struct {
	path, name string
	kept       bool
}

type receivedKey struct{}

// errFileTooLarge refuses an upload larger than its bound.
var errFileTooLarge = errors.New("the file is too large")

// maxFields bounds the fields beside an upload's file, together.
const maxFields = maxForm

// receive reads the multipart form of r part by part: its fields, into
// the values returned (maxFields in all), and its one file, named "file",
// into a temporary file of at most limit bytes (errFileTooLarge beyond).
// The received file is the request's (see uploadedFile); secure removes
// it when the request ends, unless a handler kept it.
func receive(r *http.Request, limit int64) (url.Values, *received, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil, err
	}
	form := url.Values{}
	var up *received
	fields := int64(0)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, up, err
		}
		if part.FileName() == "" {
			// A field (or a file input left empty, whose value is "").
			b, err := io.ReadAll(io.LimitReader(part, maxFields-fields+1))
			if err != nil {
				return nil, up, err
			}
			if fields += int64(len(b)); fields > maxFields {
				return nil, up, &http.MaxBytesError{Limit: maxFields}
			}
			form.Add(part.FormName(), string(b))
			continue
		}
		if part.FormName() != "file" || up != nil {
			return nil, up, fmt.Errorf("one file is taken, as the field \"file\"; this form has %q", part.FormName())
		}
		tmp, err := os.CreateTemp("", "acemq-console-upload-*")
		if err != nil {
			return nil, nil, err
		}
		up = &received{path: tmp.Name(), name: part.FileName()}
		n, err := io.Copy(tmp, io.LimitReader(part, limit+1))
		if err = errors.Join(err, tmp.Close()); err != nil {
			return nil, up, err
		}
		if n > limit {
			return nil, up, errFileTooLarge
		}
	}
	return form, up, nil
}

// uploadedFile is the file uploaded with r, if any: its temporary path and
// the name the browser gave it. The file is removed when the request ends
// unless keep is true: then it is the caller's to remove.
func uploadedFile(r *http.Request, keep bool) (path, name string, ok bool) {
	up, ok := r.Context().Value(receivedKey{}).(*received)
	if !ok {
		return "", "", false
	}
	up.kept = up.kept || keep
	return up.path, up.name, true
}

// remove removes the received file unless a handler kept it.
func (up *received) remove() {
	if up != nil && !up.kept {
		_ = os.Remove(up.path)
	}
}

// sizeOf says n bytes in MiB (or KiB).
func sizeOf(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
