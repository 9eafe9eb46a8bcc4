package encryption

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/acemq-go/acemq/contract"
)

// Keyring holds keys by id: the current one encrypts, every one decrypts
// what was encrypted under its id. Keep a retired key in the ring until the
// queues (dead-letter and parked queues too) hold no message encrypted with
// it. It is safe for concurrent use, rotation included.
//
// A Keyring keeps no key bytes, only their AES-GCM ciphers, and prints
// (fmt's every verb), logs (slog) and marshals as its ids alone.
type Keyring struct {
	mu      sync.RWMutex
	keys    map[string]*sealer
	current string
}

// sealer is one key's cipher, behind a pointer so that nothing that prints
// the map by reflection reaches the cipher's key schedule.
type sealer struct{ aead cipher.AEAD }

// NewKeyring returns a keyring holding one key, current. A key is 16, 24 or
// 32 bytes (AES-128, -192, -256); new keys are 32 (GenerateKey), and the
// .NET library reads only those. A key id is 1 to 255 bytes of UTF-8
// without NUL.
func NewKeyring(currentID string, currentKey []byte) (*Keyring, error) {
	k := &Keyring{}
	if err := k.Add(currentID, currentKey); err != nil {
		return nil, err
	}
	k.current = currentID
	return k, nil
}

// Add adds a key that decrypts but does not encrypt until SetCurrent makes
// it current. An id already in the ring is refused: one id must mean one
// key, or what it encrypted would not decrypt.
func (k *Keyring) Add(id string, key []byte) error {
	if err := k.add(id, key); err != nil {
		return fmt.Errorf("encryption: %w", err)
	}
	return nil
}

// add is Add, its error without the package's prefix.
func (k *Keyring) add(id string, key []byte) error {
	s, err := newSealer(id, key)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.keys[id]; ok {
		return fmt.Errorf("key id %q is already in the keyring", id)
	}
	if k.keys == nil {
		k.keys = map[string]*sealer{}
	}
	k.keys[id] = s
	return nil
}

func newSealer(id string, key []byte) (*sealer, error) {
	if err := checkKeyID(id); err != nil {
		return nil, err
	}
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("key %q is %d bytes; an AES key is 16, 24 or 32 (new keys %d)", id, len(key), contract.EncryptedKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", id, err)
	}
	if aead.NonceSize() != contract.EncryptedNonceSize || aead.Overhead() != contract.EncryptedTagSize {
		return nil, fmt.Errorf("key %q: GCM with a %d-byte nonce and a %d-byte tag, not the contract's", id, aead.NonceSize(), aead.Overhead())
	}
	return &sealer{aead}, nil
}

// SetCurrent makes the key of id, already in the ring, the one that
// encrypts. The key current before stays readable.
func (k *Keyring) SetCurrent(id string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.keys[id]; !ok {
		return fmt.Errorf("%w %q: add it before making it current", ErrUnknownKey, id)
	}
	k.current = id
	return nil
}

// Current is the id of the key that encrypts, "" for none.
func (k *Keyring) Current() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.current
}

// IDs are the ids of every key in the ring, sorted.
func (k *Keyring) IDs() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.ids()
}

func (k *Keyring) ids() []string {
	ids := make([]string, 0, len(k.keys))
	for id := range k.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Encrypt frames plaintext under the current key with a new random nonce.
func (k *Keyring) Encrypt(plaintext []byte) ([]byte, error) {
	k.mu.RLock()
	id, s := k.current, k.keys[k.current]
	k.mu.RUnlock()
	if s == nil {
		return nil, errors.New("encryption: the keyring has no current key")
	}
	h := header(id)
	body := make([]byte, 0, len(h)+contract.EncryptedNonceSize+len(plaintext)+contract.EncryptedTagSize)
	body = append(body, h...)
	nonce := body[len(h) : len(h)+contract.EncryptedNonceSize]
	rand.Read(nonce) // never fails (crypto/rand, Go 1.24 and later)
	body = body[:len(h)+len(nonce)]
	// The header is the associated data; Seal appends after the nonce, in
	// the capacity made for it.
	return s.aead.Seal(body, nonce, plaintext, body[:len(h)]), nil
}

// Decrypt returns the plaintext of an encrypted body. Its errors match
// ErrNotEncrypted, ErrTruncated, ErrUnknownKey or ErrDecrypt, and name the
// key id when the body has one.
func (k *Keyring) Decrypt(body []byte) ([]byte, error) {
	f, err := parse(body)
	if err != nil {
		return nil, err
	}
	k.mu.RLock()
	s := k.keys[f.keyID]
	var held []string
	if s == nil {
		held = k.ids()
	}
	k.mu.RUnlock()
	if s == nil {
		return nil, fmt.Errorf("%w %q (the keyring holds %s)", ErrUnknownKey, f.keyID, quoteAll(held))
	}
	plaintext, err := s.aead.Open(nil, f.nonce, f.sealed, f.header)
	if err != nil {
		return nil, fmt.Errorf("%w with key %q: not the key it was encrypted with, or the body was altered", ErrDecrypt, f.keyID)
	}
	return plaintext, nil
}

func quoteAll(ids []string) string {
	if len(ids) == 0 {
		return "no key"
	}
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// String names the current key and every id, never a key.
func (k *Keyring) String() string {
	if k == nil {
		return "encryption.Keyring(nil)"
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return fmt.Sprintf("encryption.Keyring{current: %q, keys: %s}", k.current, quoteAll(k.ids()))
}

// GoString is String, for %#v.
func (k *Keyring) GoString() string { return k.String() }

// Format prints String for every verb, so that no verb (%+v, %x, %d...)
// reaches the fields.
func (k *Keyring) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", k.String())
		return
	}
	_, _ = io.WriteString(f, k.String())
}

// LogValue logs the current id and every id, never a key.
func (k *Keyring) LogValue() slog.Value {
	if k == nil {
		return slog.StringValue("encryption.Keyring(nil)")
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return slog.GroupValue(slog.String("current", k.current), slog.Any("keys", k.ids()))
}

// MarshalJSON writes the current id and every id, never a key.
func (k *Keyring) MarshalJSON() ([]byte, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return json.Marshal(struct {
		Current string   `json:"current"`
		Keys    []string `json:"keys"`
	}{k.current, k.ids()})
}
