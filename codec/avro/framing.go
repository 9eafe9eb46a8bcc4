package avro

import (
	"encoding/binary"
	"fmt"

	"github.com/acemq-go/acemq/contract"
)

// frame puts the registered framing before an Avro body.
func frame(id uint32, body []byte) []byte {
	b := make([]byte, contract.AvroFramingHeaderSize, contract.AvroFramingHeaderSize+len(body))
	b[0] = contract.AvroFramingMagic
	binary.BigEndian.PutUint32(b[1:], id)
	return append(b, body...)
}

// unframe splits a framed body into its schema id and Avro body. The magic
// byte is checked first: a body of another kind is not framed, however long.
func unframe(data []byte) (id uint32, body []byte, err error) {
	if len(data) == 0 {
		return 0, nil, fmt.Errorf("acemq: %w: an empty body", ErrTruncated)
	}
	if data[0] != contract.AvroFramingMagic {
		return 0, nil, fmt.Errorf("acemq: %w: the body starts 0x%02x", ErrNotFramed, data[0])
	}
	if len(data) < contract.AvroFramingHeaderSize {
		return 0, nil, fmt.Errorf("acemq: %w: %d bytes, fewer than the framing's %d", ErrTruncated, len(data), contract.AvroFramingHeaderSize)
	}
	return binary.BigEndian.Uint32(data[1:]), data[contract.AvroFramingHeaderSize:], nil
}
