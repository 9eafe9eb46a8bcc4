package acemq_test

import (
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

func ExampleRetryPolicy_Decide() {
	p := acemq.Exponential(6, 10*time.Second, 5*time.Minute).GiveUpAfter(2 * time.Minute)
	for _, attempt := range []int{1, 3, 6} {
		d := p.Decide(attempt, time.Minute)
		if d.GivesUp() {
			fmt.Println(attempt, d.Outcome, d.Reason)
		} else {
			fmt.Println(attempt, d.Outcome, d.Delay)
		}
	}
	fmt.Println(p.Decide(2, 3*time.Minute).Reason)
	// Output:
	// 1 retried_in_consumer 10s
	// 3 retried_on_rung 40s
	// 6 dead_lettered exhausted 6 attempts
	// exceeded the maximum message age of 2m
}

func ExampleRetryPolicy_Ladder() {
	p := acemq.Exponential(6, 10*time.Second, 5*time.Minute)
	ladder, err := p.Ladder("orders.new", contract.ContractRungs)
	if err != nil {
		panic(err)
	}
	for _, r := range ladder.Rungs() {
		fmt.Println(r.Queue, r.Delay)
	}
	rung, _ := ladder.RungFor(45 * time.Second)
	fmt.Println("a 45s wait:", rung.Queue)
	fmt.Println(len(ladder.Declarations()), "declarations")
	// Output:
	// orders.new.retry.40s 40s
	// orders.new.retry.80s 1m20s
	// orders.new.retry.160s 2m40s
	// a 45s wait: orders.new.retry.80s
	// 10 declarations
}
