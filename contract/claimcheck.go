package contract

// The claim-check framing (section 10): a body is ClaimCheckMagic,
// ClaimCheckVersion, then ClaimCheckInline and the payload itself, or
// ClaimCheckOffloaded and the store key as bare UTF-8. Any other body is the
// inner codec's as it is.
const (
	ClaimCheckMagic     byte = 0xAC
	ClaimCheckVersion   byte = 0x01
	ClaimCheckInline    byte = 0x00
	ClaimCheckOffloaded byte = 0x01
)

// ClaimCheckDefaultThreshold is the payload size, in bytes, from which a
// claim-check codec offloads: a payload shorter than it travels inline.
const ClaimCheckDefaultThreshold = 64 << 10

// ClaimCheckKeyPattern is what a filesystem store accepts as a key before it
// becomes a file name: no separator, no leading dot, at most 128 bytes.
const ClaimCheckKeyPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

// ClaimCheckRetention is what the error of a payload gone from its store
// says: the message is parked, and retrying cannot bring it back.
const ClaimCheckRetention = "the store's retention must outlast every queue, dead-letter queue and replay"
