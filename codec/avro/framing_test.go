package avro

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzUnframe: a body is either framed (and framing its id and Avro body
// again gives it back) or refused as not framed or truncated; the magic
// byte decides before the length does.
func FuzzUnframe(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 7, 6, 'o', '-', '1'})
	f.Fuzz(func(t *testing.T, data []byte) {
		id, body, err := unframe(data)
		switch {
		case err == nil:
			if again := frame(id, body); !bytes.Equal(again, data) {
				t.Fatalf("%x unframed to id %d and %x, which frame as %x", data, id, body, again)
			}
		case len(data) > 0 && data[0] != 0:
			if !errors.Is(err, ErrNotFramed) {
				t.Fatalf("%x: %v, want ErrNotFramed", data, err)
			}
		case !errors.Is(err, ErrTruncated) || len(data) >= 5:
			t.Fatalf("%x: %v, want ErrTruncated for fewer than 5 bytes", data, err)
		}
	})
}

func TestFrame(t *testing.T) {
	got := frame(0x01020304, []byte{9})
	if want := []byte{0, 1, 2, 3, 4, 9}; !bytes.Equal(got, want) {
		t.Errorf("frame = %x, want %x", got, want)
	}
}
