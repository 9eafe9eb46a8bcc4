package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/schemaregistry"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/postgres"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/sqlite"
)

// keysEnv holds a keyring when --keys is not given.
const keysEnv = "ACEMQ_KEYS"

// previewOptions are show's flags for reading bodies.
type previewOptions struct {
	keys, avroSchema, registry, claimStore string
}

func (o *previewOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.keys, "keys", "", "decrypt encrypted bodies with the keyring in `FILE` (lines of \"id base64-key [current]\"; default $"+keysEnv+")")
	cmd.Flags().StringVar(&o.avroSchema, "avro-schema", "", "decode avro/* bodies with the Avro schema (JSON) in `FILE`")
	cmd.Flags().StringVar(&o.registry, "schema-registry", "", "decode registered Avro bodies with the schemas of the registry at `PATH|URL` (a SQLite file, or a postgres:// URL)")
	cmd.Flags().StringVar(&o.claimStore, "claim-store", "", "fetch offloaded claim-check payloads from the store directory `DIR`")
}

// open reads the keyring, the schema and the store, and opens the
// registry, which close closes. Its errors name no key, even when a file
// is given for another (a keys file as the Avro schema, whose error would
// quote it): what looks like a key in the keys or the schema is taken out.
func (o previewOptions) open(ctx context.Context) (*preview.Reader, func() error, error) {
	var keys, schema string
	r, close, err := o.openWith(ctx, &keys, &schema)
	if err != nil {
		return nil, nil, &redactedError{redact(err.Error(), keys+"\n"+schema), err}
	}
	return r, close, nil
}

func (o previewOptions) openWith(ctx context.Context, keys, schema *string) (r *preview.Reader, close func() error, err error) {
	var po preview.Options
	close = func() error { return nil }
	if po.Keyring, err = o.keyring(keys); err != nil {
		return nil, nil, err
	}
	if o.avroSchema != "" {
		text, err := os.ReadFile(o.avroSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("--avro-schema: %w", err)
		}
		po.AvroSchema, *schema = string(text), string(text)
	}
	if o.claimStore != "" {
		if po.ClaimStore, err = claimcheck.NewDir(o.claimStore); err != nil {
			return nil, nil, fmt.Errorf("--claim-store: %w", err)
		}
	}
	if o.registry != "" {
		reg, err := openRegistry(ctx, o.registry)
		if err != nil {
			return nil, nil, fmt.Errorf("--schema-registry: %w", err)
		}
		po.Registry, close = reg, reg.Close
	}
	if r, err = preview.New(po); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("--avro-schema %s: %w", o.avroSchema, err), close())
	}
	return r, close, nil
}

// closingRegistry is a registry the command opened.
type closingRegistry interface {
	schemaregistry.Registry
	Close() error
}

// openRegistry opens a postgres:// URL on PostgreSQL, anything else as a
// SQLite file, which must exist: opening a path mistyped would make an
// empty registry, and every id would be unknown.
func openRegistry(ctx context.Context, where string) (closingRegistry, error) {
	if strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://") {
		return postgres.Open(ctx, where)
	}
	info, err := os.Stat(where)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a SQLite file", where)
	}
	return sqlite.Open(ctx, where)
}

// keyring is --keys' keyring, else $ACEMQ_KEYS', else none; text is set
// to the keys' text. The keyring's errors name ids, never keys, but a line
// without its id would have its key taken for the id: open redacts them.
func (o previewOptions) keyring(text *string) (*encryption.Keyring, error) {
	var (
		k   *encryption.Keyring
		err error
		src = "$" + keysEnv
	)
	switch env, set := os.LookupEnv(keysEnv); {
	case o.keys != "":
		data, rerr := os.ReadFile(o.keys)
		if rerr != nil {
			return nil, fmt.Errorf("--keys: %w", rerr)
		}
		*text, src = string(data), "--keys "+o.keys
		k, err = encryption.LoadFile(o.keys)
	case set && strings.TrimSpace(env) != "":
		*text = env
		k, err = encryption.FromEnv(keysEnv)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// A line "key1 key2 current" is read as the id key1: show would print
	// it wherever it names the keyring's ids.
	for _, id := range k.IDs() {
		if b, err := base64.StdEncoding.DecodeString(id); err == nil && (len(b) == 16 || len(b) == 24 || len(b) == 32) {
			return nil, fmt.Errorf("%s: a key id is the base64 of %d bytes, an AES key: a line is \"id base64-key [current]\"", src, len(b))
		}
	}
	return k, nil
}

// redactedError is an error whose text has had keys taken out.
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redact takes out of s every word of keys that could be a key: 16
// characters or more of the base64 alphabet.
func redact(s, keys string) string {
	for _, w := range strings.FieldsFunc(keys, func(r rune) bool { return r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		if len(w) >= 16 && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == "" {
			s = strings.ReplaceAll(s, w, "(redacted)")
		}
	}
	return s
}

// shownBody is how show prints a body, from its preview.
type shownBody struct {
	// Body is the body as read: its text, or a rendering of it.
	Body          string `json:"body,omitempty"`
	BodyTruncated bool   `json:"bodyTruncated,omitempty"`
	// Decoded says how it was read, as "encrypted, key id \"k\" > json".
	Decoded string `json:"decoded"`
	// DecodeError is why it was not read to the end: an error, or the
	// flag that would read it.
	DecodeError string `json:"decodeError,omitempty"`

	rendered bool
	plain    bool // read as the text (or bytes) it is, through no layer
}

func showBody(p preview.Preview) shownBody {
	s := shownBody{Body: p.Text, BodyTruncated: p.Truncated, Decoded: p.Decoded(), rendered: p.Rendered}
	switch {
	case p.Err != nil:
		s.DecodeError = p.Err.Error()
	case p.Need != preview.NeedNothing:
		s.DecodeError = preview.Hint(p.Need)
	}
	switch s.Decoded {
	case "json", "yaml", "toml", "xml", "text", "bytes":
		s.plain = s.DecodeError == ""
	}
	return s
}

// writeBody writes a message's body lines.
func writeBody(w io.Writer, s shownMessage) {
	ct := orDefault(s.ContentType, "no content type")
	text := fmt.Sprintf("%q", s.Body)
	if s.rendered {
		text = s.Body
	}
	if s.BodyTruncated {
		text += "..."
	}
	switch {
	case s.plain && s.Decoded == "bytes":
		fmt.Fprintf(w, "   body:    %d bytes, not text (%s)\n", s.BodyBytes, ct)
		return
	case s.plain && s.BodyTruncated:
		fmt.Fprintf(w, "   body:    %s (%s, %d bytes)\n", text, ct, s.BodyBytes)
		return
	case s.plain:
		fmt.Fprintf(w, "   body:    %s (%s)\n", text, ct)
		return
	case s.DecodeError != "":
		fmt.Fprintf(w, "   body:    %d bytes (%s), not decoded: %s\n", s.BodyBytes, ct, s.DecodeError)
	default:
		fmt.Fprintf(w, "   body:    %s (%s, %d bytes)\n", text, ct, s.BodyBytes)
	}
	fmt.Fprintf(w, "   decoded: %s\n", s.Decoded)
}
