// Package claimcheck sends large payloads through a store instead of the
// broker (the AceMQ family's claim check, docs/contract.md "Claim check"):
// a codec wrapping another one, whose bodies are either the payload inline
// or the key under which a Store holds it.
//
//	store, err := claimcheck.NewDir("/var/lib/orders/claims")
//	codec, err := claimcheck.New(acemq.JSON, store)
//	pub, err := acemq.NewPublisher[Invoice](conn, "billing", acemq.WithCodec(codec))
//	consumer, err := acemq.Consume(ctx, conn, "billing.invoices", handle, acemq.WithCodec(codec))
//
// The codec writes and reads its inner codec's content type. Its body is
// 0xAC 0x01 0x00 followed by the encoded payload when that is shorter than
// the threshold (DefaultThreshold, 64 KiB, unless WithThreshold says
// otherwise; 0 offloads every payload), or 0xAC 0x01 0x01 followed by the
// store key as bare UTF-8. A body without that framing is given to the inner
// codec as it is, so messages published before the codec was wrapped are
// still read.
//
// Reading an offloaded body fetches the payload. A key the store no longer
// holds (ErrNotFound) cannot come back by retrying: the message is parked,
// and the error says that the store's retention must outlast every queue,
// dead-letter queue and replay. Any other failure of the store is taken for
// the store being out of reach: the error is marked acemq.Temporary, so the
// consumer retries the message under its policy (and dead-letters it when
// the policy gives up) instead of parking it.
//
// The Codec interface has no context, so every store call the codec makes
// gets one of its own, from context.Background, with a deadline WithTimeout
// sets (DefaultTimeout, 30s): a publish waits that long at most for Put, a
// delivery that long at most for Get. The codec never deletes a payload
// (whoever owns the store's retention does; Store.Delete is for them), and
// never writes the x-acemq-claim header, which stays the application's.
//
// Two stores come with the package: Memory, in the process (for tests and
// for a publisher and consumer in one process), and Dir, a directory that
// several processes may share, as other users too: its files are 0644
// (DefaultFileMode) unless WithFileMode says otherwise. Any other store is a type with Put, Get and
// Delete. An S3-compatible object store, for instance, would Put with a
// PutObject of a new UUID key, Get with a GetObject whose "no such key"
// answer becomes an error matching ErrNotFound, and leave retention to a
// lifecycle rule on the bucket that outlasts every queue, dead-letter queue
// and replay; it lives in the user's own code, with its SDK, since this
// module adds no cloud dependency.
//
// The module is one module of small packages: importing claimcheck links
// the standard library, github.com/google/uuid and the acemq root package,
// nothing else, and a service that does not import it links none of it.
package claimcheck
