// Command standing-load is the AceMQ family's standing load (the contract's
// section 22): what the family's endurance soak launches, one process per
// language, while it closes every client connection through the
// management API, and reads from outside (/proc/PID: descriptors, threads,
// resident memory). A publisher sends numbered messages, confirmed, at a
// steady rate; a consumer on the load's own queue, with a retry ladder,
// fails one message in 20 once, so that every such message waits on a
// rung before it is accepted. Each connection recovers by itself from a
// close (the Conn does).
//
//	go run ./examples/standing-load                           # memory://
//	ACEMQ_URL=amqp://guest:guest@localhost:5672/ go run ./examples/standing-load
//	go run ./examples/standing-load -broker amqp://guest:guest@localhost:5672/
//
// The broker is -broker, else $ACEMQ_URL, else memory://. It stops after
// a minute; ACEMQ_EXAMPLE_SECONDS=N after N seconds, ACEMQ_EXAMPLE_SECONDS=0
// only on SIGINT or SIGTERM. Then it drains: it stops publishing and waits
// (-drain, 60s) until every confirmed message has been consumed. It exits
// 0 when every one was, 1 when any was not (saying how many on stderr) or
// the load could not run.
//
// Every interval (-interval, 1s) it prints one JSON line on stdout, and a
// last one after the drain, with exactly the family's fields, in this
// order:
//
//	at           string   the line's time, RFC 3339 in UTC to the millisecond
//	elapsedMs    integer  milliseconds since the load started
//	blocked      boolean  the broker blocks the publisher's connection now (a resource alarm)
//	published    integer  publishes attempted
//	confirmed    integer  publishes the broker confirmed
//	consumed     integer  distinct messages the consumer accepted (a redelivery after a close counts once)
//	failed       integer  publishes that failed otherwise: the connection closed before the confirm, or none came in time
//	publishRate  number   publishes attempted a second, since the line before
//	consumeRate  number   messages consumed a second, since the line before
//	refused      integer  publishes the broker refused (a negative confirm) or blocked past their deadline (-timeout)
//	reason       string   the last refusal's error, or the broker's reason for blocking ("low on memory"); "" when none
//
// Every publish ends confirmed, refused or failed; the counters only grow.
// The connections are named NAME-publisher and NAME-consumer (-name) in
// the broker's management API, and the queue is NAME.SUFFIX (a suffix of
// the run's own), with its ladder, Q.dlq and Q.parked, deleted at the end.
//
// -debug ADDR (say 127.0.0.1:0) serves net/http/pprof and expvar there,
// its address said on stderr: the goroutines, the connections the two Conns
// have opened, the retries, duplicates and unconsumed messages, as
// /debug/vars' "standingLoad". It is off by default: the soak reads the
// process from outside, and the line keeps the family's fields.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.broker, "broker", os.Getenv("ACEMQ_URL"), "the broker: an amqp:// URL, or memory:// (in-process; the default when $ACEMQ_URL is unset)")
	flag.DurationVar(&cfg.interval, "interval", time.Second, "how often a line is printed")
	flag.IntVar(&cfg.rate, "rate", 50, "messages published a second")
	flag.StringVar(&cfg.name, "name", "standing-load", "the connections' names (NAME-publisher, NAME-consumer) and the queue's prefix")
	flag.StringVar(&cfg.debug, "debug", "", "an address to serve net/http/pprof and expvar on (off when empty)")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "how long a publish waits for its confirm, or while the broker blocks it")
	flag.DurationVar(&cfg.drain, "drain", time.Minute, "how long the drain waits for the confirmed messages to be consumed")
	flag.Parse()
	if cfg.broker == "" {
		cfg.broker = "memory://"
	}
	err := cfg.check()
	if err == nil {
		err = runFor(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "standing-load:", err)
		os.Exit(1)
	}
}

// runFor runs the load until the time ACEMQ_EXAMPLE_SECONDS gives is up or
// a signal comes.
func runFor(cfg config) error {
	seconds, err := exampleSeconds()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if seconds > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
		defer cancel()
	}
	go func() {
		<-ctx.Done()
		stop() // a second signal ends the drain at once
	}()
	return run(ctx, cfg)
}

// exampleSeconds is how long the load runs: ACEMQ_EXAMPLE_SECONDS, 60 when
// it is unset, 0 for until a signal.
func exampleSeconds() (int, error) {
	v, ok := os.LookupEnv("ACEMQ_EXAMPLE_SECONDS")
	if !ok || v == "" {
		return 60, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("ACEMQ_EXAMPLE_SECONDS=%q: want a number of seconds, 0 for until a signal", v)
	}
	return n, nil
}

// config is the load's flags.
type config struct {
	broker, name, debug      string
	interval, timeout, drain time.Duration
	rate                     int
}

func (c config) check() error {
	var errs []error
	if c.interval <= 0 {
		errs = append(errs, fmt.Errorf("-interval %v: want more than 0", c.interval))
	}
	if c.rate <= 0 || c.rate > 10000 {
		errs = append(errs, fmt.Errorf("-rate %d: want 1 to 10000 messages a second", c.rate))
	}
	if c.timeout <= 0 || c.drain <= 0 {
		errs = append(errs, fmt.Errorf("-timeout %v, -drain %v: want more than 0", c.timeout, c.drain))
	}
	if c.name == "" {
		errs = append(errs, errors.New("-name is empty"))
	}
	return errors.Join(errs...)
}
