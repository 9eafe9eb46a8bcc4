package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/codectest"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/postgres"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/sqlite"
	"github.com/acemq-go/acemq/transport"
)

// formatFiles are the files show reads bodies with: the fixtures' two keys,
// their Avro schema, a SQLite registry holding it under the fixtures' id 7,
// and a claim-check store directory holding one payload under
// invoice-0001.
type formatFiles struct {
	dir, keys, schema, registry, store string
	keyText                            string
}

func writeFormatFiles(t *testing.T) formatFiles {
	t.Helper()
	dir := t.TempDir()
	f := codectest.LoadCrypto(t)
	ff := formatFiles{
		dir: dir, keys: filepath.Join(dir, "keys.txt"), schema: filepath.Join(dir, "order.avsc"),
		registry: filepath.Join(dir, "registry.db"), store: filepath.Join(dir, "claims"),
		keyText: fmt.Sprintf("# the fixtures' keys\n%s %s current\n%s %s\n", f.Keys["first"].ID, f.Keys["first"].Base64, f.Keys["second"].ID, f.Keys["second"].Base64),
	}
	if err := os.WriteFile(ff.keys, []byte(ff.keyText), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(codectest.Path(t, "codec-interop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var codecs struct {
		Schema string `json:"avro_schema"`
	}
	if err := json.Unmarshal(data, &codecs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ff.schema, []byte(codecs.Schema), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := sqlite.Open(t.Context(), ff.registry)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for i := 1; i < 7; i++ { // ids from 1: the schema is the seventh
		if _, err := reg.Register(t.Context(), fmt.Sprintf(`{"type":"record","name":"Earlier%d","fields":[]}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := reg.Register(t.Context(), codecs.Schema); err != nil || id != 7 {
		t.Fatalf("the schema registered as id %d, %v; want 7", id, err)
	}
	if err := os.Mkdir(ff.store, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ff.store, "invoice-0001"), []byte(`{"invoice":"I-1","lines":1200}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return ff
}

// formatMessages are a message of every format the family writes: every
// codec fixture, encrypted fixtures of each library (one under the second
// key), claim checks inline and offloaded, an encrypted claim check, a
// body under a key nobody holds, and bytes. Headers vary in AMQP type.
func formatMessages(t *testing.T) []transport.Message {
	t.Helper()
	var ms []transport.Message
	add := func(id, contentType string, body []byte) {
		ms = append(ms, transport.Message{ContentType: contentType, MessageID: id, Persistent: true, Body: body,
			Headers: transport.Table{contract.HeaderID: id, contract.HeaderType: "order.placed", contract.HeaderAttempt: int64(3),
				contract.HeaderError: "exhausted 3 attempts: " + id}})
	}
	for _, format := range []string{"yaml", "toml", "xml", "protobuf", "avro", "avro-registered"} {
		for _, s := range codectest.Load(t).Of(t, format) {
			add(format+"-"+s.Producer, s.ContentType, s.Body)
		}
	}
	f := codectest.LoadCrypto(t)
	for _, i := range []int{0, 6, 14} { // java "hello", python JSON, ruby under the second key
		s := f.Samples[i]
		add("encrypted-"+s.Library, contract.ContentTypeEncrypted, s.Body)
	}
	add("claim-inline", "application/json", append([]byte{contract.ClaimCheckMagic, contract.ClaimCheckVersion, contract.ClaimCheckInline}, `{"n":1}`...))
	add("claim-offloaded", "application/json", append([]byte{contract.ClaimCheckMagic, contract.ClaimCheckVersion, contract.ClaimCheckOffloaded}, "invoice-0001"...))
	add("claim-gone", "application/json", append([]byte{contract.ClaimCheckMagic, contract.ClaimCheckVersion, contract.ClaimCheckOffloaded}, "invoice-0002"...))
	// An encrypted claim check: a body encrypted here, whose nonce is
	// random, but whose preview is not.
	k, err := encryption.NewKeyring(f.Keys["first"].ID, decode64(t, f.Keys["first"].Base64))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := k.Encrypt(append([]byte{contract.ClaimCheckMagic, contract.ClaimCheckVersion, contract.ClaimCheckInline}, `{"n":2}`...))
	if err != nil {
		t.Fatal(err)
	}
	add("encrypted-claim", contract.ContentTypeEncrypted, sealed)
	retired := append([]byte{contract.EncryptedMagic, contract.EncryptedVersion, 12}, "2024-retired"...)
	add("encrypted-retired", contract.ContentTypeEncrypted, append(retired, make([]byte, contract.EncryptedNonceSize+contract.EncryptedTagSize+4)...))
	add("bytes", "application/octet-stream", []byte{0xff, 0xfe, 0x00, 0x01})
	// Headers of every AMQP type the export keeps, on the first message.
	maps := ms[0].Headers
	maps["int32"], maps["int16"], maps["float64"], maps["float32"], maps["bool"] = int32(-7), int16(12), 2.5, float32(0.25), true
	maps["bytes"], maps["time"], maps["void"] = []byte{0, 0xff, 'x'}, time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), nil
	maps["table"], maps["array"] = transport.Table{"a": "b", "n": int64(1)}, []any{"x", int64(2), transport.Table{"deep": true}}
	return ms
}

func decode64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// publishAll publishes ms to queue, declared here, mandatory and confirmed.
func publishAll(t *testing.T, tr transport.Transport, queue string, ms []transport.Message) {
	t.Helper()
	ctx := t.Context()
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: queue, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tr.DeleteQueue(context.Background(), queue) })
	for _, m := range ms {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: queue, Mandatory: true, Message: m})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// What show prints of a body of every format: with everything it may
// need, with nothing (each says what it needs), and with a keyring that
// holds another key under the first id.
func TestDLQShowFormats(t *testing.T) {
	url := "memory://cli-dlq-show-formats"
	conn, err := connect(t.Context(), url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	publishAll(t, conn.Transport(), "orders.placed.dlq", formatMessages(t))
	ff := writeFormatFiles(t)
	t.Setenv(keysEnv, "")
	all := []string{"dlq", "show", "orders.placed.dlq", "--limit", "0", "--url", url,
		"--keys", ff.keys, "--avro-schema", ff.schema, "--schema-registry", ff.registry, "--claim-store", ff.store}
	golden := func(name string, args ...string) result {
		t.Helper()
		r := run(t, "", args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%s: exit %d, stderr:\n%s", name, r.code, r.stderr)
		}
		wantGolden(t, name, strings.ReplaceAll(r.stdout, ff.dir, "$TMP"))
		return r
	}
	golden("dlq-show-formats", all...)
	r := golden("dlq-show-formats-json", append(all, "--json")...)
	var shown []shownMessage
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil {
		t.Fatal(err)
	}
	for _, s := range shown {
		if s.DecodeError != "" && s.ID != "claim-gone" && s.ID != "encrypted-retired" {
			t.Errorf("%s was not decoded with everything given: %s", s.ID, s.DecodeError)
		}
	}
	golden("dlq-show-formats-bare", "dlq", "show", "orders.placed.dlq", "--limit", "0", "--url", url)

	other := filepath.Join(t.TempDir(), "other-keys.txt")
	if err := os.WriteFile(other, []byte("2026-01 "+base64.StdEncoding.EncodeToString(make([]byte, 32))+" current\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(keysEnv, "2026-01 "+base64.StdEncoding.EncodeToString(make([]byte, 32))+" current")
	r = run(t, "", "dlq", "show", "orders.placed.dlq", "--limit", "0", "--url", url)
	wantGolden(t, "dlq-show-formats-other-keys", strings.ReplaceAll(r.stdout, ff.dir, "$TMP"))
	// --keys comes before the environment.
	r = run(t, "", "dlq", "show", "orders.placed.dlq", "--limit", "0", "--url", url, "--keys", ff.keys)
	if !strings.Contains(r.stdout, `"hello"`) || strings.Contains(r.stdout, "does not decrypt") {
		t.Errorf("--keys with $%s set: exit %d\n%s%s", keysEnv, r.code, r.stdout, r.stderr)
	}
	t.Setenv(keysEnv, ff.keyText)
	if r := run(t, "", "dlq", "show", "orders.placed.dlq", "--limit", "0", "--url", url); !strings.Contains(r.stdout, `"hello"`) {
		t.Errorf("$%s: exit %d\n%s%s", keysEnv, r.code, r.stdout, r.stderr)
	}
}

// Whatever show and the other verbs are given, good or bad, no byte of a
// key is printed: not the keys file, nor a key in base64, nor its bytes.
func TestDLQNeverPrintsAKey(t *testing.T) {
	url := "memory://cli-dlq-no-key"
	conn, err := connect(t.Context(), url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	publishAll(t, conn.Transport(), "orders.placed.dlq", formatMessages(t))
	ff := writeFormatFiles(t)
	f := codectest.LoadCrypto(t)
	first, second := f.Keys["first"].Base64, f.Keys["second"].Base64
	secrets := []string{ff.keyText, first, second, string(decode64(t, first)), string(decode64(t, second)), first[:16], second[:16]}
	dir := t.TempDir()
	bad := map[string]string{
		"no id":            first + " current\n",
		"a typo":           "2026-01 " + first[:20] + "!" + first[21:] + " current\n",
		"no key":           "2026-01\n" + second + "\n",
		"two current":      "a " + first + " current\nb " + second + " current\n",
		"none current":     "a " + first + "\nb " + second + "\n",
		"short":            "a " + first[:24] + " current\n",
		"same id twice":    "a " + first + " current\na " + second + "\n",
		"too many fields":  "a " + first + " current " + second + "\n",
		"one line":         "a " + first + " current; b " + second + " x",
		"key of 31 bytes":  "a " + base64.StdEncoding.EncodeToString(decode64(t, first)[:31]) + " current\n",
		"the key as an id": first + " " + second + " current\n",
	}
	var runs [][]string
	show := []string{"dlq", "show", "orders.placed.dlq", "--limit", "0", "--url", url}
	for name, text := range bad {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, append(show, "--keys", path), append(show, "--keys", path, "--json"))
		t.Run("env/"+name, func(t *testing.T) {
			t.Setenv(keysEnv, text)
			r := run(t, "", show...)
			if r.code != exitFailure || !strings.Contains(r.stderr, "$"+keysEnv) {
				t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			for _, s := range secrets {
				if strings.Contains(r.stdout+r.stderr, s) {
					t.Errorf("printed a key (%.8q...):\nstdout:\n%s\nstderr:\n%s", s, r.stdout, r.stderr)
				}
			}
		})
	}
	out := filepath.Join(dir, "export.jsonl")
	runs = append(runs,
		append(show, "--keys", ff.keys),
		append(show, "--keys", ff.keys, "--json"),
		append(show, "--keys", ff.keys, "--reasons"),
		append(show, "--keys", filepath.Join(dir, "missing")),
		append(show, "--keys", dir),
		append(show, "--keys", ff.keys, "--avro-schema", ff.keys),
		append(show, "--keys", ff.keys, "--schema-registry", ff.keys),
		append(show, "--keys", ff.keys, "--claim-store", ff.keys),
		[]string{"dlq", "show", "nowhere.dlq", "--url", url, "--keys", ff.keys},
		[]string{"dlq", "export", "orders.placed.dlq", "--url", url, "--out", out},
		[]string{"dlq", "import", out, "--url", url, "--to", "orders.placed.dlq", "--dry-run"},
		[]string{"dlq", "show", "--keys", ff.keys},
		[]string{"dlq", "show", "orders.placed.dlq", "--keys", ff.keys, "--url", "ftp://h/"},
	)
	t.Setenv(keysEnv, ff.keyText)
	for _, args := range runs {
		r := run(t, "", args...)
		for _, s := range secrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("acemq %s printed a key (%.8q...):\nstdout:\n%s\nstderr:\n%s", shellJoin(args), s, r.stdout, r.stderr)
			}
		}
		if len(args) > 8 && args[len(args)-2] == "--keys" && args[len(args)-1] != ff.keys && (r.code != exitFailure || !strings.Contains(r.stderr, "keys")) {
			t.Errorf("acemq %s: exit %d, stderr:\n%s\nwant the keys file's error", shellJoin(args), r.code, r.stderr)
		}
	}
}

// export then import keeps every message of every format exactly: body,
// content type, properties and each header with its AMQP type, on
// memory:// and on the test broker.
func TestDLQExportImportEveryFormat(t *testing.T) {
	for _, name := range []string{"memory", "broker"} {
		t.Run(name, func(t *testing.T) {
			url := "memory://cli-dlq-export-every-format"
			src, dst := "orders.placed.dlq", "orders.placed.restored"
			if name == "broker" {
				url = brokertest.URL(t)
				src, dst = contract.DeadLetterQueue(brokertest.UniqueName(t, "cli-formats")), brokertest.UniqueName(t, "cli-formats-restored")
				brokertest.DeleteWhenDone(t, src)
			}
			conn, err := connect(t.Context(), url, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			want := formatMessages(t)
			publishAll(t, conn.Transport(), src, want)
			publishAll(t, conn.Transport(), dst, nil)
			file := filepath.Join(t.TempDir(), "every-format.jsonl")
			n := len(want)
			wantRun(t, run(t, "", "dlq", "export", src, "--out", file, "--url", url), 0,
				fmt.Sprintf("%s: exported %d of the %d messages taken (the queue held %d); 0 left in place\n", src, n, n, n))
			wantRun(t, run(t, "", "dlq", "import", file, "--to", dst, "--url", url), 0,
				fmt.Sprintf("%s: imported %d of the %d messages taken; 0 left in place\n", file, n, n))
			for _, q := range []string{src, dst} {
				got := browseAll(t, conn, q)
				if len(got) != n {
					t.Fatalf("%s holds %d messages, want %d", q, len(got), n)
				}
				for i, m := range got {
					w := want[i]
					if !bytes.Equal(m.Body, w.Body) || m.ContentType != w.ContentType || m.MessageID != w.MessageID || m.Persistent != w.Persistent {
						t.Errorf("%s message %d (%s): body % x, content type %q; want % x, %q", q, i, w.MessageID, m.Body, m.ContentType, w.Body, w.ContentType)
					}
					if !reflect.DeepEqual(inUTC(m.Headers), inUTC(w.Headers)) {
						t.Errorf("%s message %d (%s): headers\n%#v\nwant\n%#v", q, i, w.MessageID, m.Headers, w.Headers)
					}
				}
			}
		})
	}
}

func browseAll(t *testing.T, conn *acemq.Conn, queue string) []transport.Message {
	t.Helper()
	var ms []transport.Message
	if err := deadletter.Browse(t.Context(), conn, queue, 0, func(m transport.Message) error {
		ms = append(ms, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ms
}

// inUTC is v with its times in UTC: an AMQP timestamp is seconds since
// the epoch, which the client reads in local time.
func inUTC(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UTC()
	case transport.Table:
		t := transport.Table{}
		for k, e := range v {
			t[k] = inUTC(e)
		}
		return t
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = inUTC(e)
		}
		return a
	}
	return v
}

// --schema-registry takes a postgres:// URL: show decodes a registered
// Avro body by the id the test server's registry gave its schema.
func TestDLQShowPostgresRegistry(t *testing.T) {
	pg := dbtest.PostgresURL(t)
	schema, err := os.ReadFile(writeFormatFiles(t).schema)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := postgres.Open(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	id, err := reg.Register(t.Context(), string(schema))
	reg.Close()
	if err != nil {
		t.Fatal(err)
	}
	sample := codectest.By(t, codectest.Load(t).Of(t, "avro-registered"), "go")
	body := binary.BigEndian.AppendUint32([]byte{contract.AvroFramingMagic}, id)
	body = append(body, sample.Body[contract.AvroFramingHeaderSize:]...)
	url := "memory://cli-dlq-show-postgres"
	conn, err := connect(t.Context(), url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	publishAll(t, conn.Transport(), "q.dlq", []transport.Message{{ContentType: sample.ContentType, Body: body}})
	r := run(t, "", "dlq", "show", "q.dlq", "--url", url, "--schema-registry", pg)
	want := fmt.Sprintf("   body:    {\"orderId\":\"o-1\",\"totalCents\":4250,\"tenant\":\"acme\"} (application/vnd.acemq.avro, 16 bytes)\n   decoded: registered avro, schema id %d > avro, schema org.acemq.test.OrderPlaced\n", id)
	if r.code != 0 || !strings.HasSuffix(r.stdout, want) {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant it to end\n%s", r.code, r.stdout, r.stderr, want)
	}
}

// The docs' show examples of bodies are real output: each body and
// decoded line of docs/cli.md and docs/operators.md is a line of one of
// the goldens TestDLQShowFormats writes (its store directory named as the
// docs' command names it).
func TestDocsShowFormats(t *testing.T) {
	var goldens strings.Builder
	for _, name := range []string{"dlq-show-formats", "dlq-show-formats-bare", "dlq-show-formats-other-keys", "dlq-show-formats-json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		goldens.WriteString(strings.ReplaceAll(string(data), "$TMP/claims", "claims"))
	}
	checked := 0
	for _, doc := range []string{"../../docs/cli.md", "../../docs/operators.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if !strings.HasPrefix(line, "   body:    ") && !strings.HasPrefix(line, "   decoded: ") && !strings.HasPrefix(line, `  "decoded": `) {
				continue
			}
			if !strings.Contains(line, "decoded") && !strings.Contains(line, "bytes") {
				continue // the demo's JSON bodies, from RabbitMQ
			}
			checked++
			if !strings.Contains(goldens.String(), strings.TrimLeft(line, " ")) {
				t.Errorf("%s shows a line no golden has:\n%s", doc, line)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d lines of the docs, want the examples of every format", checked)
	}
}
