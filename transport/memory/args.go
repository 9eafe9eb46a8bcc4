package memory

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// What RabbitMQ checks when a queue is declared, in the order it checks it,
// with its words. Every rule and message here was observed on 3.10.8, 4.0.5
// and 4.3.6 nodes; see docs/memory.md.

// maxTTL is the largest x-message-ttl, x-expires and per-message expiration
// RabbitMQ takes: ten years in milliseconds.
const maxTTL = 315_360_000_000

// comparedArgs are the arguments RabbitMQ 3.10 compares when an existing
// queue is declared again, per queue type, in the order it compares them
// (the first that differs is the one it names). Any other argument may
// differ. RabbitMQ 4.0 compares a classic queue's x-queue-leader-locator
// too, last.
var comparedArgs = map[transport.QueueType][]string{
	transport.Classic: {
		contract.ArgExpires, contract.ArgMessageTTL, contract.ArgDeadLetterExchange, contract.ArgDeadLetterRoutingKey,
		contract.ArgMaxLength, contract.ArgMaxLengthBytes, "x-max-priority", contract.ArgOverflow, "x-queue-mode",
		"x-queue-version", contract.ArgSingleActiveConsumer, contract.ArgQueueType, "x-queue-master-locator",
	},
	transport.Quorum: {
		contract.ArgDeadLetterExchange, contract.ArgDeadLetterRoutingKey, contract.ArgDeadLetterStrategy, contract.ArgExpires,
		contract.ArgMaxLength, contract.ArgMaxLengthBytes, "x-max-in-memory-length", "x-max-in-memory-bytes",
		contract.ArgOverflow, contract.ArgSingleActiveConsumer, contract.ArgQueueType, "x-quorum-initial-group-size",
		contract.ArgDeliveryLimit, contract.ArgMessageTTL, "x-queue-leader-locator",
	},
	// A stream's, in the order observed: x-max-length-bytes is named
	// before x-max-age when both differ.
	transport.Stream: {
		contract.ArgMaxLengthBytes, contract.ArgMaxAge, contract.ArgMaxSegmentSize, "x-initial-cluster-size",
		"x-queue-leader-locator", contract.ArgQueueType,
	},
}

// inapplicableArgs are the arguments RabbitMQ 3.10 knows but refuses for a
// queue type: "invalid arg 'x-delivery-limit' for queue 'q' in vhost '/' of
// queue type rabbit_classic_queue". RabbitMQ 4.0 takes
// x-queue-leader-locator for a classic queue.
var inapplicableArgs = map[transport.QueueType][]string{
	transport.Classic: {
		contract.ArgDeadLetterStrategy, contract.ArgDeliveryLimit, "x-initial-cluster-size", contract.ArgMaxAge,
		"x-max-in-memory-bytes", "x-max-in-memory-length", "x-queue-leader-locator",
		"x-quorum-initial-group-size", contract.ArgMaxSegmentSize,
	},
	transport.Quorum: {
		"x-initial-cluster-size", contract.ArgMaxAge, "x-max-priority", "x-queue-master-locator",
		"x-queue-mode", "x-queue-version", contract.ArgMaxSegmentSize,
	},
	transport.Stream: {
		contract.ArgDeadLetterExchange, contract.ArgDeadLetterRoutingKey, contract.ArgMessageTTL, contract.ArgExpires,
		contract.ArgMaxLength, contract.ArgOverflow, contract.ArgDeliveryLimit, contract.ArgSingleActiveConsumer,
		"x-max-priority", "x-queue-mode", "x-queue-version", contract.ArgDeadLetterStrategy, "x-quorum-initial-group-size",
		"x-max-in-memory-length", "x-max-in-memory-bytes", "x-queue-master-locator",
	},
}

// compared is comparedArgs as em compares them.
func compared(typ transport.QueueType, em *emulation) []string {
	if em.v4 && typ == transport.Classic {
		return append(slices.Clone(comparedArgs[typ]), "x-queue-leader-locator")
	}
	return comparedArgs[typ]
}

// inapplicable is inapplicableArgs as em refuses them.
func inapplicable(typ transport.QueueType, em *emulation) []string {
	if em.v4 && typ == transport.Classic {
		return slices.DeleteFunc(slices.Clone(inapplicableArgs[typ]), func(k string) bool { return k == "x-queue-leader-locator" })
	}
	return inapplicableArgs[typ]
}

var typeModule = map[transport.QueueType]string{
	transport.Classic: "rabbit_classic_queue",
	transport.Quorum:  "rabbit_quorum_queue",
	transport.Stream:  "rabbit_stream_queue",
}

// argCheck validates one argument's value; detail is what RabbitMQ prints
// after "invalid arg 'K' for queue 'Q' in vhost '/': ".
type argCheck func(v any, args transport.Table) (detail string, ok bool)

// argChecks in RabbitMQ's order.
var argChecks = []struct {
	key   string
	check argCheck
}{
	{contract.ArgExpires, intRange(1, maxTTL)},
	{contract.ArgMessageTTL, intRange(0, maxTTL)},
	{contract.ArgDeadLetterRoutingKey, checkDLRK},
	{contract.ArgMaxLength, intRange(0, -1)},
	{contract.ArgMaxLengthBytes, intRange(0, -1)},
	{"x-max-in-memory-length", intRange(0, -1)},
	{"x-max-in-memory-bytes", intRange(0, -1)},
	{"x-max-priority", checkMaxPriority},
	{contract.ArgOverflow, oneOf("invalid_overflow", contract.OverflowDropHead, contract.OverflowRejectPublish, contract.OverflowRejectPublishDLX)},
	{"x-queue-mode", checkQueueMode},
	{"x-queue-version", checkQueueVersion},
	{contract.ArgSingleActiveConsumer, checkBool},
	{contract.ArgDeadLetterStrategy, oneOf("invalid_dlx_strategy", contract.DeadLetterAtMostOnce, contract.DeadLetterAtLeastOnce)},
	{"x-quorum-initial-group-size", intRange(1, -1)},
	{"x-queue-leader-locator", oneOf("invalid_queue_locator_arg", "client-local", "balanced")},
	{contract.ArgMaxAge, checkMaxAge},
	{contract.ArgMaxSegmentSize, intRange(0, -1)},
}

func expectedInteger(v any) string { return fmt.Sprintf(`"expected integer, got %s"`, amqpType(v)) }

func unacceptable(v any) string { return fmt.Sprintf("{unacceptable_type,%s}", amqpType(v)) }

// intRange: an integer, at least lo (1: not zero, 0: not negative), at most
// hi (-1: no limit).
func intRange(lo, hi int64) argCheck {
	return func(v any, _ transport.Table) (string, bool) {
		n, ok := asInt(v)
		switch {
		case !ok:
			return expectedInteger(v), false
		case n < 0:
			return fmt.Sprintf("{value_negative,%d}", n), false
		case n == 0 && lo > 0:
			return "{value_zero,0}", false
		case hi >= 0 && n > hi:
			return fmt.Sprintf("{value_too_large,%d}", n), false
		}
		return "", true
	}
}

func checkMaxPriority(v any, _ transport.Table) (string, bool) {
	n, ok := asInt(v)
	switch {
	case !ok:
		return expectedInteger(v), false
	case n < 0:
		return fmt.Sprintf("{value_negative,%d}", n), false
	case n > 255:
		return fmt.Sprintf("{max_value_exceeded,%d}", n), false
	}
	return "", true
}

func checkDLRK(v any, args transport.Table) (string, bool) {
	if _, ok := v.(string); !ok {
		return unacceptable(v), false
	}
	if _, ok := args[contract.ArgDeadLetterExchange]; !ok {
		return "routing_key_but_no_dlx_defined", false
	}
	return "", true
}

func oneOf(invalid string, values ...string) argCheck {
	return func(v any, _ transport.Table) (string, bool) {
		s, ok := v.(string)
		if !ok {
			return unacceptable(v), false
		}
		if !slices.Contains(values, s) {
			return invalid, false
		}
		return "", true
	}
}

func checkQueueMode(v any, _ transport.Table) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return unacceptable(v), false
	}
	if s != "default" && s != "lazy" {
		return fmt.Sprintf(`"unsupported queue mode '%s'"`, s), false
	}
	return "", true
}

func checkQueueVersion(v any, _ transport.Table) (string, bool) {
	n, ok := asInt(v)
	if !ok {
		return expectedInteger(v), false
	}
	if n != 1 && n != 2 {
		return fmt.Sprintf(`"unsupported queue version '%d'"`, n), false
	}
	return "", true
}

func checkMaxAge(v any, _ transport.Table) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return unacceptable(v), false
	}
	if _, ok := contract.ParseMaxAge(s); !ok {
		return "invalid_max_age", false
	}
	return "", true
}

// keptArgs are the arguments as the queue keeps and compares them: RabbitMQ
// 4.3 turns a valid x-max-age into milliseconds ("7D" is kept as
// "604800000", and "604800s" is the same), where earlier versions keep and
// compare the text. An invalid one stays as it came.
func keptArgs(em *emulation, args transport.Table) transport.Table {
	s, ok := args[contract.ArgMaxAge].(string)
	if !em.v43 || !ok {
		return args
	}
	d, ok := contract.ParseMaxAge(s)
	if !ok {
		return args
	}
	kept := maps.Clone(args)
	kept[contract.ArgMaxAge] = strconv.FormatInt(d.Milliseconds(), 10)
	return kept
}

func checkBool(v any, _ transport.Table) (string, bool) {
	if _, ok := v.(bool); !ok {
		return unacceptable(v), false
	}
	return "", true
}

// queueSpec is what a new queue is made of once its declaration passed.
type queueSpec struct {
	typ              transport.QueueType
	durable          bool
	ttl, expires     int64 // -1: none
	dlx, dlrk        string
	hasDLX, hasDLRK  bool
	maxLen, maxBytes int64 // -1: none
	overflow         string
	singleActive     bool
	deliveryLimit    int64 // -1: none
	// atLeastOnce: a quorum queue's x-dead-letter-strategy at-least-once,
	// which RabbitMQ applies only with x-overflow reject-publish (otherwise
	// it dead-letters at most once).
	atLeastOnce bool
}

// validateNew checks the declaration of a queue that does not exist yet, as
// RabbitMQ (the version em emulates) does, and says what it is. args are the
// wire arguments.
func validateNew(em *emulation, name string, durable, exclusive, autoDelete bool, args transport.Table) (queueSpec, error) {
	invalid := func(key, detail string) error {
		return preconditionFailed("invalid arg '%s' for queue '%s' in vhost '/': %s", key, name, detail)
	}
	spec := queueSpec{typ: transport.Classic, durable: durable && !exclusive, ttl: -1, expires: -1,
		maxLen: -1, maxBytes: -1, overflow: contract.OverflowDropHead, deliveryLimit: -1}
	if v, ok := args[contract.ArgDeadLetterExchange]; ok {
		s, ok := v.(string)
		if !ok {
			return spec, preconditionFailed("invalid type '%s' for arg 'x-dead-letter-exchange' in queue '%s' in vhost '/'", amqpType(v), name)
		}
		spec.dlx, spec.hasDLX = s, true
	}
	if v, ok := args[transport.QueueTypeArgument]; ok {
		s, ok := v.(string)
		if !ok {
			return spec, invalid(transport.QueueTypeArgument, unacceptable(v))
		}
		switch transport.QueueType(s) {
		case transport.Classic, transport.Quorum, transport.Stream:
			spec.typ = transport.QueueType(s)
		default:
			return spec, invalid(transport.QueueTypeArgument, fmt.Sprintf(`"unsupported queue type '%s'"`, s))
		}
	}
	refused := inapplicable(spec.typ, em)
	for _, c := range argChecks {
		if slices.Contains(refused, c.key) {
			continue // refused below, whatever its value
		}
		if v, ok := args[c.key]; ok {
			if detail, ok := c.check(v, args); !ok {
				return spec, invalid(c.key, detail)
			}
		}
	}
	if v, ok := args["x-queue-master-locator"]; ok && !em.v4 {
		// RabbitMQ 3.10 fails an unknown locator with INTERNAL_ERROR, which
		// closes the connection; 4.0 has no mirrors and takes any value.
		if s, ok := v.(string); !ok || !slices.Contains([]string{"client-local", "min-masters", "random", "balanced"}, s) {
			return spec, internalError()
		}
	}
	for _, k := range refused {
		if _, ok := args[k]; ok {
			return spec, preconditionFailed("invalid arg '%s' for queue '%s' in vhost '/' of queue type %s", k, name, typeModule[spec.typ])
		}
	}
	if spec.typ == transport.Quorum || spec.typ == transport.Stream {
		switch {
		case autoDelete:
			return spec, preconditionFailed("invalid property 'auto-delete' for queue '%s' in vhost '/'", name)
		case exclusive:
			return spec, preconditionFailed("invalid property 'exclusive-owner' for queue '%s' in vhost '/'", name)
		case !spec.durable:
			return spec, preconditionFailed("invalid property 'non-durable' for queue '%s' in vhost '/'", name)
		}
	}
	if v, ok := args[contract.ArgMessageTTL]; ok {
		spec.ttl, _ = asInt(v)
	}
	if v, ok := args[contract.ArgExpires]; ok {
		spec.expires, _ = asInt(v)
	}
	if v, ok := args[contract.ArgDeadLetterRoutingKey]; ok {
		spec.dlrk, spec.hasDLRK = v.(string), true
	}
	if v, ok := args[contract.ArgMaxLength]; ok {
		spec.maxLen, _ = asInt(v)
	}
	if v, ok := args[contract.ArgMaxLengthBytes]; ok {
		spec.maxBytes, _ = asInt(v)
	}
	if v, ok := args[contract.ArgOverflow]; ok {
		spec.overflow = overflowMode(spec.typ, v.(string))
	}
	if v, ok := args[contract.ArgSingleActiveConsumer]; ok {
		spec.singleActive = v.(bool)
	}
	if spec.typ == transport.Quorum {
		spec.deliveryLimit = deliveryLimit(em, args)
		spec.atLeastOnce = spec.hasDLX && args[contract.ArgDeadLetterStrategy] == contract.DeadLetterAtLeastOnce && args[contract.ArgOverflow] == contract.OverflowRejectPublish
	}
	return spec, nil
}

// deliveryLimit is a quorum queue's x-delivery-limit, -1 for none. Neither
// version validates it. RabbitMQ 3.10 takes any integer, a negative one
// dead-lettering at the first return, and anything else for none; 4.0 has a
// limit of 20 unless one is given, and none for a negative or non-integer
// one.
func deliveryLimit(em *emulation, args transport.Table) int64 {
	v, ok := args[contract.ArgDeliveryLimit]
	if !ok {
		if em.v4 {
			return 20
		}
		return -1
	}
	n, ok := asInt(v)
	switch {
	case !ok, em.v4 && n < 0:
		return -1
	case n < 0:
		return 0 // dead-lettered at the first return, as a limit of 0
	}
	return n
}

// checkEquivalent is RabbitMQ's check of a declaration of a queue that
// exists: the exclusive flag and owner (405 RESOURCE_LOCKED), then durable,
// auto_delete and the compared arguments (406 PRECONDITION_FAILED).
func (q *queue) checkEquivalent(em *emulation, c *conn, durable, exclusive, autoDelete bool, args transport.Table) error {
	if q.exclusive != exclusive || q.exclusive && q.owner != c {
		return resourceLocked(q.name)
	}
	durable = durable && !exclusive
	inequivalent := func(arg, received, current string) error {
		return preconditionFailed("inequivalent arg '%s' for queue '%s' in vhost '/': received %s but current is %s", arg, q.name, received, current)
	}
	if q.durable != durable {
		return inequivalent("durable", fmt.Sprintf("'%t'", durable), fmt.Sprintf("'%t'", q.durable))
	}
	if q.autoDelete != autoDelete {
		return inequivalent("auto_delete", fmt.Sprintf("'%t'", autoDelete), fmt.Sprintf("'%t'", q.autoDelete))
	}
	for _, k := range compared(q.typ, em) {
		cur, hasCur := q.args[k]
		rec, hasRec := args[k]
		if k == transport.QueueTypeArgument {
			if em.v4 { // RabbitMQ 4.0 names the type a queue has by default
				if !hasCur {
					cur, hasCur = string(transport.Classic), true
				}
				if !hasRec {
					rec, hasRec = string(transport.Classic), true
				}
			} else if isClassic(cur) && !hasRec || isClassic(rec) && !hasCur {
				continue // x-queue-type classic is the same as none
			}
		}
		switch {
		case !hasCur && !hasRec:
		case hasCur && hasRec:
			if sameArg(cur, rec) {
				break
			}
			if isDecimal(cur) || isDecimal(rec) {
				// RabbitMQ fails to print a decimal here: INTERNAL_ERROR,
				// which closes the connection.
				return internalError()
			}
			return inequivalent(k, bareValue(rec), bareValue(cur))
		case hasCur:
			return inequivalent(k, "none", typedValue(cur))
		default:
			return inequivalent(k, typedValue(rec), "none")
		}
	}
	return nil
}

// bareValue is a value as RabbitMQ prints it when both sides have one:
// quoted, or none for void.
func bareValue(v any) string {
	if v == nil {
		return "none"
	}
	return "'" + formatValue(v) + "'"
}

func isDecimal(v any) bool {
	_, ok := v.(amqp.Decimal)
	return ok
}

func isClassic(v any) bool {
	s, ok := v.(string)
	return ok && transport.QueueType(s) == transport.Classic
}

func typedValue(v any) string {
	if v == nil {
		return "the value 'undefined' of type 'void'"
	}
	return fmt.Sprintf("the value '%s' of type '%s'", formatValue(v), amqpType(v))
}
