// Package encryption encrypts message bodies as every AceMQ library does
// (section 9 of the family's contract, docs/contract.md "Encrypted
// bodies"): AES-GCM with a 128-bit tag, the body framed as 0xAE, 0x01, one
// byte of key-id length, the key id, a random 12-byte nonce, then the
// ciphertext and its tag, the header (magic, version, length, key id) bound
// as associated data, and sent as application/vnd.acemq.encrypted. No
// header is added to the message: the key id travels in the body.
//
// A Keyring holds keys by id, one of them current for writing; the others
// stay readable, so that keys rotate without losing what the queues still
// hold. Keys come from code (NewKeyring, Add), a file (LoadFile) or an
// environment variable (FromEnv), in the format ParseKeys describes, and a
// Keyring never prints, logs or marshals a key: only the ids.
//
// Codec wraps another codec: what it marshals is encrypted with the current
// key, and what it reads is decrypted, then decoded by the inner codec. A
// body that cannot be decrypted (an unknown key id, a wrong key or an
// altered body, another framing, a truncated body) is an error matching one
// of ErrUnknownKey, ErrDecrypt, ErrNotEncrypted and ErrTruncated, which
// names the key id when there is one and never the key. The consumer parks
// such a message in Q.parked with "could not be decoded: " and the error,
// at once: retrying cannot help.
//
// The package is named encryption, not crypto, so that it does not clash
// with the standard library's crypto in a user's imports. It uses only the
// standard library (crypto/aes, crypto/cipher); like every format of the
// module it is a package of its own, so a service links it only when it
// imports it.
//
// The legacy forms the contract lists (the Go peer's 0x01 framing of 0.3 and
// earlier, .NET's AES-256-CBC with HMAC before 0.4) are not read: this
// library never wrote them (docs/contract.md says why).
//
// A nonce is 12 random bytes, so a key should encrypt well under 2³² bodies
// (NIST SP 800-38D): rotate keys long before.
package encryption

import (
	"crypto/rand"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/acemq-go/acemq/contract"
)

// The errors of a body that does not decrypt. Each is fatal to the
// message: no retry makes it readable.
var (
	// ErrUnknownKey is a body encrypted with a key id the keyring does not
	// hold (a key retired too early, or never given to this service).
	ErrUnknownKey = errors.New("encryption: unknown key id")
	// ErrDecrypt is a body that does not decrypt with the key of its id:
	// another key under the same id, or a body altered on the way.
	ErrDecrypt = errors.New("encryption: the body does not decrypt")
	// ErrNotEncrypted is a body that does not start 0xAE 0x01, or whose key
	// id is empty or not UTF-8 without NUL: not this framing.
	ErrNotEncrypted = errors.New("encryption: not an encrypted body")
	// ErrTruncated is a body that starts as the framing but ends before
	// its tag does.
	ErrTruncated = errors.New("encryption: truncated body")
)

// maxKeyID is the longest key id: its length is one byte.
const maxKeyID = 255

// headerSize is the framing's fixed part before the key id: magic, version,
// length.
const headerSize = 3

// GenerateKey returns a new random key of contract.EncryptedKeySize bytes
// (AES-256).
func GenerateKey() []byte {
	key := make([]byte, contract.EncryptedKeySize)
	rand.Read(key) // never fails (crypto/rand, Go 1.24 and later)
	return key
}

// checkKeyID is the contract's rule for a key id: 1 to 255 bytes of UTF-8,
// without NUL.
func checkKeyID(id string) error {
	switch {
	case id == "":
		return errors.New("the key id is empty")
	case len(id) > maxKeyID:
		return fmt.Errorf("the key id %.20q... is %d bytes, longer than %d", id, len(id), maxKeyID)
	case !utf8.ValidString(id):
		return fmt.Errorf("the key id %q is not UTF-8", id)
	}
	for i := range len(id) {
		if id[i] == 0 {
			return fmt.Errorf("the key id %q holds a NUL", id)
		}
	}
	return nil
}

// header is the framing's header for a key id, the associated data too.
func header(id string) []byte {
	h := make([]byte, 0, headerSize+len(id))
	h = append(h, contract.EncryptedMagic, contract.EncryptedVersion, byte(len(id)))
	return append(h, id...)
}

// frame is a body split into its parts; sealed is the ciphertext and tag.
type frame struct {
	header, nonce, sealed []byte
	keyID                 string
}

// parse splits a body into its parts, or says which of ErrNotEncrypted and
// ErrTruncated it is.
func parse(body []byte) (frame, error) {
	switch {
	case len(body) == 0:
		return frame{}, fmt.Errorf("%w: the body is empty", ErrTruncated)
	case body[0] == legacyGoVersion:
		return frame{}, fmt.Errorf("%w: it starts 0x%02x, not 0x%02x 0x%02x (the Go peer's framing of 0.3 and earlier does; it is not read)",
			ErrNotEncrypted, body[0], contract.EncryptedMagic, contract.EncryptedVersion)
	case body[0] != contract.EncryptedMagic:
		return frame{}, fmt.Errorf("%w: it starts 0x%02x, not 0x%02x 0x%02x", ErrNotEncrypted, body[0], contract.EncryptedMagic, contract.EncryptedVersion)
	case len(body) > 1 && body[1] != contract.EncryptedVersion:
		return frame{}, fmt.Errorf("%w: version 0x%02x, not 0x%02x", ErrNotEncrypted, body[1], contract.EncryptedVersion)
	case len(body) < headerSize:
		return frame{}, fmt.Errorf("%w: it ends inside its header, after %d of %d bytes", ErrTruncated, len(body), headerSize)
	}
	n := int(body[2])
	if n == 0 {
		return frame{}, fmt.Errorf("%w: its key id is empty", ErrNotEncrypted)
	}
	if len(body) < headerSize+n {
		return frame{}, fmt.Errorf("%w: it ends inside its %d-byte key id, after %d bytes", ErrTruncated, n, len(body))
	}
	id := string(body[headerSize : headerSize+n])
	if err := checkKeyID(id); err != nil {
		return frame{}, fmt.Errorf("%w: %v", ErrNotEncrypted, err)
	}
	least := headerSize + n + contract.EncryptedNonceSize + contract.EncryptedTagSize
	if len(body) < least {
		return frame{}, fmt.Errorf("%w: %d bytes under key id %q, which needs at least %d (header, nonce and tag)", ErrTruncated, len(body), id, least)
	}
	nonceAt := headerSize + n
	return frame{
		header: body[:nonceAt:nonceAt],
		nonce:  body[nonceAt : nonceAt+contract.EncryptedNonceSize],
		sealed: body[nonceAt+contract.EncryptedNonceSize:],
		keyID:  id,
	}, nil
}

// legacyGoVersion is the first byte of the Go peer's framing of 0.3 and
// earlier, named in the error for such a body.
const legacyGoVersion = 0x01
