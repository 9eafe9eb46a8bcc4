package claimcheck_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/transport/memory"
)

// Report is the example's message: a summary and a large attachment.
type Report struct {
	Title string `json:"title"`
	PDF   []byte `json:"pdf"`
}

// A publisher and a consumer sharing a store directory: the broker carries
// a 39-byte body for a report of over a megabyte.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "claims")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := claimcheck.NewDir(dir) // the directory must exist
	if err != nil {
		log.Fatal(err)
	}
	codec, err := claimcheck.New(acemq.JSON, store) // offloads from 64 KiB
	if err != nil {
		log.Fatal(err)
	}

	broker := memory.NewBroker()
	defer broker.Close()
	conn, err := acemq.New(broker.Connect())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: "reports", DeadLetter: true}}}
	if err := topology.Apply(ctx, conn); err != nil {
		log.Fatal(err)
	}

	reports, err := acemq.NewPublisher[Report](conn, "", acemq.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	pdf := []byte(strings.Repeat("%PDF-1.7 ", 1<<17))
	if err := reports.Publish(ctx, "reports", Report{Title: "Q4", PDF: pdf}); err != nil {
		log.Fatal(err)
	}

	done := make(chan struct{})
	consumer, err := acemq.Consume(ctx, conn, "reports",
		func(ctx context.Context, m acemq.Message[Report]) acemq.Decision {
			fmt.Printf("%s: %d bytes of PDF; the broker carried %d bytes as %s\n",
				m.Body.Title, len(m.Body.PDF), len(m.Raw), m.Envelope.ContentType)
			close(done)
			return acemq.Accept()
		}, acemq.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	<-done
	if _, err := consumer.Close(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// Q4: 1179648 bytes of PDF; the broker carried 39 bytes as application/json
}
