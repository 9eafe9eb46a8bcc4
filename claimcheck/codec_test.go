package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/claimcheck"
)

// The family's retention text, as the contract spells it.
const retention = "the store's retention must outlast every queue, dead-letter queue and replay"

func newCodec(t *testing.T, inner acemq.Codec, store claimcheck.Store, opts ...claimcheck.Option) *claimcheck.Codec {
	t.Helper()
	c, err := claimcheck.New(inner, store, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func unmarshalBytes(t *testing.T, c acemq.Codec, body []byte) []byte {
	t.Helper()
	var got []byte
	if err := c.Unmarshal(c.ContentType(), body, &got); err != nil {
		t.Fatalf("Unmarshal(% x): %v", body, err)
	}
	return got
}

// Both framings, written and read: the inline payload follows
// 0xAC 0x01 0x00, the offloaded one's UUID key follows 0xAC 0x01 0x01 and
// the store holds the payload under it.
func TestFraming(t *testing.T) {
	var store claimcheck.Memory
	c := newCodec(t, acemq.Bytes, &store, claimcheck.WithThreshold(8))

	small := []byte("hello")
	body, err := c.Marshal(small)
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte{0xAC, 0x01, 0x00}, small...); !bytes.Equal(body, want) {
		t.Errorf("inline body = % x, want % x", body, want)
	}
	if got := unmarshalBytes(t, c, body); !bytes.Equal(got, small) {
		t.Errorf("inline read back %q, want %q", got, small)
	}
	if store.Len() != 0 {
		t.Errorf("an inline payload put %d payloads in the store", store.Len())
	}

	large := []byte("a payload of 26 bytes, say")
	body, err = c.Marshal(large)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(body, []byte{0xAC, 0x01, 0x01}) {
		t.Fatalf("offloaded body = % x, want it to start ac 01 01", body)
	}
	key := string(body[3:])
	if _, err := uuid.Parse(key); err != nil || len(key) != 36 {
		t.Errorf("the key %q is not a UUID: %v", key, err)
	}
	if held, err := store.Get(t.Context(), key); err != nil || !bytes.Equal(held, large) {
		t.Errorf("the store holds %q, %v under %s; want the payload", held, err, key)
	}
	if got := unmarshalBytes(t, c, body); !bytes.Equal(got, large) {
		t.Errorf("offloaded read back %q, want %q", got, large)
	}
	if store.Len() != 1 {
		t.Errorf("the store holds %d payloads after one offload and a read; want 1 (the codec never deletes)", store.Len())
	}

	// A body another library framed by hand reads the same.
	key, _ = store.Put(t.Context(), []byte(`{"from":"java"}`))
	var v map[string]string
	j := newCodec(t, acemq.JSON, &store)
	if err := j.Unmarshal("application/json", append([]byte{0xAC, 0x01, 0x01}, key...), &v); err != nil || v["from"] != "java" {
		t.Errorf("a hand-framed offloaded body read as %v, %v", v, err)
	}
	if err := j.Unmarshal("application/json", []byte("\xAC\x01\x00{\"from\":\"ruby\"}"), &v); err != nil || v["from"] != "ruby" {
		t.Errorf("a hand-framed inline body read as %v, %v", v, err)
	}
}

// Inline if and only if the encoded payload is shorter than the threshold.
func TestThresholdBoundary(t *testing.T) {
	var store claimcheck.Memory
	c := newCodec(t, acemq.Bytes, &store, claimcheck.WithThreshold(8))
	for _, tc := range []struct {
		size   int
		marker byte
	}{{0, 0x00}, {7, 0x00}, {8, 0x01}, {9, 0x01}} {
		payload := bytes.Repeat([]byte{'x'}, tc.size)
		body, err := c.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		if body[2] != tc.marker {
			t.Errorf("a payload of %d bytes under a threshold of 8 has marker %#x, want %#x", tc.size, body[2], tc.marker)
		}
		if got := unmarshalBytes(t, c, body); !bytes.Equal(got, payload) {
			t.Errorf("%d bytes read back as %d", tc.size, len(got))
		}
	}
	// The threshold is of the encoded payload: JSON's quotes count.
	j := newCodec(t, acemq.JSON, &store, claimcheck.WithThreshold(8))
	if body, _ := j.Marshal("123456"); body[2] != 0x01 { // "123456" is 8 bytes
		t.Errorf("a JSON string of 8 encoded bytes has marker %#x, want offloaded", body[2])
	}
}

func TestDefaultThreshold(t *testing.T) {
	c := newCodec(t, acemq.Bytes, &claimcheck.Memory{})
	for size, marker := range map[int]byte{64<<10 - 1: 0x00, 64 << 10: 0x01} {
		body, err := c.Marshal(make([]byte, size))
		if err != nil {
			t.Fatal(err)
		}
		if body[2] != marker {
			t.Errorf("by default, %d bytes have marker %#x, want %#x", size, body[2], marker)
		}
	}
	if claimcheck.DefaultThreshold != 65536 || claimcheck.DefaultTimeout != 30*time.Second {
		t.Errorf("defaults are %d bytes and %v", claimcheck.DefaultThreshold, claimcheck.DefaultTimeout)
	}
}

// 0 offloads every payload, the empty one too.
func TestThresholdZero(t *testing.T) {
	var store claimcheck.Memory
	c := newCodec(t, acemq.Bytes, &store, claimcheck.WithThreshold(0))
	for _, p := range [][]byte{{}, []byte("x")} {
		body, err := c.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if body[2] != 0x01 {
			t.Errorf("threshold 0: %d bytes have marker %#x, want offloaded", len(p), body[2])
		}
		if got := unmarshalBytes(t, c, body); !bytes.Equal(got, p) {
			t.Errorf("read back %q, want %q", got, p)
		}
	}
	if store.Len() != 2 {
		t.Errorf("the store holds %d payloads, want 2", store.Len())
	}
}

func TestInvalidOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		opt  claimcheck.Option
		text string
	}{
		"negative threshold": {claimcheck.WithThreshold(-1), "the threshold is -1 bytes; it must be at least 0"},
		"zero timeout":       {claimcheck.WithTimeout(0), "the store timeout is 0s; it must be positive"},
		"nil Option":         {nil, "a nil Option"},
	} {
		c, err := claimcheck.New(acemq.JSON, &claimcheck.Memory{}, tc.opt)
		if c != nil || !errors.Is(err, claimcheck.ErrInvalidOption) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidOption saying %q", name, c, err, tc.text)
		}
	}
	if _, err := claimcheck.New(nil, &claimcheck.Memory{}); !errors.Is(err, claimcheck.ErrInvalidOption) {
		t.Errorf("New without an inner codec: %v", err)
	}
	if _, err := claimcheck.New(acemq.JSON, nil); !errors.Is(err, claimcheck.ErrInvalidOption) {
		t.Errorf("New without a store: %v", err)
	}
}

// The content type, and what is read, are the inner codec's.
func TestContentTypeIsInner(t *testing.T) {
	for _, inner := range []acemq.Codec{acemq.JSON, acemq.Text, acemq.Bytes} {
		c := newCodec(t, inner, &claimcheck.Memory{})
		if c.ContentType() != inner.ContentType() {
			t.Errorf("ContentType = %q, want the inner %q", c.ContentType(), inner.ContentType())
		}
		for _, ct := range []string{"", "application/json", "text/plain", "application/vnd.api+json", "application/yaml"} {
			if c.Reads(ct) != inner.Reads(ct) {
				t.Errorf("%s: Reads(%q) = %v, the inner says %v", inner.ContentType(), ct, c.Reads(ct), inner.Reads(ct))
			}
		}
	}
}

// A body without the framing is the inner codec's as it is: 0xAC 0x01 with
// a third byte that is no marker, or too short, included.
func TestUnframedBodyGoesToInner(t *testing.T) {
	var store claimcheck.Memory
	var v struct{ ID string }
	j := newCodec(t, acemq.JSON, &store)
	if err := j.Unmarshal("application/json", []byte(`{"ID":"o-1"}`), &v); err != nil || v.ID != "o-1" {
		t.Errorf("an unframed JSON body read as %+v, %v", v, err)
	}
	b := newCodec(t, acemq.Bytes, &store)
	for _, body := range [][]byte{{}, {0xAC}, {0xAC, 0x01}, {0xAC, 0x01, 0x02, 'k'}, {0xAC, 0x02, 0x01, 'k'}, {0xAD, 0x01, 0x01, 'k'}} {
		if got := unmarshalBytes(t, b, body); !bytes.Equal(got, body) {
			t.Errorf("unframed % x read as % x; want it as it is", body, got)
		}
	}
	// The inner codec's own error, not the claim check's.
	err := j.Unmarshal("application/json", []byte("\xAC\x01\x02{}"), &v)
	if err == nil || acemq.IsTemporary(err) || !strings.Contains(err.Error(), "JSON codec") {
		t.Errorf("an unframed non-JSON body: %v; want the JSON codec's error", err)
	}
}

// An offloaded body without a key, or with one that is not UTF-8.
func TestMalformed(t *testing.T) {
	c := newCodec(t, acemq.Bytes, &claimcheck.Memory{})
	for _, body := range [][]byte{{0xAC, 0x01, 0x01}, {0xAC, 0x01, 0x01, 0xff, 0xfe}} {
		var got []byte
		err := c.Unmarshal("", body, &got)
		if !errors.Is(err, claimcheck.ErrMalformed) || acemq.IsTemporary(err) || !acemq.IsFatal(err) {
			t.Errorf("% x: %v; want a fatal ErrMalformed", body, err)
		}
	}
}

// A key the store does not hold parks the message: fatal, never
// temporary, naming the key and the retention rule.
func TestNotFoundIsFatal(t *testing.T) {
	for name, store := range map[string]claimcheck.Store{"memory": &claimcheck.Memory{}, "dir": newDir(t, t.TempDir()), "bare": bareNotFound{}} {
		c := newCodec(t, acemq.Bytes, store)
		var got []byte
		err := c.Unmarshal("", []byte("\xAC\x01\x01a-key-long-gone"), &got)
		if !errors.Is(err, claimcheck.ErrNotFound) || !acemq.IsFatal(err) || acemq.IsTemporary(err) {
			t.Fatalf("%s: %v; want a fatal ErrNotFound", name, err)
		}
		if !strings.Contains(err.Error(), `"a-key-long-gone"`) || !strings.HasSuffix(err.Error(), "; "+retention) {
			t.Errorf("%s: the error says %q; want the key and the retention rule", name, err)
		}
	}
}

// bareNotFound is a user's store whose not-found error names no key.
type bareNotFound struct{ failing }

func (bareNotFound) Get(context.Context, string) ([]byte, error) { return nil, claimcheck.ErrNotFound }

// failing is a store out of reach.
type failing struct{}

var errDown = errors.New("dial tcp 10.0.0.9:443: connect: connection refused")

func (failing) Put(context.Context, []byte) (string, error) { return "", errDown }
func (failing) Get(context.Context, string) ([]byte, error) { return nil, errDown }
func (failing) Delete(context.Context, string) error        { return errDown }

// Any other store error is retryable (acemq.Temporary), the store's error
// kept.
func TestUnreachableIsTemporary(t *testing.T) {
	c := newCodec(t, acemq.Bytes, failing{})
	var got []byte
	err := c.Unmarshal("", []byte("\xAC\x01\x01some-key"), &got)
	if !acemq.IsTemporary(err) || !errors.Is(err, errDown) || errors.Is(err, claimcheck.ErrNotFound) {
		t.Fatalf("%v; want a temporary error wrapping the store's", err)
	}
	if want := `claimcheck: fetching the payload under key "some-key": ` + errDown.Error(); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// Inline bodies never reach the store.
	if got := unmarshalBytes(t, c, []byte("\xAC\x01\x00inline")); string(got) != "inline" {
		t.Errorf("inline read %q", got)
	}
	// Publishing fails with the store's error.
	_, err = c.Marshal(make([]byte, 70000))
	if !errors.Is(err, errDown) || !strings.Contains(err.Error(), "offloading a payload of 70000 bytes") {
		t.Errorf("Marshal with the store down: %v", err)
	}
}

// A store that hangs is cut off at the codec's timeout: each call has a
// deadline of its own, and running out of it is temporary.
func TestTimeout(t *testing.T) {
	c := newCodec(t, acemq.Bytes, hanging{}, claimcheck.WithTimeout(time.Millisecond), claimcheck.WithThreshold(0))
	var got []byte
	err := c.Unmarshal("", []byte("\xAC\x01\x01k"), &got)
	if !acemq.IsTemporary(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get past the timeout: %v; want a temporary DeadlineExceeded", err)
	}
	if _, err := c.Marshal([]byte("x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Put past the timeout: %v", err)
	}
}

// hanging is a store that answers only when its context ends.
type hanging struct{}

func (hanging) Put(ctx context.Context, _ []byte) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		return "", errors.New("no deadline")
	}
	<-ctx.Done()
	return "", ctx.Err()
}

func (hanging) Get(ctx context.Context, _ string) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("no deadline")
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (hanging) Delete(context.Context, string) error { return nil }

// A store returning an unusable key fails the publish.
func TestEmptyKeyRefused(t *testing.T) {
	c := newCodec(t, acemq.Bytes, emptyKey{}, claimcheck.WithThreshold(0))
	if _, err := c.Marshal([]byte("x")); err == nil || !strings.Contains(err.Error(), `the store returned the key ""`) {
		t.Errorf("Marshal with an empty key: %v", err)
	}
}

type emptyKey struct{ failing }

func (emptyKey) Put(context.Context, []byte) (string, error) { return "", nil }

// The payload fetched is decoded by the inner codec, whose error names the
// key and parks the message.
func TestBadPayload(t *testing.T) {
	var store claimcheck.Memory
	key, _ := store.Put(t.Context(), []byte("not json"))
	c := newCodec(t, acemq.JSON, &store)
	var v map[string]any
	err := c.Unmarshal("application/json", append([]byte{0xAC, 0x01, 0x01}, key...), &v)
	if err == nil || acemq.IsTemporary(err) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "JSON codec") {
		t.Errorf("a stored payload that is not JSON: %v", err)
	}
}

func TestMemoryStore(t *testing.T) {
	var m claimcheck.Memory
	ctx := t.Context()
	p := []byte("payload")
	key, err := m.Put(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p[0] = 'X' // the store kept its own copy
	got, err := m.Get(ctx, key)
	if err != nil || string(got) != "payload" {
		t.Errorf("Get = %q, %v", got, err)
	}
	deleted(t, &m, key)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Put(cancelled, p); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: %v", err)
	}
}
