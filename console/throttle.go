package console

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Wrong credentials from one client address: the first loginBurst are
// answered at once (a typo, a stale bookmark), then one every
// loginInterval; more are refused with 429 before the credentials are
// even looked at. 100 guesses then take 8 minutes, not 4 seconds.
const (
	loginBurst    = 5
	loginInterval = 5 * time.Second
	// maxThrottled bounds the addresses remembered; those whose bucket has
	// refilled are forgotten first.
	maxThrottled = 4096
)

// throttle counts the wrong credentials of each client address.
type throttle struct {
	mu     sync.Mutex
	byAddr map[string]*rate.Limiter
}

func newThrottle() *throttle { return &throttle{byAddr: map[string]*rate.Limiter{}} }

// wait is how long addr must wait before its credentials are looked at
// again: 0 when they may be now.
func (t *throttle) wait(addr string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.byAddr[addr]
	if !ok {
		return 0
	}
	tokens := l.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(loginInterval))
}

// failed counts one wrong credential of addr.
func (t *throttle) failed(addr string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.byAddr[addr]
	if !ok {
		if len(t.byAddr) >= maxThrottled {
			for a, old := range t.byAddr {
				if old.TokensAt(now) >= loginBurst {
					delete(t.byAddr, a)
				}
			}
		}
		l = rate.NewLimiter(rate.Every(loginInterval), loginBurst)
		t.byAddr[addr] = l
	}
	l.AllowN(now, 1)
}
