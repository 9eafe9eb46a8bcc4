package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/acemq-go/acemq/deadletter"
)

// progress shows how a long dlq verb is getting on: a bar when w is a
// terminal, else a line at every tenth of the way but at most every 1000
// messages (every 1000 when the total is not known), so that logs stay
// short, a small run prints none, and tests see the same lines every time.
type progress struct {
	w     io.Writer
	what  string
	bar   *progressbar.ProgressBar // nil when w is not a terminal
	shown int                      // the tenths (or thousands) printed
	last  deadletter.Progress
}

// minStep is the fewest messages between two progress lines.
const minStep = 1000

func newProgress(w io.Writer, what string) *progress {
	p := &progress{w: w, what: what}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("msgs"),
			progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
	}
	return p
}

// update is a deadletter.Options.Progress.
func (p *progress) update(now deadletter.Progress) {
	defer func() { p.last = now }()
	if p.bar != nil {
		if now.Total > 0 && now.Total != p.last.Total {
			p.bar.ChangeMax(now.Total)
		}
		_ = p.bar.Set(now.Taken)
		return
	}
	step := max(now.Total/10, minStep)
	if n := now.Taken / step; n > p.shown {
		p.shown = n
		p.line(now)
	}
}

func (p *progress) line(now deadletter.Progress) {
	total := "?"
	if now.Total > 0 {
		total = fmt.Sprint(now.Total)
	}
	fmt.Fprintf(p.w, "%s: %d of %s taken, %d moved, %d left, %d doubtful\n", p.what, now.Taken, total, now.Moved, now.Left, now.Doubtful)
}

// finish clears the bar; the caller prints the outcome.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
