package memory

import (
	"slices"
	"strings"

	"github.com/acemq-go/acemq/transport"
)

// exchange is a declared exchange; the default exchange "" is not one of
// them (it routes to the queue named by the routing key).
type exchange struct {
	name     string
	typ      transport.ExchangeType
	durable  bool
	internal bool
	bindings []binding // in the order made
}

type binding struct {
	q   *queue
	key string
}

// bind adds a binding; binding twice is one binding.
func (x *exchange) bind(q *queue, key string) {
	for _, bd := range x.bindings {
		if bd.q == q && bd.key == key {
			return
		}
	}
	x.bindings = append(x.bindings, binding{q, key})
}

func (x *exchange) unbindQueue(q *queue) {
	x.bindings = slices.DeleteFunc(x.bindings, func(bd binding) bool { return bd.q == q })
}

// matches reports whether a binding under key takes a message published
// under routingKey.
func (x *exchange) matches(key, routingKey string) bool {
	switch x.typ {
	case transport.Direct:
		return key == routingKey
	case transport.Fanout:
		return true
	case transport.Topic:
		return topicMatch(splitWords(key), splitWords(routingKey))
	case transport.Headers:
		// A binding carries no arguments through transport.Binding: x-match
		// all of no headers, which every message matches.
		return true
	}
	return false
}

// route returns the queues a message published under keys reaches, each
// once, in the order of the bindings. x nil is the default exchange.
func (b *Broker) route(x *exchange, keys []string) []*queue {
	var out []*queue
	add := func(q *queue) {
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	if x == nil {
		for _, k := range keys {
			if q, ok := b.queues[k]; ok {
				add(q)
			}
		}
		return out
	}
	for _, bd := range x.bindings {
		for _, k := range keys {
			if x.matches(bd.key, k) {
				add(bd.q)
				break
			}
		}
	}
	return out
}

// splitWords splits a topic key on '.': "" is no words at all, "a." is "a"
// and an empty word (as RabbitMQ has it).
func splitWords(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// topicMatch matches words against a binding pattern: '*' is exactly one
// word, '#' zero or more.
func topicMatch(pattern, words []string) bool {
	for len(pattern) > 0 {
		switch p := pattern[0]; p {
		case "#":
			rest := pattern[1:]
			for len(rest) > 0 && rest[0] == "#" {
				rest = rest[1:] // "#.#" is "#"
			}
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(words); i++ {
				if topicMatch(rest, words[i:]) {
					return true
				}
			}
			return false
		case "*":
			if len(words) == 0 {
				return false
			}
		default:
			if len(words) == 0 || words[0] != p {
				return false
			}
		}
		pattern, words = pattern[1:], words[1:]
	}
	return len(words) == 0
}
