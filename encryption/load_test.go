package encryption_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/encryption"
)

// A key written without its id, or in the id's place, is refused without
// its text in the error.
func TestParseKeysNeverQuotesAKeyAsAnID(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, text := range []string{key + " current", key, key + " " + key + " current", "ok " + key + " current\n" + key} {
		_, err := encryption.ParseKeys(text)
		if err == nil {
			t.Errorf("ParseKeys accepted a key in the id's place: %q", text)
			continue
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("ParseKeys(%q): the error holds the key: %v", text, err)
		}
	}
}
