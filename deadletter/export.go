package deadletter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport"
)

// Export writes the messages of queue to w, one JSON line each (see
// Exported), and leaves them in the queue, or with remove takes each out of
// the queue only once its line is written: flushed and, when w is a file
// (it has Sync), on disk. o selects and bounds them as for a move.
func Export(ctx context.Context, c *acemq.Conn, queue string, w io.Writer, remove bool, o Options) (Progress, error) {
	s := &fileSink{queue: queue, w: w, buf: bufio.NewWriter(w)}
	s.enc = NewEncoder(s.buf)
	p, err := fromQueue(ctx, c, queue, o, s, !remove)
	if err != nil {
		return p, fmt.Errorf("export %s: %w", queue, err)
	}
	return p, nil
}

// fileSink writes export lines; a flush makes them durable, and only then
// are they confirmed.
type fileSink struct {
	queue   string
	w       io.Writer
	buf     *bufio.Writer
	enc     *Encoder
	pending []func(error) // resolves the lines written since the last flush
}

func (s *fileSink) send(_ context.Context, m acemq.RawMessage) answer {
	c, resolve := transport.NewConfirmation()
	if err := s.enc.Encode(Exported{Queue: s.queue, Message: m}); err != nil {
		resolve(fmt.Errorf("%w: %w", errNotSent, err))
		return c
	}
	s.pending = append(s.pending, resolve)
	return c
}

func (s *fileSink) flush() {
	err := s.buf.Flush()
	if f, ok := s.w.(interface{ Sync() error }); ok && err == nil {
		err = f.Sync()
	}
	for _, resolve := range s.pending {
		resolve(err)
	}
	s.pending = s.pending[:0]
}

// Import publishes the messages of an export read from r to the queue to,
// each exactly as it was exported, mandatory and confirmed. o.Match,
// o.Limit, o.Rate, o.DryRun and o.Progress apply as for a move
// (Progress.Total stays 0: a stream's length is not known). It stops at the
// first message the broker does not take, or when ctx ends, after the
// messages in hand: Progress.Moved counts those published, which are the
// file's first ones but for those Match left out.
func Import(ctx context.Context, c *acemq.Conn, r io.Reader, to string, o Options) (Progress, error) {
	p, err := importFrom(ctx, c, NewDecoder(r), to, o)
	if err != nil {
		return p, fmt.Errorf("import into %s: %w", to, err)
	}
	return p, nil
}

func importFrom(ctx context.Context, c *acemq.Conn, dec *Decoder, to string, o Options) (Progress, error) {
	if err := mustExist(ctx, c, to); err != nil {
		return Progress{}, err
	}
	src := func(context.Context) (item, bool, error) {
		x, err := dec.Decode()
		if errors.Is(err, io.EOF) {
			return item{}, false, nil
		}
		return item{msg: x.Message, queue: x.Queue, ack: func() error { return nil }}, err == nil, err
	}
	return newMover(o, src, &brokerSink{c: c, queue: to, rewrite: func(*acemq.RawMessage) {}}, -1).run(ctx)
}
