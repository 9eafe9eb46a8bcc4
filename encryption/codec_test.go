package encryption_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/encryption"
)

type order struct {
	ID    string `json:"id"`
	Total int    `json:"total"`
}

func TestCodec(t *testing.T) {
	f := readInterop(t)
	kr := fixtureKeyring(t)
	c := newCodec(t, kr, acemq.JSON)
	if c.ContentType() != "application/vnd.acemq.encrypted" {
		t.Errorf("ContentType = %q", c.ContentType())
	}
	for ct, want := range map[string]bool{
		"application/vnd.acemq.encrypted":                         true,
		"Application/VND.AceMQ.Encrypted":                         true,
		"application/vnd.acemq.encrypted; inner=application/json": true,
		"application/vnd.acemq.encrypted+json":                    true,
		"application/vnd.acemq.encrypte":                          false,
		"application/json":                                        false,
		"":                                                        false,
	} {
		if c.Reads(ct) != want {
			t.Errorf("Reads(%q) = %v", ct, !want)
		}
	}
	body, err := c.Marshal(order{"A-1", 1})
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := kr.Decrypt(body); err != nil || string(plain) != `{"id":"A-1","total":1}` {
		t.Errorf("Marshal's body decrypts to %q, %v", plain, err)
	}
	// Every library's JSON sample decodes.
	for _, s := range f.Samples {
		if s.Note != "a JSON body" {
			continue
		}
		var o order
		if err := c.Unmarshal("application/vnd.acemq.encrypted", s.Body, &o); err != nil || o != (order{"A-1", 1}) {
			t.Errorf("%s: %+v, %v", s.Library, o, err)
		}
	}
	var o order
	if err := c.Unmarshal("application/vnd.acemq.encrypted", f.Samples[0].Body, &o); err == nil ||
		!strings.HasPrefix(err.Error(), "encryption: the decrypted body: acemq: JSON codec:") {
		t.Errorf(`"hello" as an order: %v`, err)
	}
	if err := c.Unmarshal("application/vnd.acemq.encrypted", []byte(`{"id":"A-1"}`), &o); !errors.Is(err, encryption.ErrNotEncrypted) {
		t.Errorf("a plain body: %v", err)
	}
	if _, err := c.Marshal(make(chan int)); err == nil {
		t.Error("the inner codec's error was lost")
	}
	// Text inside: the inner codec decodes as its own content type.
	text := newCodec(t, kr, acemq.Text)
	var s string
	if err := text.Unmarshal("application/vnd.acemq.encrypted", f.Samples[0].Body, &s); err != nil || s != "hello" {
		t.Errorf("Text inside: %q, %v", s, err)
	}
}

func newCodec(t *testing.T, kr *encryption.Keyring, inner acemq.Codec) acemq.Codec {
	t.Helper()
	c, err := encryption.NewCodec(kr, inner)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A nil keyring or inner codec is NewCodec's error, never a panic.
func TestNewCodecBadInput(t *testing.T) {
	for _, c := range []struct {
		name    string
		keyring *encryption.Keyring
		inner   acemq.Codec
		want    string
	}{
		{"no keyring", nil, acemq.JSON, "needs a keyring"},
		{"no inner codec", fixtureKeyring(t), nil, "needs an inner codec"},
	} {
		if codec, err := encryption.NewCodec(c.keyring, c.inner); codec != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, %v; want no codec and an error saying %q", c.name, codec, err, c.want)
		}
	}
}
