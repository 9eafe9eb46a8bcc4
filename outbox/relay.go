package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
)

// The relay's defaults.
const (
	// DefaultBatchSize is how many records a relay claims at once.
	DefaultBatchSize = 100
	// DefaultPollInterval is how long an idle relay waits before it looks
	// for records again.
	DefaultPollInterval = time.Second
	// DefaultRetryDelay is how long a record whose publish failed waits
	// before it is offered again.
	DefaultRetryDelay = 5 * time.Second
	// DefaultLease is how long a claim holds: contract.OutboxLease.
	DefaultLease = contract.OutboxLease
	// DefaultMaxAttempts is how many failed publishes a record is offered
	// for: contract.OutboxMaxAttempts.
	DefaultMaxAttempts = contract.OutboxMaxAttempts
	// maxOwner is the longest relay name, in bytes, the locked_by column
	// holds.
	maxOwner = 255
)

// Option configures NewRelay.
type Option func(*options) error

type options struct {
	batch, maxAttempts      int
	lease, poll, retryDelay time.Duration
	ordered                 bool
	name                    string
	logger                  *slog.Logger
}

func positive[T int | time.Duration](what string, v T, set func(*options)) Option {
	return func(o *options) error {
		if v <= 0 {
			return fmt.Errorf("outbox: %s %v: want more than 0", what, v)
		}
		set(o)
		return nil
	}
}

// WithBatchSize sets how many records a relay claims at once (default
// DefaultBatchSize).
func WithBatchSize(n int) Option {
	return positive("WithBatchSize", n, func(o *options) { o.batch = n })
}

// WithLease sets how long a claim holds (default contract.OutboxLease): it
// must be longer than a batch takes to publish, since a relay publishes
// for half of it at most, and the relays of a table should agree on it.
func WithLease(d time.Duration) Option {
	return positive("WithLease", d, func(o *options) { o.lease = d })
}

// WithMaxAttempts sets how many counted failures a record is offered for
// (default contract.OutboxMaxAttempts).
func WithMaxAttempts(n int) Option {
	return positive("WithMaxAttempts", n, func(o *options) { o.maxAttempts = n })
}

// WithPollInterval sets how long an idle relay waits before it looks again
// (default DefaultPollInterval).
func WithPollInterval(d time.Duration) Option {
	return positive("WithPollInterval", d, func(o *options) { o.poll = d })
}

// WithRetryDelay sets how long a failed record waits before it is offered
// again (default DefaultRetryDelay).
func WithRetryDelay(d time.Duration) Option {
	return positive("WithRetryDelay", d, func(o *options) { o.retryDelay = d })
}

// Ordered makes the relay keep the table's order strictly: record n+1 is
// published only once record n is confirmed, one at a time, a failed
// record holds back every record after it until it is published (or given
// up: then it holds them until a person deals with it), and of several
// relays only one publishes at a time. Every relay of the table should be
// ordered, or none.
func Ordered() Option { return func(o *options) error { o.ordered = true; return nil } }

// WithName names the relay in locked_by (default host, pid and a random
// suffix): at most 255 bytes of UTF-8, and unique among the table's relays.
func WithName(name string) Option {
	return func(o *options) error {
		if name == "" || len(name) > maxOwner || !utf8.ValidString(name) {
			return fmt.Errorf("outbox: WithName %q: want 1 to %d bytes of UTF-8", name, maxOwner)
		}
		o.name = name
		return nil
	}
}

// WithLogger logs the relay's failures (default: none).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("outbox: WithLogger(nil)")
		}
		o.logger = l
		return nil
	}
}

// Relay publishes the records of an outbox table with confirms, and marks
// each published only once the broker has confirmed it. Several relays may
// work one table, in one process or many: each claims its batch under a
// lease, so that a record is offered to one relay at a time, and to another
// only once that lease has ended (its holder presumed dead).
type Relay struct {
	store Store
	conn  *acemq.Conn
	o     options

	published, failed, uncounted, batches atomic.Int64
}

// Stats counts what a relay has done since it was made.
type Stats struct {
	// Published counts the records confirmed and marked.
	Published int64
	// Failed counts the failed publishes counted towards MaxAttempts.
	Failed int64
	// Unanswered counts the publishes the broker never answered
	// (connection lost, timed out): recorded, not counted.
	Unanswered int64
	// Batches counts the claims that found records.
	Batches int64
}

// Batch is what one claim came to.
type Batch struct {
	// Claimed records, of which Published were confirmed and marked,
	// Failed were not (their failure recorded) and Released were given
	// back unsent (the relay was stopping, or an ordered batch stopped at a
	// failure).
	Claimed, Published, Failed, Released int
}

// NewRelay makes a relay of store's records, publishing through conn.
func NewRelay(store Store, conn *acemq.Conn, opts ...Option) (*Relay, error) {
	if store == nil || conn == nil {
		return nil, errors.New("outbox: NewRelay needs a store and a connection")
	}
	o := options{batch: DefaultBatchSize, maxAttempts: DefaultMaxAttempts, lease: DefaultLease,
		poll: DefaultPollInterval, retryDelay: DefaultRetryDelay, logger: slog.New(slog.DiscardHandler)}
	if err := option.ApplyFuncs(&o, opts); errors.Is(err, option.ErrNil) {
		return nil, errors.New("outbox: NewRelay was given a nil Option")
	} else if err != nil {
		return nil, err
	}
	if o.name == "" {
		o.name = defaultName()
	}
	return &Relay{store: store, conn: conn, o: o}, nil
}

// defaultName is host, pid and a random suffix: unique per relay.
func defaultName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
	if len(name) > maxOwner {
		name = name[len(name)-maxOwner:]
	}
	return name
}

// Name is the relay's name, as locked_by holds it.
func (r *Relay) Name() string { return r.o.name }

// Stats is what the relay has done so far.
func (r *Relay) Stats() Stats {
	return Stats{Published: r.published.Load(), Failed: r.failed.Load(), Unanswered: r.uncounted.Load(), Batches: r.batches.Load()}
}

// Lag is how far behind the table's relays are: the records pending and
// given up (after the relay's MaxAttempts), and the age of the oldest
// unpublished one.
func (r *Relay) Lag(ctx context.Context) (Lag, error) { return r.store.Lag(ctx, r.o.maxAttempts) }

// Prune deletes the records published more than retention ago, and says
// how many. Unpublished records are never pruned.
func (r *Relay) Prune(ctx context.Context, retention time.Duration) (int64, error) {
	return r.store.Prune(ctx, retention)
}

// Run relays records until ctx ends, then returns nil once the batch in
// hand is settled: what was sent is waited for (within the lease) and
// marked, what was not is released to be offered again at once. While a
// full batch is published it claims the next one (unordered relays), so
// that the claim's round trips overlap the publishes; a batch claimed so
// is released too when Run stops or its batch fails. A failing store is
// logged and tried again after the poll interval.
func (r *Relay) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var ahead <-chan claimed
	for {
		var c claimed
		if ahead != nil {
			c, ahead = <-ahead, nil
		} else {
			c = r.claim(ctx)
		}
		b, err := Batch{}, c.err
		if err == nil && len(c.recs) > 0 {
			if len(c.recs) == r.o.batch && !r.o.ordered {
				ahead = r.claimAhead(ctx)
			}
			b, err = r.settle(ctx, c)
		}
		if ctx.Err() != nil || err != nil {
			r.releaseAhead(ctx, ahead)
			ahead = nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			r.o.logger.Warn("outbox relay: a batch failed; trying again", "relay", r.o.name, "err", err)
		}
		if err == nil && b.Claimed == r.o.batch {
			continue // more may be waiting
		}
		timer.Reset(r.o.poll)
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
	}
}

// claimed is what a claim came to, and when it was asked for: its lease
// ends no sooner than a lease after.
type claimed struct {
	recs []Record
	at   time.Time
	err  error
}

func (r *Relay) claim(ctx context.Context) claimed {
	at := time.Now()
	recs, err := r.store.Claim(ctx, Claim{Owner: r.o.name, Limit: r.o.batch, Lease: r.o.lease,
		MaxAttempts: r.o.maxAttempts, Ordered: r.o.ordered})
	if err == nil && len(recs) > 0 {
		r.batches.Add(1)
	}
	return claimed{recs: recs, at: at, err: err}
}

// claimAhead claims the next batch while the one in hand is published. The
// claim runs to its end (within half the lease) whatever ctx says, so that
// what it claims is published or released, never left leased.
func (r *Relay) claimAhead(ctx context.Context) <-chan claimed {
	done := make(chan claimed, 1)
	go func() {
		bounded, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.o.lease/2)
		defer cancel()
		done <- r.claim(bounded)
	}()
	return done
}

// releaseAhead waits for a batch claimed ahead and releases it unsent.
func (r *Relay) releaseAhead(ctx context.Context, ahead <-chan claimed) {
	if ahead == nil {
		return
	}
	c := <-ahead
	if c.err != nil || len(c.recs) == 0 {
		return
	}
	bounded, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.o.lease/2)
	defer cancel()
	if err := r.store.Release(bounded, r.o.name, ids(c.recs)); err != nil {
		r.o.logger.Warn("outbox relay: a batch claimed ahead was not released; offered again after its lease",
			"relay", r.o.name, "records", len(c.recs), "err", err)
	}
}

type sent struct {
	rec Record
	p   *acemq.Pending
}

// Once claims one batch and publishes it, and says what became of it. An
// error is the store's: a batch it could not claim, or records it could
// not mark (those are published, and offered again once their lease ends:
// the one way a relay publishes a record twice).
func (r *Relay) Once(ctx context.Context) (Batch, error) {
	c := r.claim(ctx)
	if c.err != nil || len(c.recs) == 0 {
		return Batch{}, c.err
	}
	return r.settle(ctx, c)
}

// settle publishes a claimed batch, waits for its confirms and marks it.
func (r *Relay) settle(ctx context.Context, c claimed) (Batch, error) {
	recs := c.recs
	b := Batch{Claimed: len(recs)}
	// What was sent is waited for even when ctx ends, within half the
	// lease: past it another relay may take the records over. Nothing is
	// sent past it either (a batch claimed ahead may have waited).
	settle, cancel := context.WithDeadline(context.WithoutCancel(ctx), c.at.Add(r.o.lease/2))
	defer cancel()
	var published, release []int64
	var failures []Failure
	fail := func(rec Record, err error) {
		counted := !unanswered(err)
		failures = append(failures, Failure{ID: rec.ID, Owner: r.o.name, Error: err.Error(), Counted: counted, RetryDelay: r.o.retryDelay})
		if counted {
			r.failed.Add(1)
		} else {
			r.uncounted.Add(1)
		}
		r.o.logger.Warn("outbox relay: a record was not published", "relay", r.o.name, "record", rec.ID,
			"attempt", rec.Attempts+1, "counted", counted, "err", err)
	}
	if r.o.ordered {
		for i, rec := range recs {
			if ctx.Err() != nil || settle.Err() != nil {
				release = ids(recs[i:])
				break
			}
			if err := r.publish(settle, rec); err != nil {
				fail(rec, err)
				release = ids(recs[i+1:])
				break
			}
			published = append(published, rec.ID)
		}
	} else {
		// One run of publishes, the confirms waited for together: each but
		// the last record to send says another follows, so that the
		// transport may write the batch at once.
		last := lastSendable(recs)
		var inflight []sent
		for i, rec := range recs {
			if ctx.Err() != nil || settle.Err() != nil {
				release = ids(recs[i:])
				break
			}
			if rec.Err != nil {
				fail(rec, rec.Err)
				continue
			}
			p, err := r.conn.PublishMore(settle, rec.Exchange, rec.RoutingKey, rec.Message, i < last)
			if err != nil {
				fail(rec, err)
				continue
			}
			inflight = append(inflight, sent{rec, p})
		}
		for _, s := range inflight {
			if err := s.p.Wait(settle); err != nil {
				fail(s.rec, err)
				continue
			}
			published = append(published, s.rec.ID)
		}
	}
	// Marking is done whatever ctx says: a confirmed record left unmarked
	// is published again after its lease.
	mark, cancelMark := context.WithTimeout(context.WithoutCancel(ctx), r.o.lease/2)
	defer cancelMark()
	var errs []error
	if err := r.store.Published(mark, published); err != nil {
		errs = append(errs, err)
	} else {
		b.Published = len(published)
		r.published.Add(int64(len(published)))
	}
	for _, f := range failures {
		errs = append(errs, r.store.Failed(mark, f))
	}
	b.Failed = len(failures)
	if len(release) > 0 {
		errs = append(errs, r.store.Release(mark, r.o.name, release))
		b.Released = len(release)
	}
	return b, errors.Join(errs...)
}

// publish sends one record and waits for its confirm.
func (r *Relay) publish(ctx context.Context, rec Record) error {
	if rec.Err != nil {
		return rec.Err
	}
	p, err := r.conn.Publish(ctx, rec.Exchange, rec.RoutingKey, rec.Message)
	if err != nil {
		return err
	}
	return p.Wait(ctx)
}

// unanswered says whether a publish failed without the broker's answer:
// the connection was lost, the confirm did not come in time, the broker
// blocked publishing. Such a failure is the broker's, not the record's,
// and is not counted towards MaxAttempts; one the broker answered (no
// such exchange, unroutable, refused) or a row that cannot be read is.
func unanswered(err error) bool {
	for _, e := range []error{acemq.ErrNotConfirmed, acemq.ErrTimeout, acemq.ErrClosed, acemq.ErrBlocked,
		context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// lastSendable is the index of the last record that can be sent (one
// whose row could be read), -1 when none can.
func lastSendable(recs []Record) int {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Err == nil {
			return i
		}
	}
	return -1
}

func ids(recs []Record) []int64 {
	out := make([]int64, len(recs))
	for i, rec := range recs {
		out[i] = rec.ID
	}
	return out
}
