package acemq_test

import (
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
)

func ExampleParsePolicy() {
	p, err := acemq.ParsePolicy("exponential(6, 10s, 5m).giveUpAfter(1h)")
	if err != nil {
		panic(err)
	}
	fmt.Println(p)
	fmt.Println(p.Schedule())
	// Output:
	// exponential(6, 10s, 5m).giveUpAfter(1h)
	// [10s 20s 40s 1m20s 2m40s]
}

func ExampleTopology_Plan() {
	retry := acemq.Exponential(6, 10*time.Second, 5*time.Minute)
	top := acemq.Topology{
		Exchanges: []acemq.ExchangeSpec{{Name: "orders", Type: "topic"}},
		Queues: []acemq.QueueSpec{{
			Name:       "orders.new",
			DeadLetter: true,
			Retry:      &retry,
			Bindings:   []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}},
		}},
	}
	plan, err := top.Plan()
	if err != nil {
		panic(err)
	}
	for _, d := range plan {
		fmt.Println(d)
	}
	// Output:
	// exchange orders (topic, durable)
	// exchange acemq.dlx (direct, durable)
	// exchange acemq.retry (direct, durable)
	// queue orders.new (quorum, durable) {x-dead-letter-exchange: "acemq.dlx", x-dead-letter-routing-key: "orders.new.dlq"}
	// queue orders.new.dlq (classic, durable)
	// queue orders.new.parked (classic, durable)
	// queue orders.new.retry.quorum.40s (quorum, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders.new", x-dead-letter-strategy: "at-least-once", x-message-ttl: 40000, x-overflow: "reject-publish"}
	// queue orders.new.retry.quorum.80s (quorum, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders.new", x-dead-letter-strategy: "at-least-once", x-message-ttl: 80000, x-overflow: "reject-publish"}
	// queue orders.new.retry.quorum.160s (quorum, durable) {x-dead-letter-exchange: "acemq.retry", x-dead-letter-routing-key: "orders.new", x-dead-letter-strategy: "at-least-once", x-message-ttl: 160000, x-overflow: "reject-publish"}
	// binding orders -> orders.new under "order.*"
	// binding acemq.dlx -> orders.new.dlq under "orders.new.dlq"
	// binding acemq.dlx -> orders.new.parked under "orders.new.parked"
	// binding acemq.retry -> orders.new under "orders.new"
}
