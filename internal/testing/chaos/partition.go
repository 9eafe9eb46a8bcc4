package chaos

import (
	"context"
	"fmt"
	"time"
)

// A Cut is one network partition of scenario Partition: Config.Cut makes
// it and says how long it lasts and how to heal it.
type Cut struct {
	// What says which node was cut off from what, and whose node it is
	// ("n3, the consumer's, from everything").
	What string
	// Hold is how long the cut lasts before it is healed.
	Hold time.Duration
	// Heal undoes the cut and returns once the cluster is whole again,
	// saying what that took beyond the network ("" if nothing).
	Heal func(ctx context.Context) (string, error)
}

// partition makes fault i's cut, holds it while the load flows, and heals
// it; it returns when the cut began. What the publisher and the consumer
// managed during the cut (through the nodes they fell back to) is noted in
// r.cuts: how many of the messages published during it were confirmed, and
// how many of those were accepted before the heal.
func (r *run) partition(ctx context.Context, i int) (time.Time, error) {
	r.mu.Lock()
	from := r.next + 10 // the batch in flight may have been sent before the cut
	r.mu.Unlock()
	cut, err := r.cfg.Cut(ctx, i)
	t0 := time.Now()
	if err != nil {
		return t0, err
	}
	r.cfg.Logf("chaos: fault %d/%d (partition): cut %s for %v", i+1, r.cfg.Faults, cut.What, cut.Hold)
	select {
	case <-ctx.Done():
	case <-time.After(cut.Hold):
	}
	accepted, _, err := r.log.read()
	if err != nil {
		return t0, err
	}
	r.mu.Lock()
	to := r.next
	confirmed, acceptedDuring := 0, 0
	for n := from; n < to; n++ {
		if r.confirmed[n] {
			confirmed++
			if accepted[n] > 0 {
				acceptedDuring++
			}
		}
	}
	r.mu.Unlock()
	h0 := time.Now()
	healed, err := cut.Heal(context.WithoutCancel(ctx))
	if err != nil {
		return t0, fmt.Errorf("healing %s: %w", cut.What, err)
	}
	note := fmt.Sprintf("%s, %v: %d published during it confirmed, %d of those accepted before the heal; healed in %v",
		cut.What, cut.Hold, confirmed, acceptedDuring, time.Since(h0).Round(100*time.Millisecond))
	if healed != "" {
		note += " (" + healed + ")"
	}
	r.cuts = append(r.cuts, note)
	r.cfg.Logf("chaos: fault %d/%d (partition): %s", i+1, r.cfg.Faults, note)
	return t0, nil
}
