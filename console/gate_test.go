package console

import (
	"context"
	"testing"
	"time"
)

// A job asking for a queue stops the pass that holds it and gets the queue
// once the pass lets go; a pass asking meanwhile waits for the job.
func TestGateJobsComeFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	g := newGate()
	pctx, releasePass, err := g.holdForPass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jobHeld := make(chan func())
	go func() {
		release, err := g.holdForJob(ctx)
		if err != nil {
			t.Error(err)
			close(jobHeld)
			return
		}
		jobHeld <- release
	}()
	select {
	case <-pctx.Done(): // the job stopped the pass
	case <-ctx.Done():
		t.Fatal("the pass was not stopped for the job")
	}
	if !g.busy() {
		t.Error("a job waits, but the gate is not busy")
	}
	select {
	case <-jobHeld:
		t.Fatal("the job holds the queue while the pass still does")
	default:
	}
	releasePass()
	var releaseJob func()
	select {
	case releaseJob = <-jobHeld:
	case <-ctx.Done():
		t.Fatal("the job never got the queue")
	}
	passHeld := make(chan func())
	go func() {
		_, release, err := g.holdForPass(ctx)
		if err != nil {
			t.Error(err)
			close(passHeld)
			return
		}
		passHeld <- release
	}()
	select {
	case <-passHeld:
		t.Fatal("a pass holds the queue while the job does")
	default:
	}
	releaseJob()
	select {
	case release := <-passHeld:
		release()
	case <-ctx.Done():
		t.Fatal("the pass never got the queue after the job")
	}
	if g.busy() {
		t.Error("no job holds the queue, but the gate is busy")
	}
}
