package acemq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// ErrOtherRungKind is Consume's refusal to declare the default kind of
// rungs beside the queue's rungs of the other kind that the broker already
// has: a second ladder nobody asked for.
var ErrOtherRungKind = errors.New("the broker has this queue's rungs of the other kind")

// rungKindName is how a kind is chosen in Go.
var rungKindName = map[contract.RungKind]string{
	contract.ContractRungs:    "contract.ContractRungs",
	contract.AtLeastOnceRungs: "contract.AtLeastOnceRungs",
}

// checkOtherRungs looks once, at start, for the ladder's rungs of the other
// kind on the broker (a topology or another consumer declared them): one
// passive declare per rung. When the kind was not chosen, it refuses to
// declare a second ladder beside them; when it was, it says so once. A
// look that fails otherwise than NOT_FOUND is logged and let be: it must
// not stop a consumer that could consume.
func (c *Consumer) checkOtherRungs(ctx context.Context, chosen bool) error {
	kind := c.ladder.Kind()
	other := kind.Other()
	var found []string
	for _, r := range c.ladder.Rungs() {
		name := contract.RungQueue(r.Source, r.Delay, other)
		_, err := c.transport.InspectQueue(ctx, name)
		switch {
		case err == nil:
			found = append(found, name)
		case !errors.Is(err, transport.ErrNotFound):
			c.logger.Warn("acemq: could not look for rungs of the other kind; consuming without knowing",
				"rung", name, "error", err)
			return nil
		}
	}
	if len(found) == 0 {
		return nil
	}
	if !chosen {
		return fmt.Errorf("%w: %s (%s rungs); without WithRungs this consumer declares %s rungs (the default), "+
			"a second ladder beside them. Use acemq.WithRungs(%s) to use the existing ladder, "+
			"or acemq.WithRungs(%s) to declare the %s ladder beside it on purpose (while migrating, say)",
			ErrOtherRungKind, strings.Join(found, ", "), other, kind, rungKindName[other], rungKindName[kind], kind)
	}
	c.logger.Warn("acemq: the broker has this queue's rungs of the other kind too: two ladders, each holding the retries of the consumers that use it",
		"rungs", kind, "ladder", c.ladder.Queues(), "other", other, "found", found)
	return nil
}
