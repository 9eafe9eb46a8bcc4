package encryption_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/internal/testing/codectest"
)

// interop is testdata/fixtures/crypto-interop.json: bodies the Java, Python
// and Ruby libraries encrypted, with their keys and plaintexts.
type interop = codectest.Crypto

func readInterop(t testing.TB) interop {
	t.Helper()
	f := codectest.LoadCrypto(t)
	if len(f.Keys) != 2 || len(f.Samples) != 15 {
		t.Fatalf("the fixture has %d keys and %d samples, want 2 and 15", len(f.Keys), len(f.Samples))
	}
	return f
}

// fixtureKey is the fixture's key of name ("first", "second"): id and bytes.
func fixtureKey(t testing.TB, f interop, name string) (string, []byte) {
	t.Helper()
	k, ok := f.Keys[name]
	if !ok {
		t.Fatalf("the fixture has no key %q", name)
	}
	key, err := base64.StdEncoding.DecodeString(k.Base64)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID, key
}

// fixtureKeyring holds both fixture keys, "first" (2026-01) current.
func fixtureKeyring(t testing.TB) *encryption.Keyring {
	t.Helper()
	f := readInterop(t)
	id, key := fixtureKey(t, f, "first")
	kr, err := encryption.NewKeyring(id, key)
	if err != nil {
		t.Fatal(err)
	}
	id2, key2 := fixtureKey(t, f, "second")
	if err := kr.Add(id2, key2); err != nil {
		t.Fatal(err)
	}
	return kr
}

// Every body Java, Python and Ruby wrote decrypts to its plaintext, and its
// header is the framing's, with the key id the fixture names.
func TestInteropSamplesDecrypt(t *testing.T) {
	f := readInterop(t)
	kr := fixtureKeyring(t)
	libraries := map[string]int{}
	for _, s := range f.Samples {
		body := s.Body
		wantHeader := append([]byte{0xAE, 0x01, byte(len(s.KeyID))}, s.KeyID...)
		if !bytes.HasPrefix(body, wantHeader) {
			t.Errorf("%s, %s: header % x, want % x", s.Library, s.Note, body[:min(len(body), len(wantHeader))], wantHeader)
		}
		if id, _ := fixtureKey(t, f, s.Key); id != s.KeyID {
			t.Errorf("%s, %s: key %q has id %q, the sample says %q", s.Library, s.Note, s.Key, id, s.KeyID)
		}
		got, err := kr.Decrypt(body)
		if err != nil {
			t.Errorf("%s, %s: %v", s.Library, s.Note, err)
			continue
		}
		if string(got) != s.Plaintext {
			t.Errorf("%s, %s: decrypted %q, want %q", s.Library, s.Note, got, s.Plaintext)
		}
		libraries[s.Library]++
	}
	if libraries["java"] != 5 || libraries["python"] != 5 || libraries["ruby"] != 5 {
		t.Errorf("decrypted per library: %v, want 5 of each of java, python, ruby", libraries)
	}
}

// What this library encrypts is the framing byte for byte: opened here with
// crypto/cipher alone from the contract's layout (not with Decrypt), and by a
// keyring holding only the fixture's key.
func TestEncryptIsTheFraming(t *testing.T) {
	f := readInterop(t)
	kr := fixtureKeyring(t)
	for _, name := range []string{"first", "second"} {
		id, key := fixtureKey(t, f, name)
		if err := kr.SetCurrent(id); err != nil {
			t.Fatal(err)
		}
		plaintext := []byte(`{"id":"A-1","total":1}`)
		body, err := kr.Encrypt(plaintext)
		if err != nil {
			t.Fatal(err)
		}
		header := append([]byte{0xAE, 0x01, byte(len(id))}, id...)
		if !bytes.Equal(body[:len(header)], header) {
			t.Fatalf("%s: header % x, want % x", id, body[:len(header)], header)
		}
		if want := len(header) + 12 + len(plaintext) + 16; len(body) != want {
			t.Errorf("%s: %d bytes, want %d (header, 12-byte nonce, ciphertext, 16-byte tag)", id, len(body), want)
		}
		block, _ := aes.NewCipher(key)
		gcm, _ := cipher.NewGCM(block)
		nonce := body[len(header) : len(header)+12]
		opened, err := gcm.Open(nil, nonce, body[len(header)+12:], header)
		if err != nil || !bytes.Equal(opened, plaintext) {
			t.Errorf("%s: opened by the contract's layout: %q, %v", id, opened, err)
		}
		alone, err := encryption.NewKeyring(id, key)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := alone.Decrypt(body); err != nil || !bytes.Equal(got, plaintext) {
			t.Errorf("%s: a keyring of the fixture key alone decrypts %q, %v", id, got, err)
		}
		again, _ := kr.Encrypt(plaintext)
		if bytes.Equal(again[len(header):len(header)+12], nonce) {
			t.Errorf("%s: two bodies share the nonce % x", id, nonce)
		}
	}
	if empty, err := kr.Encrypt(nil); err != nil {
		t.Error(err)
	} else if got, err := kr.Decrypt(empty); err != nil || len(got) != 0 {
		t.Errorf("an empty plaintext decrypts to %q, %v", got, err)
	}
}

// sentinels are the four errors of a body that does not decrypt.
var sentinels = []error{encryption.ErrUnknownKey, encryption.ErrDecrypt, encryption.ErrNotEncrypted, encryption.ErrTruncated}

// Each way a body fails is its own error: it matches its sentinel and no
// other, names the key id when the body has one, and shows no key.
func TestDecryptErrors(t *testing.T) {
	f := readInterop(t)
	kr := fixtureKeyring(t)
	_, first := fixtureKey(t, f, "first")
	hello := f.Samples[0].Body // java, "hello", key 2026-01

	otherKey := bytes.Repeat([]byte{0x5A}, 32)
	unknownRing, _ := encryption.NewKeyring("2099-01", otherKey)
	unknown, _ := unknownRing.Encrypt([]byte("hello"))
	// The same id under another key.
	impostorRing, _ := encryption.NewKeyring("2026-01", otherKey)
	impostor, _ := impostorRing.Encrypt([]byte("hello"))
	tampered := bytes.Clone(hello)
	tampered[len(tampered)-20] ^= 1
	// Another id under the same key: only the associated data tells them
	// apart, so the header is bound to the ciphertext.
	twin, _ := encryption.NewKeyring("2026-01", first)
	_ = twin.Add("2026-02", first)
	renamed := bytes.Clone(hello)
	renamed[3+6] = '2' // 2026-01 -> 2026-02

	legacyGo := append([]byte{0x01, 0x00, 0x07}, "2026-01"...)
	legacyGo = append(legacyGo, make([]byte, 30)...)

	cases := []struct {
		name string
		ring *encryption.Keyring
		body []byte
		want error
		text string // the error's text
	}{
		{"unknown key id", kr, unknown, encryption.ErrUnknownKey,
			`encryption: unknown key id "2099-01" (the keyring holds "2026-01", "orders-2025-06-rotated-out")`},
		{"another key under the id", kr, impostor, encryption.ErrDecrypt,
			`encryption: the body does not decrypt with key "2026-01": not the key it was encrypted with, or the body was altered`},
		{"a ciphertext byte altered", kr, tampered, encryption.ErrDecrypt, `with key "2026-01"`},
		{"the key id altered", twin, renamed, encryption.ErrDecrypt, `with key "2026-02"`},
		{"JSON", kr, []byte(`{"id":"A-1"}`), encryption.ErrNotEncrypted,
			`encryption: not an encrypted body: it starts 0x7b, not 0xae 0x01`},
		{"the Go peer's 0.3 framing", kr, legacyGo, encryption.ErrNotEncrypted, "the Go peer's framing of 0.3 and earlier"},
		{"version 2", kr, append([]byte{0xAE, 0x02}, hello[2:]...), encryption.ErrNotEncrypted, "version 0x02, not 0x01"},
		{"a magic byte alone with another version", kr, []byte{0xAE, 0x02}, encryption.ErrNotEncrypted, "version 0x02"},
		{"an empty key id", kr, append([]byte{0xAE, 0x01, 0x00}, make([]byte, 40)...), encryption.ErrNotEncrypted, "its key id is empty"},
		{"a key id with NUL", kr, append([]byte{0xAE, 0x01, 0x02, 'a', 0x00}, make([]byte, 40)...), encryption.ErrNotEncrypted, `the key id "a\x00" holds a NUL`},
		{"a key id not UTF-8", kr, append([]byte{0xAE, 0x01, 0x01, 0xFF}, make([]byte, 40)...), encryption.ErrNotEncrypted, "is not UTF-8"},
		{"empty", kr, nil, encryption.ErrTruncated, "encryption: truncated body: the body is empty"},
		{"the magic byte alone", kr, []byte{0xAE}, encryption.ErrTruncated, "it ends inside its header, after 1 of 3 bytes"},
		{"magic and version", kr, []byte{0xAE, 0x01}, encryption.ErrTruncated, "after 2 of 3 bytes"},
		{"inside the key id", kr, hello[:6], encryption.ErrTruncated, "it ends inside its 7-byte key id, after 6 bytes"},
		{"inside the nonce", kr, hello[:15], encryption.ErrTruncated, `15 bytes under key id "2026-01", which needs at least 38 (header, nonce and tag)`},
		{"inside the tag", kr, hello[:37], encryption.ErrTruncated, `key id "2026-01"`},
	}
	for _, c := range cases {
		_, err := c.ring.Decrypt(c.body)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		for _, other := range sentinels {
			if other != c.want && errors.Is(err, other) {
				t.Errorf("%s: %v matches %v too", c.name, err, other)
			}
		}
		if !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.text)
		}
		showsNoKey(t, c.name, err.Error(), first, otherKey)
	}
}

// showsNoKey fails t when s holds any of keys in a form a key is written in.
func showsNoKey(t *testing.T, what, s string, keys ...[]byte) {
	t.Helper()
	for _, key := range keys {
		forms := []string{
			base64.StdEncoding.EncodeToString(key), base64.RawStdEncoding.EncodeToString(key),
			base64.URLEncoding.EncodeToString(key), hex.EncodeToString(key), strings.ToUpper(hex.EncodeToString(key)),
			fmt.Sprintf("% x", key[:8]), fmt.Sprint(key[:8])[1:], fmt.Sprintf("%#v", key[:4])[len("[]byte{"):],
			string(key[:8]),
		}
		for _, form := range forms {
			if strings.Contains(s, form) {
				t.Errorf("%s shows a key (as %q): %s", what, form, s)
			}
		}
	}
}

// The current key writes; a retired one still reads; a ring without it
// names the id it lacks.
func TestRotation(t *testing.T) {
	oldKey, newKey := encryption.GenerateKey(), encryption.GenerateKey()
	if len(oldKey) != 32 || bytes.Equal(oldKey, newKey) {
		t.Fatalf("GenerateKey gave %d bytes, equal twice: %v", len(oldKey), bytes.Equal(oldKey, newKey))
	}
	kr, err := encryption.NewKeyring("2026-01", oldKey)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := kr.Encrypt([]byte("before"))
	if err := kr.SetCurrent("2026-07"); !errors.Is(err, encryption.ErrUnknownKey) || !strings.Contains(err.Error(), `"2026-07"`) {
		t.Errorf("SetCurrent of a key not added: %v", err)
	}
	if err := kr.Add("2026-07", newKey); err != nil {
		t.Fatal(err)
	}
	if kr.Current() != "2026-01" {
		t.Errorf("Add made %q current", kr.Current())
	}
	if err := kr.SetCurrent("2026-07"); err != nil {
		t.Fatal(err)
	}
	after, _ := kr.Encrypt([]byte("after"))
	if id := string(after[3 : 3+after[2]]); id != "2026-07" {
		t.Errorf("after rotation, written under %q", id)
	}
	for body, want := range map[*[]byte]string{&before: "before", &after: "after"} {
		if got, err := kr.Decrypt(*body); err != nil || string(got) != want {
			t.Errorf("Decrypt = %q, %v; want %q", got, err, want)
		}
	}
	if got := kr.IDs(); fmt.Sprint(got) != "[2026-01 2026-07]" {
		t.Errorf("IDs = %q", got)
	}
	newOnly, _ := encryption.NewKeyring("2026-07", newKey)
	if _, err := newOnly.Decrypt(before); !errors.Is(err, encryption.ErrUnknownKey) || !strings.Contains(err.Error(), `"2026-01"`) {
		t.Errorf("a ring without the retired key: %v", err)
	}
}

// Keys of 16, 24 and 32 bytes, ids of 1 to 255 bytes of UTF-8 without NUL;
// anything else is refused, the key never shown.
func TestKeyringRefuses(t *testing.T) {
	for _, n := range []int{16, 24, 32} {
		key := bytes.Repeat([]byte{byte(n)}, n)
		kr, err := encryption.NewKeyring("k", key)
		if err != nil {
			t.Errorf("a %d-byte key: %v", n, err)
			continue
		}
		body, _ := kr.Encrypt([]byte("x"))
		if got, err := kr.Decrypt(body); err != nil || string(got) != "x" {
			t.Errorf("a %d-byte key reads back %q, %v", n, got, err)
		}
	}
	for _, n := range []int{0, 15, 31, 33, 64} {
		key := bytes.Repeat([]byte{0x42}, n)
		_, err := encryption.NewKeyring("k", key)
		if want := fmt.Sprintf(`key "k" is %d bytes`, n); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a %d-byte key: %v, want %q", n, err, want)
		} else if n > 8 {
			showsNoKey(t, "the error", err.Error(), key)
		}
	}
	for _, id := range []string{"", strings.Repeat("x", 256), "a\x00b", "\xff"} {
		if _, err := encryption.NewKeyring(id, encryption.GenerateKey()); err == nil {
			t.Errorf("key id %q accepted", id)
		}
	}
	long := strings.Repeat("é", 127) + "x" // 255 bytes
	kr, err := encryption.NewKeyring(long, encryption.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := kr.Encrypt([]byte("x"))
	if body[2] != 255 {
		t.Errorf("a 255-byte id has length byte %d", body[2])
	}
	if got, err := kr.Decrypt(body); err != nil || string(got) != "x" {
		t.Errorf("a 255-byte id reads back %q, %v", got, err)
	}
	if err := kr.Add(long, encryption.GenerateKey()); err == nil || !strings.Contains(err.Error(), "already in the keyring") {
		t.Errorf("a second key under one id: %v", err)
	}
	var zero encryption.Keyring
	if _, err := zero.Encrypt([]byte("x")); err == nil {
		t.Error("a keyring without keys encrypted")
	}
}

func TestContractConstants(t *testing.T) {
	if contract.EncryptedMagic != 0xAE || contract.EncryptedVersion != 0x01 || contract.EncryptedNonceSize != 12 ||
		contract.EncryptedTagSize != 16 || contract.EncryptedKeySize != 32 || contract.ContentTypeEncrypted != "application/vnd.acemq.encrypted" {
		t.Error("the contract's encryption constants are not section 9's")
	}
}

// Rotation while bodies are encrypted and decrypted (run with -race): every
// body decrypts, under whichever key was current when it was written.
func TestRotationWhileInUse(t *testing.T) {
	kr, err := encryption.NewKeyring("k0", encryption.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for range 4 {
		go func() {
			for range 200 {
				body, err := kr.Encrypt([]byte("x"))
				if err == nil {
					_, err = kr.Decrypt(body)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("k%d", i)
		if err := kr.Add(id, encryption.GenerateKey()); err != nil {
			t.Fatal(err)
		}
		if err := kr.SetCurrent(id); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if kr.Current() != "k20" || len(kr.IDs()) != 21 {
		t.Errorf("after rotating: %v", kr)
	}
}
