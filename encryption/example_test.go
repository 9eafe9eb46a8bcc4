package encryption_test

import (
	"fmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/encryption"
)

// A keyring from the environment's text (FromEnv reads the same from a
// variable, LoadFile from a file), and the JSON codec inside encryption:
// give it to publishers and consumers with acemq.WithCodec.
func Example() {
	keyring, err := encryption.ParseKeys(
		"2025-06 Hx4dHBsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=; 2026-01 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8= current")
	if err != nil {
		fmt.Println(err)
		return
	}
	codec, err := encryption.NewCodec(keyring, acemq.JSON)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := codec.Marshal(map[string]any{"id": "A-1"})
	var back map[string]any
	err = codec.Unmarshal(codec.ContentType(), body, &back)
	fmt.Println(keyring)
	fmt.Println(codec.ContentType(), back, err)
	// Output:
	// encryption.Keyring{current: "2026-01", keys: "2025-06", "2026-01"}
	// application/vnd.acemq.encrypted map[id:A-1] <nil>
}
