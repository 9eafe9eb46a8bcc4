package contract

// The protobuf codec's content types (section 8): it writes the first and
// reads it, the next two and any */*+protobuf.
const (
	ContentTypeProtobuf       = "application/x-protobuf"
	ContentTypeProtobufIETF   = "application/protobuf"
	ContentTypeProtobufGoogle = "application/vnd.google.protobuf"
	ContentTypeProtobufSuffix = "+protobuf"
)

// The Avro codecs' content types (section 8). The fixed-schema codec writes
// avro/binary and reads any avro/*, application/avro and any */*+avro; the
// registered one writes application/vnd.acemq.avro and reads it,
// application/avro and any */*+avro. Neither reads the other's own type.
const (
	ContentTypeAvro            = "avro/binary"
	ContentTypeAvroPrefix      = "avro/"
	ContentTypeAvroApplication = "application/avro"
	ContentTypeAvroSuffix      = "+avro"
	ContentTypeAvroRegistered  = "application/vnd.acemq.avro"
)

// The registered Avro framing (Confluent's, section 8): AvroFramingMagic,
// the schema id as 4 bytes big-endian, then the Avro body.
const (
	AvroFramingMagic      byte = 0x00
	AvroFramingHeaderSize int  = 5 // the magic and the id, before the body
)
