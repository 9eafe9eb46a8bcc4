package contract

// Encrypted bodies (section 9): AES-GCM, the body framed as EncryptedMagic,
// EncryptedVersion, one byte of key-id length (1 to 255), the key id, a
// random nonce of EncryptedNonceSize bytes, then the ciphertext and its tag
// of EncryptedTagSize bytes. The associated data is the header: magic,
// version, length and key id.
const (
	// ContentTypeEncrypted is what an encrypted body is sent as; a consumer
	// reads any content type starting with it.
	ContentTypeEncrypted = "application/vnd.acemq.encrypted"
	// EncryptedMagic is an encrypted body's first byte, 0xAE.
	EncryptedMagic byte = 0xAE
	// EncryptedVersion is its second byte.
	EncryptedVersion byte = 0x01
	// EncryptedNonceSize is the length of the GCM nonce after the key id.
	EncryptedNonceSize = 12
	// EncryptedTagSize is the length of the GCM tag ending the body: 128
	// bits.
	EncryptedTagSize = 16
	// EncryptedKeySize is the length of a new key: AES-256. Keys of 16 and
	// 24 bytes are read too (.NET accepts only 32).
	EncryptedKeySize = 32
)
