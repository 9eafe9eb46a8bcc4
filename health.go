package acemq

import "time"

// Health is a Conn's state, for liveness and readiness checks and for
// operators. It is read from what the Conn already knows; Health asks the
// broker nothing.
type Health struct {
	// Broker is the URL in use, without its password.
	Broker string
	// Connected: a connection is open. False while the Conn reconnects
	// (publishes and consumers wait for it) and after Close.
	Connected bool
	Closed    bool
	// Blocked: the broker blocks this connection's publishes for
	// BlockedReason (a memory or disk alarm); publishes wait, and fail with
	// ErrBlocked at their deadline. RabbitMQ tells a connection so only once
	// it publishes during the alarm.
	Blocked       bool
	BlockedReason string
	// Consumers counts the consumers started on the Conn and not closed.
	Consumers int
	// Recoveries counts connections lost and opened again.
	Recoveries int
	// LastError is the last connection failure (a lost connection or a
	// failed reconnect), at LastErrorAt; nil when there has been none. It
	// stays after a recovery: Connected says whether it still matters.
	LastError   error
	LastErrorAt time.Time
}

// Health reports the Conn's state now.
func (c *Conn) Health() Health {
	st := c.transport.State()
	return Health{
		Broker:    c.url,
		Connected: st.Connected, Closed: st.Closed,
		Blocked: st.Blocked, BlockedReason: st.BlockedReason,
		Consumers:  int(c.consumers.Load()),
		Recoveries: max(st.Connects-1, 0),
		LastError:  st.LastError, LastErrorAt: st.LastErrorAt,
	}
}
