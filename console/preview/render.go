package preview

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	hamba "github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// maxNesting is how deep a wire dump looks into length-delimited fields
// for nested messages, and how deep groups may nest.
const maxNesting = 16

// dumpWire renders protobuf wire format without its schema, as
// {1: "o-1", 2: 4250, 3: {1: 7}, 4: 42.5}: each field by number, varints as
// unsigned integers, fixed64 and fixed32 as their plausible numeric
// reading (fixedReading), a length-delimited field as a string when it is
// printable UTF-8, else as a nested message when it parses as one, else as
// hex bytes; groups as nested messages. The choices of a length-delimited
// field are protoc --decode_raw's.
func dumpWire(b []byte, depth int) (string, error) {
	var sb strings.Builder
	if err := dumpFields(&sb, b, depth, 0); err != nil {
		return "", err
	}
	return sb.String(), nil
}

func dumpFields(sb *strings.Builder, b []byte, depth, offset int) error {
	sb.WriteByte('{')
	for first, at := true, 0; at < len(b); first = false {
		num, typ, n := protowire.ConsumeTag(b[at:])
		if n < 0 {
			return fmt.Errorf("%w: the tag at byte %d: %v", ErrNotProtobuf, offset+at, protowire.ParseError(n))
		}
		if !first {
			sb.WriteString(", ")
		}
		fmt.Fprintf(sb, "%d: ", num)
		at += n
		var err error
		switch typ {
		case protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(b[at:])
			sb.WriteString(strconv.FormatUint(v, 10))
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b[at:])
			sb.WriteString(fixedReading(uint64(v), float64(math.Float32frombits(v)), 32))
		case protowire.Fixed64Type:
			var v uint64
			v, n = protowire.ConsumeFixed64(b[at:])
			sb.WriteString(fixedReading(v, math.Float64frombits(v), 64))
		case protowire.BytesType:
			var v []byte
			v, n = protowire.ConsumeBytes(b[at:])
			if n >= 0 {
				dumpBytes(sb, v, depth)
			}
		case protowire.StartGroupType:
			if depth >= maxNesting {
				return fmt.Errorf("%w: groups nested deeper than %d at byte %d", ErrNotProtobuf, maxNesting, offset+at)
			}
			var v []byte
			v, n = protowire.ConsumeGroup(num, b[at:])
			if n >= 0 {
				err = dumpFields(sb, v, depth+1, offset+at)
			}
		default: // an end group without its start, or a reserved type
			return fmt.Errorf("%w: field %d at byte %d has wire type %d out of place", ErrNotProtobuf, num, offset+at-n, typ)
		}
		if err != nil {
			return err
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d at byte %d: %v", ErrNotProtobuf, num, offset+at, protowire.ParseError(n))
		}
		at += n
	}
	sb.WriteByte('}')
	return nil
}

// fixedReading renders a fixed64 or fixed32 field (of bits bits) without
// its schema: as the floating-point number its bits are (double, float)
// when that is a plausible value, written with a decimal point (42.5,
// 4250.0), else as an integer (fixed64, sfixed64, fixed32, sfixed32:
// negative when the signed reading is), as a person would guess. A small
// integer's bits read as a denormal float, an implausible one.
func fixedReading(v uint64, f float64, bits int) string {
	if a := math.Abs(f); f == 0 && v == 0 || a >= 1e-7 && a < 1e16 {
		s := strconv.FormatFloat(f, 'g', -1, bits)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	}
	if bits == 32 {
		return strconv.FormatInt(int64(int32(uint32(v))), 10)
	}
	if int64(v) < 0 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatUint(v, 10)
}

func dumpBytes(sb *strings.Builder, v []byte, depth int) {
	if printable(v) {
		sb.WriteString(strconv.Quote(string(v)))
		return
	}
	if depth < maxNesting {
		if s, err := dumpWire(v, depth+1); err == nil {
			sb.WriteString(s)
			return
		}
	}
	sb.WriteString("0x" + hex.EncodeToString(v))
}

// printable is UTF-8 text without control characters other than
// whitespace: a string field, most likely, rather than a nested message.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// renderAvro renders a value hamba decoded into any as JSON, the fields of
// records in the schema's order (a map would sort them).
func renderAvro(s hamba.Schema, v any) string {
	var sb strings.Builder
	writeAvro(&sb, s, v)
	return sb.String()
}

func writeAvro(sb *strings.Builder, s hamba.Schema, v any) {
	switch s := s.(type) {
	case *hamba.RecordSchema:
		if m, ok := v.(map[string]any); ok {
			sb.WriteByte('{')
			for i, f := range s.Fields() {
				if i > 0 {
					sb.WriteByte(',')
				}
				writeJSON(sb, f.Name())
				sb.WriteByte(':')
				writeAvro(sb, f.Type(), m[f.Name()])
			}
			sb.WriteByte('}')
			return
		}
	case *hamba.ArraySchema:
		if a, ok := v.([]any); ok {
			sb.WriteByte('[')
			for i, e := range a {
				if i > 0 {
					sb.WriteByte(',')
				}
				writeAvro(sb, s.Items(), e)
			}
			sb.WriteByte(']')
			return
		}
	case *hamba.UnionSchema:
		// hamba decodes a union's value other than null as Avro's JSON
		// does: {"branch name": value}.
		if m, ok := v.(map[string]any); ok && len(m) == 1 {
			for _, t := range s.Types() {
				if e, ok := m[schemaName(t)]; ok {
					sb.WriteByte('{')
					writeJSON(sb, schemaName(t))
					sb.WriteByte(':')
					writeAvro(sb, t, e)
					sb.WriteByte('}')
					return
				}
			}
		}
	case *hamba.MapSchema:
		if m, ok := v.(map[string]any); ok {
			sb.WriteByte('{')
			for i, k := range slices.Sorted(maps.Keys(m)) {
				if i > 0 {
					sb.WriteByte(',')
				}
				writeJSON(sb, k)
				sb.WriteByte(':')
				writeAvro(sb, s.Values(), m[k])
			}
			sb.WriteByte('}')
			return
		}
	case *hamba.RefSchema:
		writeAvro(sb, s.Schema(), v)
		return
	}
	writeJSON(sb, v)
}

func writeJSON(sb *strings.Builder, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(strconv.Quote(fmt.Sprint(v)))
	}
	sb.Write(b)
}

// schemaName is a schema's full name, or its type for an unnamed one.
func schemaName(s hamba.Schema) string {
	if n, ok := s.(hamba.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}
