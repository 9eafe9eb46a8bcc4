package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/examples/internal/example"
)

// failEvery: message n fails its first delivery when n%failEvery is
// failEvery-1, so that one in failEvery waits on the ladder's rung.
const failEvery = 20

// errFailOnce is the handler's failure of such a message.
var errFailOnce = errors.New("standing-load: one message in 20 fails its first delivery, to use the ladder")

// policy: a failed message waits 1s on a rung (the broker's wait, not the
// consumer's), and has two more attempts.
var policy = acemq.Fixed(3, time.Second).WaitInBrokerFrom(time.Second)

// body is a message of the load: its number.
type body struct {
	N int `json:"n"`
}

// run is the load: it publishes until ctx ends, then drains.
func run(ctx context.Context, cfg config) error {
	start := time.Now()
	pubConn, consConn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer pubConn.Close()
	defer consConn.Close()

	queue := cfg.name + "." + example.Suffix()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, DeadLetter: true, Retry: &policy}}}
	if err := topology.Apply(ctx, consConn); err != nil {
		return err
	}
	defer example.DeleteQueues(consConn, example.Queues(topology)...)

	t := newTally(start)
	consumer, err := acemq.Consume(ctx, consConn, queue, handle(t), acemq.WithPolicy(policy))
	if err != nil {
		return err
	}
	publisher, err := acemq.NewPublisher[body](pubConn, "", acemq.WithConfirmTimeout(cfg.timeout))
	if err != nil {
		return err
	}
	if cfg.debug != "" {
		if err := serveDebug(cfg.debug, t, pubConn, consConn); err != nil {
			return err
		}
	}

	lines := startLines(cfg.interval, t, pubConn)
	publish(ctx, cfg, publisher, queue, t, pubConn)
	unconsumed := drain(t, cfg.drain)
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := consumer.Close(closeCtx); err != nil {
		fmt.Fprintln(os.Stderr, "standing-load: closing the consumer:", err)
	}
	lines.stop()
	if unconsumed > 0 {
		return fmt.Errorf("%d confirmed messages were not consumed within %v of the end (-drain)", unconsumed, cfg.drain)
	}
	return nil
}

// connect opens the publisher's and the consumer's connections, each
// named. memory:// is one in-process broker for both.
func connect(ctx context.Context, cfg config) (pub, cons *acemq.Conn, err error) {
	if strings.HasPrefix(cfg.broker, "memory://") {
		url := cfg.broker
		if url == "memory://" {
			url += cfg.name + "-" + example.Suffix()
		}
		if pub, err = example.Connect(ctx, url); err == nil {
			cons, err = example.Connect(ctx, url)
		}
	} else {
		if pub, err = acemq.Connect(ctx, cfg.broker, acemq.WithConnectionName(cfg.name+"-publisher")); err == nil {
			cons, err = acemq.Connect(ctx, cfg.broker, acemq.WithConnectionName(cfg.name+"-consumer"))
		}
	}
	if err != nil && pub != nil {
		pub.Close()
	}
	return pub, cons, err
}

// handle accepts each message and counts it consumed, but fails the first
// delivery of one in failEvery.
func handle(t *tally) acemq.Handler[body] {
	return func(_ context.Context, m acemq.Message[body]) acemq.Decision {
		if m.Body.N%failEvery == failEvery-1 && m.Envelope.Attempt == 1 {
			t.retry()
			return acemq.Retry(errFailOnce)
		}
		t.consume(m.Body.N)
		return acemq.Accept()
	}
}

// publish sends message 0, 1, 2... at cfg.rate a second until ctx ends,
// each confirmed before the next; a tick missed while a publish waits
// (for a reconnect, say) is skipped, not made up for.
func publish(ctx context.Context, cfg config, p *acemq.Publisher[body], queue string, t *tally, conn *acemq.Conn) {
	tick := time.NewTicker(time.Second / time.Duration(cfg.rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t.publishing()
		// Not ctx: a publish under way when the load stops is seen to its end.
		pctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
		err := p.Publish(pctx, queue, body{N: n})
		cancel()
		switch {
		case err == nil:
			t.confirm(n)
		case errors.Is(err, acemq.ErrBlocked):
			reason := conn.State().BlockedReason
			if reason == "" {
				reason = err.Error()
			}
			t.refuse(reason)
		case errors.Is(err, acemq.ErrRefused):
			t.refuse(err.Error())
		default:
			t.fail()
		}
	}
}

// drain waits, up to limit, until every confirmed message is consumed, and
// returns how many are not.
func drain(t *tally, limit time.Duration) int64 {
	deadline := time.Now().Add(limit)
	for {
		n := t.unconsumed()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lines prints a line every interval, and a last one when stopped.
type lines struct {
	done    chan struct{}
	stopped sync.WaitGroup
	print   func()
}

func startLines(interval time.Duration, t *tally, conn *acemq.Conn) *lines {
	enc := json.NewEncoder(os.Stdout)
	l := &lines{done: make(chan struct{})}
	l.print = func() {
		st := conn.State()
		if st.Blocked && st.BlockedReason != "" {
			t.blocked(st.BlockedReason)
		}
		if err := enc.Encode(t.next(time.Now(), st.Blocked)); err != nil {
			fmt.Fprintln(os.Stderr, "standing-load: writing a line:", err)
		}
	}
	l.stopped.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-l.done:
				return
			case <-tick.C:
				l.print()
			}
		}
	})
	return l
}

// stop ends the ticks and prints the last line.
func (l *lines) stop() {
	close(l.done)
	l.stopped.Wait()
	l.print()
}
