package encryption

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ParseKeys reads a keyring from text: one key per entry, entries separated
// by newlines or semicolons (so that an environment variable may hold them
// on one line), each entry
//
//	id base64-key [current]
//
// with fields separated by spaces or tabs. The key is standard, padded
// base64 (`openssl rand -base64 32`); exactly one entry is marked current;
// blank entries and lines starting with # are left out. An id in this form
// holds no space, tab, semicolon or #. For example:
//
//	# retired in June: readable until the queues are drained
//	2025-06 Hx4dHBsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=
//	2026-01 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8= current
//
// Errors name the entry and its id, never a key.
func ParseKeys(text string) (*Keyring, error) {
	return parseKeys("keys", text)
}

// LoadFile reads a keyring from a file in the form ParseKeys reads.
func LoadFile(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption: keys file: %w", err)
	}
	return parseKeys("keys file "+path, string(data))
}

// FromEnv reads a keyring from the environment variable name, in the form
// ParseKeys reads (entries on one line separated by semicolons, or on
// lines of their own). An unset or empty variable is an error.
func FromEnv(name string) (*Keyring, error) {
	text, ok := os.LookupEnv(name)
	if !ok || strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("encryption: keys: $%s is not set", name)
	}
	return parseKeys("keys in $"+name, text)
}

// parseKeys reads the entries of text; errors say where, as "line 3" or,
// on a line of several entries, "line 1 entry 2".
func parseKeys(src, text string) (*Keyring, error) {
	k := &Keyring{}
	var current []string
	lineNo := 0
	for line := range strings.Lines(text) {
		lineNo++
		entries := strings.Split(line, ";")
		for i, entry := range entries {
			where := fmt.Sprintf("line %d", lineNo)
			if len(entries) > 1 {
				where += fmt.Sprintf(" entry %d", i+1)
			}
			entry = strings.TrimSpace(entry)
			if entry == "" || strings.HasPrefix(entry, "#") {
				continue
			}
			fields := strings.Fields(entry)
			id := fields[0]
			// Never the key's text in an error: it may be a key with a typo,
			// or a key written without its id, so an "id" that reads as a key
			// is refused without quoting it.
			if looksLikeKey(id) {
				return nil, fmt.Errorf("encryption: %s, %s: the entry starts with what reads as a key, not a key id: want \"id base64-key\"", src, where)
			}
			switch {
			case len(fields) == 1:
				return nil, fmt.Errorf("encryption: %s, %s: key id %q has no key", src, where, id)
			case len(fields) == 3 && fields[2] == "current":
				current = append(current, id)
			case len(fields) > 2:
				return nil, fmt.Errorf("encryption: %s, %s: key id %q: want \"id base64-key\" or \"id base64-key current\", not %d fields", src, where, id, len(fields))
			}
			key, err := base64.StdEncoding.Strict().DecodeString(fields[1])
			if err != nil {
				var corrupt base64.CorruptInputError
				errors.As(err, &corrupt)
				return nil, fmt.Errorf("encryption: %s, %s: key %q is not standard padded base64 (at its byte %d)", src, where, id, int64(corrupt))
			}
			if err := k.add(id, key); err != nil {
				return nil, fmt.Errorf("encryption: %s, %s: %w", src, where, err)
			}
		}
	}
	switch len(current) {
	case 0:
		if len(k.keys) == 0 {
			return nil, errors.New("encryption: " + src + ": no key")
		}
		return nil, fmt.Errorf("encryption: %s: none of %s is marked current", src, quoteAll(k.ids()))
	case 1:
		k.current = current[0]
		return k, nil
	}
	return nil, fmt.Errorf("encryption: %s: %s are all marked current; mark one", src, quoteAll(current))
}

// looksLikeKey reports whether s reads as an AES key in standard base64: a
// key written where its id belongs.
func looksLikeKey(s string) bool {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil && (len(b) == 16 || len(b) == 24 || len(b) == 32)
}
