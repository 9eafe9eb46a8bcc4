package deadletter

import (
	"context"
	"time"

	"github.com/acemq-go/acemq"
)

// handBackWait bounds how long handBack waits for the queue to show the
// messages it put back.
const handBackWait = 3 * time.Second

// handBack closes taker, which puts back every message it holds, then
// waits until queue shows at least want ready messages again, or
// handBackWait has passed. RabbitMQ requeues a closed channel's messages
// only once the queue learns the channel is gone, which can be after the
// close is answered: without the wait, whoever inspects the queue at once
// (the next view, a job's count, the next edit) could find them missing.
// want is 0 when nothing need be waited for: nothing was taken, or
// consumers may be taking what comes back.
func handBack(c *acemq.Conn, taker acemq.Taker, queue string, want int) error {
	if err := taker.Close(); err != nil || want <= 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), handBackWait)
	defer cancel()
	for {
		st, err := c.InspectQueue(ctx, queue)
		if err != nil || st.Messages >= want {
			return nil // an error here is the next caller's to see
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// wantBack is what handBack waits for after taking taken messages of a
// queue that held state when it began, and removing removed of them.
func wantBack(state acemq.QueueState, taken, removed int) int {
	if taken == removed || state.Consumers > 0 {
		return 0
	}
	return state.Messages - removed
}
