package request

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/lenient"
)

// Errors of a request, matched with errors.Is; a request's error is an
// *Error naming it.
var (
	// ErrClientClosed: the client was closed before the reply came.
	ErrClientClosed = errors.New("the request client is closed; " + contract.RequestMayStillBeHandled)
)

// errNoReply: no reply came before the deadline (ctx's, else the client's
// timeout). It matches acemq.ErrTimeout, the one timeout of the library,
// and the request's error matches context.DeadlineExceeded too.
var errNoReply = fmt.Errorf("%w: no reply before the deadline; %s", acemq.ErrTimeout, contract.RequestMayStillBeHandled)

// DefaultTimeout bounds a request whose context has no deadline, as the
// family's libraries do.
const DefaultTimeout = contract.DefaultRequestTimeout

// Error says which request failed and why: errors.Is matches acemq.ErrTimeout,
// ErrClientClosed, the publish's errors (acemq.ErrUnroutable when no queue
// takes the request, ...) or the codec's; errors.As finds a
// *ResponderError when the responder failed.
type Error struct {
	Exchange      string
	RoutingKey    string
	CorrelationID string
	Err           error
}

func (e *Error) Error() string {
	exchange := e.Exchange
	if exchange == "" {
		exchange = "(default)"
	}
	return fmt.Sprintf("request: request %s to exchange %s with routing key %q: %v", e.CorrelationID, exchange, e.RoutingKey, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ResponderError is a reply saying its responder failed (the acemq-error
// header): the request was received, and its handler returned an error.
type ResponderError struct {
	// Message is the responder's error text.
	Message string
}

func (e *ResponderError) Error() string {
	if e.Message == "" {
		return "the responder failed without saying why"
	}
	return "the responder failed: " + e.Message
}

// ClientStats counts what a Client received.
type ClientStats struct {
	// Replies matched a request waiting for them.
	Replies int64
	// Unmatched replies named no request waiting: answered after their
	// request timed out, answered twice, or never ours. They are acked and
	// logged, not kept.
	Unmatched int64
}

// Client sends requests and receives their replies on its own reply queue.
// It is safe for concurrent use; replies are matched by correlation id.
type Client struct {
	conn    *acemq.Conn
	queue   string
	sub     *acemq.TemporaryConsumer
	timeout time.Duration
	codec   acemq.Codec // nil: by type
	logger  *slog.Logger
	// replyHeaders is the headers of a request that sets none: the reply
	// address, made once.
	replyHeaders acemq.Table

	mu      sync.Mutex
	pending map[string]*waiter
	closed  chan struct{}
	once    sync.Once
	done    chan struct{} // the receiving goroutine has ended

	replies, unmatched atomic.Int64
}

// NewClient declares the client's reply queue (acemq-reply-<uuid>,
// exclusive, auto-delete, classic) and consumes it. ctx bounds the start;
// the client runs until Close. Options: WithTimeout, WithCodec, WithLogger.
func NewClient(ctx context.Context, conn *acemq.Conn, opts ...ClientOption) (*Client, error) {
	o, err := configure(opts, ClientOption.clientSetting, "NewClient")
	if err != nil {
		return nil, err
	}
	c := &Client{
		conn: conn, queue: contract.ReplyQueuePrefix + uuid.NewString(),
		timeout: o.timeout, codec: o.codec, logger: o.logger,
		pending: map[string]*waiter{}, closed: make(chan struct{}), done: make(chan struct{}),
	}
	c.replyHeaders = acemq.Table{contract.HeaderReplyTo: c.queue}
	c.logger = c.logger.With("reply_queue", c.queue)
	// The queue goes with its connection: Setup declares it again on each
	// new one. A request in flight across a loss times out.
	c.sub, err = conn.ConsumeTemporary(ctx, c.queue)
	if err != nil {
		return nil, fmt.Errorf("request: new client: consuming its reply queue %s: %w", c.queue, err)
	}
	go c.receive()
	useOn(conn, c.codec)
	return c, nil
}

// ReplyQueue is the name of the client's reply queue.
func (c *Client) ReplyQueue() string { return c.queue }

// Stats counts the replies received so far.
func (c *Client) Stats() ClientStats {
	return ClientStats{Replies: c.replies.Load(), Unmatched: c.unmatched.Load()}
}

// Close stops consuming the reply queue; requests still waiting fail with
// ErrClientClosed. Closing twice does nothing.
func (c *Client) Close(ctx context.Context) error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		if cerr := c.sub.Close(ctx); cerr != nil {
			err = fmt.Errorf("request: closing the client of %s: %w", c.queue, cerr)
		}
	})
	return err
}

// receive matches each reply to the request waiting for it.
func (c *Client) receive() {
	defer close(c.done)
	for d := range c.sub.Deliveries() {
		if err := d.Ack(); err != nil {
			c.logger.Warn("acemq: acking a reply failed", "error", err)
		}
		id := replyCorrelation(d.Message)
		c.mu.Lock()
		w := c.pending[id]
		first := w != nil && !w.answered()
		if first {
			// Counted before Do can return with it.
			c.replies.Add(1)
			w.reply = d
			close(w.done)
		}
		c.mu.Unlock()
		switch {
		case w == nil:
			c.unmatched.Add(1)
			c.logger.Warn("acemq: a reply matches no request waiting; dropped", "correlation_id", id,
				"message_id", d.MessageID)
		case !first: // answered twice: the first reply is the one
			c.unmatched.Add(1)
			c.logger.Warn("acemq: a second reply to one request; dropped", "correlation_id", id)
		}
	}
}

// waiter is a request waiting for its reply, under its correlation id and
// (when they differ) its message id.
type waiter struct {
	done  chan struct{}     // closed when reply is set, under Client.mu
	reply acemq.RawDelivery // the first reply: only it is kept
}

// answered says whether w has its reply; under Client.mu.
func (w *waiter) answered() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// replyCorrelation is what a reply names its request by: the AMQP
// correlation-id, else the x-acemq-correlation header (Ruby writes only
// that).
func replyCorrelation(m acemq.RawMessage) string {
	if id := lenient.Valid(m.CorrelationID); id != "" {
		return id
	}
	return lenient.String(m.Headers[contract.HeaderCorrelation])
}

// Do sends req to exchange under routingKey and waits for the reply,
// decoded as Resp. The deadline is ctx's, else the client's timeout
// (DefaultTimeout). The request goes mandatory and confirmed, told to the
// Conn's Observer (acemq.Conn.Publish): with no queue to take it, Do fails
// at once with acemq.ErrUnroutable. The whole round trip is told to the
// Observer too when it is an acemq.RequestObserver (acemq.Conn.ObserveRequest),
// the publish within it: answered, timed_out or failed. opts set
// the request's envelope (its type, headers...); its correlation id is
// always a new UUID, which is its message id too unless opts set one.
func Do[Req, Resp any](ctx context.Context, c *Client, exchange, routingKey string, req Req, opts ...acemq.MessageOption) (Resp, error) {
	corr := uuid.NewString()
	if _, ok := ctx.Deadline(); !ok && c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	env := acemq.Envelope{ID: corr}
	if len(opts) > 0 {
		env = withOptions(env, opts)
	}
	env.Headers = c.withReplyTo(env.Headers)
	env.ReplyTo, env.CorrelationID = c.queue, corr
	if env.Correlation == "" {
		env.Correlation = corr
	}
	env = env.Complete(routingKey, time.Now())

	// Told to the Conn's Observer, the request's publish within it.
	ctx, end := c.conn.ObserveRequest(ctx, acemq.RequestInfo{Exchange: exchange, RoutingKey: routingKey, CorrelationID: corr, Type: env.Type})
	start := time.Now()
	resp, err := roundTrip[Req, Resp](ctx, c, exchange, routingKey, env, req)
	if err != nil {
		err = &Error{Exchange: exchange, RoutingKey: routingKey, CorrelationID: corr, Err: err}
	}
	end(acemq.RequestResult{Outcome: requestOutcome(err), Err: err, Duration: time.Since(start)})
	return resp, err
}

// withOptions is env as opts set it: apart from Do, so that a request
// without options keeps its envelope off the heap.
func withOptions(env acemq.Envelope, opts []acemq.MessageOption) acemq.Envelope {
	for _, opt := range opts {
		opt(&env)
	}
	return env
}

// withReplyTo is h and the acemq-reply-to header: a copy, since h may be
// the caller's (WithHeaders' own map, or one an option set), else the
// client's one map of that header alone (read only: Envelope.Write copies
// the headers it writes).
func (c *Client) withReplyTo(h acemq.Table) acemq.Table {
	if len(h) == 0 {
		return c.replyHeaders
	}
	withIt := make(acemq.Table, len(h)+1)
	maps.Copy(withIt, h)
	withIt[contract.HeaderReplyTo] = c.queue
	return withIt
}

// requestOutcome is the family's word for how a request ended.
func requestOutcome(err error) contract.TelemetryOutcome {
	switch {
	case err == nil:
		return contract.TelemetryAnswered
	case errors.Is(err, errNoReply): // not a publish's acemq.ErrTimeout
		return contract.TelemetryTimedOut
	}
	return contract.TelemetryFailed
}

// roundTrip sends the request env describes and waits for its reply.
func roundTrip[Req, Resp any](ctx context.Context, c *Client, exchange, routingKey string, env acemq.Envelope, req Req) (Resp, error) {
	var zero Resp
	select {
	case <-c.closed:
		return zero, ErrClientClosed
	default:
	}
	codec := c.codecFor(acemq.DefaultCodec(*new(Req)))
	env.ContentType = codec.ContentType()
	body, err := codec.Marshal(req)
	if err != nil {
		return zero, err
	}
	msg := acemq.RawMessage{Body: body}
	if err := env.Write(&msg); err != nil {
		return zero, err
	}

	// Waiting under the message id too answers .NET's responders, which
	// reply with the request's message id.
	w := &waiter{done: make(chan struct{})}
	keys := []string{env.CorrelationID}
	if env.ID != env.CorrelationID {
		keys = append(keys, env.ID)
	}
	c.mu.Lock()
	for _, k := range keys {
		c.pending[k] = w
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		for _, k := range keys {
			delete(c.pending, k)
		}
		c.mu.Unlock()
	}()

	sent, err := c.conn.Publish(ctx, exchange, routingKey, msg)
	if err == nil {
		err = sent.Wait(ctx)
	}
	if err != nil {
		return zero, waitErr(ctx, err)
	}

	select {
	case <-w.done:
		d := w.reply
		// The header says it whatever the body (empty, null, a detail),
		// even with no text.
		if text, failed := d.Headers[contract.HeaderReplyError]; failed {
			return zero, &ResponderError{Message: lenient.String(text)}
		}
		var resp Resp
		if err := c.codecFor(acemq.DefaultCodec(*new(Resp))).Unmarshal(d.ContentType, d.Body, &resp); err != nil {
			return zero, fmt.Errorf("the reply could not be decoded: %w", err)
		}
		return resp, nil
	case <-ctx.Done():
		return zero, waitErr(ctx, context.Cause(ctx))
	case <-c.closed:
		return zero, ErrClientClosed
	}
}

// waitErr marks a deadline as acemq.ErrTimeout, keeping the cause matchable.
func waitErr(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%w)", errNoReply, err)
	}
	return err
}

func (c *Client) codecFor(byType acemq.Codec) acemq.Codec {
	if c.codec != nil {
		return c.codec
	}
	return byType
}
