// Package example holds what the example programs share and none of them
// is about: their main (the -broker flag, a run bounded by a minute, the
// error under the program's name), opening the broker, a name of a run's own
// (so that a rerun against a real broker starts afresh), and deleting the
// queues a run declared.
package example

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport/memory"
)

// Main is an example program's main: it parses -broker, connects, and runs
// run within a minute; when that fails, it prints the error under the
// program's name and exits 1.
func Main(run func(ctx context.Context, conn *acemq.Conn) error) {
	brokerURL := flag.String("broker", "memory://", "the broker: memory:// (in-process) or an amqp:// URL")
	flag.Parse()
	if err := connectAndRun(*brokerURL, run); err != nil {
		fmt.Fprintln(os.Stderr, program()+":", err)
		os.Exit(1)
	}
}

// program is the program's name, as go run and go build name it after
// the example's directory.
func program() string { return filepath.Base(os.Args[0]) }

func connectAndRun(url string, run func(ctx context.Context, conn *acemq.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close()
	return run(ctx, conn)
}

// Connect opens the broker at url, with opts: memory:// is a new
// in-process broker (memory://NAME a named one), anything else RabbitMQ's.
func Connect(ctx context.Context, url string, opts ...acemq.ConnOption) (*acemq.Conn, error) {
	switch {
	case url == "memory://":
		return acemq.New(memory.NewBroker().Connect(), opts...)
	case strings.HasPrefix(url, "memory://"):
		t, err := memory.Dial(ctx, url)
		if err != nil {
			return nil, err
		}
		return acemq.New(t, opts...)
	}
	connect := make([]acemq.ConnectOption, len(opts))
	for i, o := range opts {
		connect[i] = o
	}
	return acemq.Connect(ctx, url, connect...)
}

// Suffix is 8 random hex digits, for names of one run's own.
func Suffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// WithDeadLetters is queue, its Q.dlq and its Q.parked.
func WithDeadLetters(queue string) []string {
	return []string{queue, contract.DeadLetterQueue(queue), contract.ParkedQueue(queue)}
}

// Queues are the queues topology declares.
func Queues(topology acemq.Topology) []string {
	ds, _ := topology.Plan()
	var names []string
	for _, d := range ds {
		if q, ok := d.(acemq.QueueDeclaration); ok {
			names = append(names, q.Name)
		}
	}
	return names
}

// DeleteQueues deletes the queues, telling stderr of a failure (one that
// is gone already is none), under the program's name.
func DeleteQueues(conn *acemq.Conn, queues ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, q := range queues {
		if _, err := conn.DeleteQueue(ctx, q); err != nil && !errors.Is(err, acemq.ErrNotFound) {
			fmt.Fprintf(os.Stderr, "%s: deleting the example's queue %s: %v\n", program(), q, err)
		}
	}
}
