package encryption

import (
	"errors"
	"fmt"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// NewCodec encrypts what inner encodes: Marshal is inner's, then Encrypt with
// the keyring's current key; the body is sent as
// application/vnd.acemq.encrypted, which says nothing of inner's content
// type. It reads any content type starting with that one (case aside), and
// Unmarshal decrypts, then decodes with inner as inner's own content type
// (so of a composite inner, acemq.Codecs, only the members reading the
// first's type are tried). A body that does not decrypt is an error
// matching ErrUnknownKey, ErrDecrypt, ErrNotEncrypted or ErrTruncated, and a
// consumer parks the message with it. A nil keyring or inner codec is an
// error.
func NewCodec(keyring *Keyring, inner acemq.Codec) (acemq.Codec, error) {
	switch {
	case keyring == nil:
		return nil, errors.New("encryption: NewCodec needs a keyring, not nil")
	case inner == nil:
		return nil, errors.New("encryption: NewCodec needs an inner codec, not nil")
	}
	return codec{keyring, inner}, nil
}

type codec struct {
	keyring *Keyring
	inner   acemq.Codec
}

func (codec) ContentType() string { return contract.ContentTypeEncrypted }

// Reads claims every content type starting with the encrypted one, as the
// contract has it (parameters, or a suffix another library adds).
func (codec) Reads(contentType string) bool {
	n := len(contract.ContentTypeEncrypted)
	return len(contentType) >= n && strings.EqualFold(contentType[:n], contract.ContentTypeEncrypted)
}

func (c codec) Marshal(v any) ([]byte, error) {
	plaintext, err := c.inner.Marshal(v)
	if err != nil {
		return nil, err
	}
	return c.keyring.Encrypt(plaintext)
}

func (c codec) Unmarshal(_ string, data []byte, v any) error {
	plaintext, err := c.keyring.Decrypt(data)
	if err != nil {
		return err
	}
	if err := c.inner.Unmarshal(c.inner.ContentType(), plaintext, v); err != nil {
		return fmt.Errorf("encryption: the decrypted body: %w", err)
	}
	return nil
}
