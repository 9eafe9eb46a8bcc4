// Package sample makes dead letters of every format the AceMQ family
// writes and of every reason a message is set aside for, for the console's
// layout tests and its screenshots (cmd/console-screenshots). The binary
// bodies are the family's own bytes: testdata/fixtures/codec-samples.json
// (YAML, TOML, XML, protobuf, Avro, from the Java and Go libraries) and
// crypto-interop.json (encrypted bodies and their keys).
package sample

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/schemaregistry"
	"github.com/acemq-go/acemq/transport"
)

// Set is a set of dead letters and what previews them: the fixtures' Avro
// schema (fixed and registered under id 1) and keyring.
type Set struct {
	Messages []transport.Message
	Preview  preview.Options
}

// reasons are a dead letter's reason of each class: the library's
// x-acemq-error, or the broker's x-death reason (with no x-acemq-error).
var reasons = []struct{ acemq, broker string }{
	{acemq: contract.ExhaustedReason(5) + ": payment declined for order A-1 (card 4242)"},
	{acemq: contract.ExhaustedReason(5) + ": timeout calling stock after 30s"},
	{acemq: contract.ReasonTextPanicked + "runtime error: index out of range [3] with length 3"},
	{acemq: contract.ReasonTextUndecodable + "yaml: line 3: mapping values are not allowed in this context"},
	{acemq: contract.TooOldReason(2*time.Minute) + ": stale price"},
	{acemq: contract.ReasonTextFatal},
	{acemq: contract.ReasonTextNoDecision},
	{broker: contract.DeathReasonDeliveryLimit},
	{broker: contract.DeathReasonRejected},
	{broker: contract.DeathReasonExpired},
	{broker: contract.DeathReasonMaxLength},
}

// DeadLetters are dead letters of every format of the fixtures in dir (the
// repository's testdata/fixtures), plus JSON, text and an inline claim
// check, each set aside for a reason of its own (cycling through every
// class), for the source queue source.
func DeadLetters(dir, source string, now time.Time) (Set, error) {
	var set Set
	codecs, err := readCodecSamples(filepath.Join(dir, "codec-samples.json"))
	if err != nil {
		return set, err
	}
	crypto, keys, err := readCrypto(filepath.Join(dir, "crypto-interop.json"))
	if err != nil {
		return set, err
	}
	set.Preview = preview.Options{AvroSchema: codecs.schema, Registry: fixedRegistry{1: codecs.schema}, Keyring: keys}
	type body struct {
		name, contentType string
		bytes             []byte
	}
	bodies := []body{
		{"json", contract.ContentTypeJSON, []byte(`{"orderId":"A-1","customer":"acme","totalCents":4250,"currency":"GBP","paid":true}`)},
		{"text", contract.ContentTypeText, []byte("order A-1 for acme: 4250 GBP, paid")},
	}
	for _, s := range codecs.samples {
		bodies = append(bodies, body{s.Producer + " " + s.Format, s.ContentType, s.Body})
	}
	for _, c := range crypto {
		if strings.HasPrefix(c.Plaintext, "{") { // one encrypted JSON body
			bodies = append(bodies, body{c.Library + " encrypted", contract.ContentTypeEncrypted, c.Body})
			break
		}
	}
	inline := append([]byte{contract.ClaimCheckMagic, contract.ClaimCheckVersion, contract.ClaimCheckInline}, bodies[0].bytes...)
	bodies = append(bodies, body{"claim check", contract.ContentTypeJSON, inline})
	for i, b := range bodies {
		r := reasons[i%len(reasons)]
		id := fmt.Sprintf("%s-%03d", "sample", i)
		h := transport.Table{
			contract.HeaderID:        id,
			contract.HeaderType:      "order.placed",
			contract.HeaderAttempt:   int64(5),
			contract.HeaderFirstSeen: now.Add(-time.Duration(i+1) * 7 * time.Minute).UnixMilli(),
			contract.HeaderOrigin:    "orders@host-1",
			"tenant":                 "acme",
			"format":                 b.name,
		}
		death := transport.Table{"queue": source, "reason": contract.DeathReasonRejected, "count": int64(1), "exchange": "",
			"time": now.Add(-time.Duration(i+1) * time.Minute).UTC().Truncate(time.Second)}
		if r.acemq != "" {
			h[contract.HeaderError] = r.acemq
		} else {
			death["reason"] = r.broker
			h[contract.HeaderFirstDeathPrefix+"reason"] = r.broker
			h[contract.HeaderFirstDeathPrefix+"queue"] = source
		}
		h[contract.HeaderDeath] = []any{death}
		set.Messages = append(set.Messages, transport.Message{Headers: h, ContentType: b.contentType, MessageID: id, Persistent: true, Body: b.bytes})
	}
	return set, nil
}

type codecSamples struct {
	schema  string
	samples []struct {
		Producer, Format, ContentType string
		Body                          []byte `json:"bodyBase64"`
	}
}

func readCodecSamples(path string) (codecSamples, error) {
	var f struct {
		AvroSchema json.RawMessage `json:"avroSchema"`
		Samples    []struct {
			Producer, Format, ContentType string
			Body                          []byte `json:"bodyBase64"`
		} `json:"samples"`
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	if err != nil {
		return codecSamples{}, fmt.Errorf("sample: %w", err)
	}
	return codecSamples{string(f.AvroSchema), f.Samples}, nil
}

type cryptoSample struct {
	Library   string `json:"library"`
	Plaintext string `json:"plaintext"`
	Body      []byte `json:"body"`
}

func readCrypto(path string) ([]cryptoSample, *encryption.Keyring, error) {
	var f struct {
		Keys map[string]struct {
			ID     string `json:"id"`
			Base64 string `json:"base64"`
		} `json:"keys"`
		Samples []cryptoSample `json:"samples"`
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("sample: %w", err)
	}
	first, second := f.Keys["first"], f.Keys["second"]
	k, err := encryption.ParseKeys(first.ID + " " + first.Base64 + " current\n" + second.ID + " " + second.Base64)
	if err != nil {
		return nil, nil, fmt.Errorf("sample: the crypto fixture's keys: %w", err)
	}
	return f.Samples, k, nil
}

// fixedRegistry is a read-only schema registry of the fixtures' schema.
type fixedRegistry map[uint32]string

func (r fixedRegistry) Register(context.Context, string) (uint32, error) {
	return 0, errors.New("sample: the registry is read-only")
}

func (r fixedRegistry) Schema(_ context.Context, id uint32) (string, error) {
	if s, ok := r[id]; ok {
		return s, nil
	}
	return "", schemaregistry.Unknown(id)
}
