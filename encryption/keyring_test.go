package encryption_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/encryption"
)

// No verb of fmt, no slog handler and no JSON shows a key: only the ids.
func TestKeyringShowsNoKey(t *testing.T) {
	current, retired := encryption.GenerateKey(), encryption.GenerateKey()
	kr, err := encryption.NewKeyring("2026-01", current)
	if err != nil {
		t.Fatal(err)
	}
	if err := kr.Add("2025-06", retired); err != nil {
		t.Fatal(err)
	}
	want := `encryption.Keyring{current: "2026-01", keys: "2025-06", "2026-01"}`
	// A struct holding the ring, exported and not: fmt reaches the
	// unexported field by reflection, without its methods.
	type config struct {
		Keys    *encryption.Keyring
		private *encryption.Keyring
	}
	cfg := config{kr, kr}
	var shown []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
		for _, v := range []any{kr, cfg, &cfg, []any{kr}} {
			shown = append(shown, fmt.Sprintf(verb, v))
		}
	}
	shown = append(shown, fmt.Sprint(kr), fmt.Sprintln(kr), kr.String(), kr.GoString())
	for _, s := range []string{fmt.Sprintf("%v", kr), fmt.Sprintf("%+v", kr), fmt.Sprintf("%#v", kr), fmt.Sprint(kr)} {
		if s != want {
			t.Errorf("printed as %s, want %s", s, want)
		}
	}
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		l := slog.New(h)
		l.Info("keys loaded", "keyring", kr, "config", cfg)
		l.Info("keys loaded", slog.Any("keyring", kr))
	}
	shown = append(shown, logs.String())
	if !strings.Contains(logs.String(), `keyring.current=2026-01 keyring.keys="[2025-06 2026-01]"`) ||
		!strings.Contains(logs.String(), `"keyring":{"current":"2026-01","keys":["2025-06","2026-01"]}`) {
		t.Errorf("the logs do not show the ids:\n%s", logs.String())
	}
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if string(j) != `{"Keys":{"current":"2026-01","keys":["2025-06","2026-01"]}}` {
		t.Errorf("JSON %s", j)
	}
	shown = append(shown, string(j))
	for _, s := range shown {
		showsNoKey(t, "the keyring", s, current, retired)
	}
	var none *encryption.Keyring
	if s := fmt.Sprintf("%v %+v %#v", none, none, none); s != "encryption.Keyring(nil) encryption.Keyring(nil) encryption.Keyring(nil)" {
		t.Errorf("a nil keyring prints %s", s)
	}
}

// The example of ParseKeys' doc, from text, a file and the environment,
// one entry a line or on one line.
func TestParseKeys(t *testing.T) {
	f := readInterop(t)
	text := `# retired in June: readable until the queues are drained
orders-2025-06-rotated-out Hx4dHBsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=

	2026-01   AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=	current
`
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ACEMQ_TEST_KEYS", "orders-2025-06-rotated-out Hx4dHBsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=; 2026-01 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8= current;")
	fromText, err1 := encryption.ParseKeys(text)
	fromFile, err2 := encryption.LoadFile(path)
	fromEnv, err3 := encryption.FromEnv("ACEMQ_TEST_KEYS")
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	for name, kr := range map[string]*encryption.Keyring{"text": fromText, "file": fromFile, "environment": fromEnv} {
		if kr.Current() != "2026-01" || fmt.Sprint(kr.IDs()) != "[2026-01 orders-2025-06-rotated-out]" {
			t.Errorf("%s: %v", name, kr)
		}
		for _, s := range f.Samples {
			if got, err := kr.Decrypt(s.Body); err != nil || string(got) != s.Plaintext {
				t.Errorf("%s: %s, %s: %q, %v", name, s.Library, s.Note, got, err)
			}
		}
	}
}

func TestParseKeysRefuses(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	badKey := "c2VjcmV0LXRleHQ*" + key[16:]
	cases := map[string]string{
		"":                   "encryption: keys: no key",
		"# only a comment\n": "encryption: keys: no key",
		"a " + key:           `encryption: keys: none of "a" is marked current`,
		"a " + key + " current\nb " + key + " current": `encryption: keys: "a", "b" are all marked current; mark one`,
		"a " + key + " current\na " + key:              `encryption: keys, line 2: key id "a" is already in the keyring`,
		"a current":                                    `encryption: keys, line 1: key "a" is not standard padded base64`,
		"a":                                            `encryption: keys, line 1: key id "a" has no key`,
		"a " + key + " current extra":                  `encryption: keys, line 1: key id "a": want "id base64-key" or "id base64-key current", not 4 fields`,
		"a " + key + " now":                            `not 3 fields`,
		"a " + key + " current; b " + badKey:           `encryption: keys, line 1 entry 2: key "b" is not standard padded base64 (at its byte 15)`,
		"a " + key[:20] + " current":                   `encryption: keys, line 1: key "a" is 15 bytes`,
		"a " + strings.TrimRight(key, "="):             `key "a" is not standard padded base64`,
	}
	for text, want := range cases {
		_, err := encryption.ParseKeys(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKeys(%q) = %v, want %q", text, err, want)
			continue
		}
		if strings.Contains(err.Error(), key[:16]) || strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("ParseKeys(%q): the error shows the key: %v", text, err)
		}
	}
	if _, err := encryption.FromEnv("ACEMQ_TEST_KEYS_UNSET"); err == nil || err.Error() != "encryption: keys: $ACEMQ_TEST_KEYS_UNSET is not set" {
		t.Errorf("an unset variable: %v", err)
	}
	t.Setenv("ACEMQ_TEST_KEYS", "a "+key)
	if _, err := encryption.FromEnv("ACEMQ_TEST_KEYS"); err == nil || !strings.Contains(err.Error(), "encryption: keys in $ACEMQ_TEST_KEYS: none") {
		t.Errorf("FromEnv: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if _, err := encryption.LoadFile(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile of a missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "keys")
	_ = os.WriteFile(path, []byte("a "+key), 0o600)
	if _, err := encryption.LoadFile(path); err == nil || !strings.Contains(err.Error(), "encryption: keys file "+path+": none") {
		t.Errorf("LoadFile: %v", err)
	}
}
