package actuator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// ControlTimeout bounds how long a pause waits for the handlers running
// to finish: the consumer stays paused after it, and the answer (202)
// says how many still run.
const ControlTimeout = 30 * time.Second

// maxScaleBody bounds the body of a scale request: two numbers.
const maxScaleBody = 4 << 10

// ConsumerStatus is a consumer's status as the control paths answer it,
// in the family's camelCase (acemq.ConsumerStatus); a console decodes it.
type ConsumerStatus struct {
	ID       string              `json:"id"`
	Queue    string              `json:"queue"`
	State    acemq.ConsumerState `json:"state"`
	PausedBy []acemq.PauseCause  `json:"pausedBy"`
	Scale    acemq.Scale         `json:"scale"`
	Running  int                 `json:"running"`
	Breaker  acemq.BreakerState  `json:"breaker,omitempty"`
	Stats    acemq.Stats         `json:"stats"`
	Detail   string              `json:"detail,omitempty"` // a pause that ran out of time
}

func statusOf(c *acemq.Consumer) ConsumerStatus {
	s := c.Status()
	pausedBy := s.PausedBy
	if pausedBy == nil {
		pausedBy = []acemq.PauseCause{} // [] in JSON, not null
	}
	return ConsumerStatus{ID: s.ID, Queue: s.Queue, State: s.State, PausedBy: pausedBy,
		Scale: s.Scale, Running: s.Running, Breaker: s.Breaker, Stats: s.Stats}
}

// ConsumerList is the answer of contract.ActuatorConsumersPath: an object,
// so that it can grow.
type ConsumerList struct {
	Consumers []ConsumerStatus `json:"consumers"`
}

// consumers serves the control paths of conn's consumers.
type consumers struct{ conn *acemq.Conn }

// routes mounts the control paths on mux, each behind guard.
func (cs consumers) routes(mux *http.ServeMux, guard func(http.Handler) http.Handler) {
	base := contract.ActuatorConsumersPath
	handle := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, guard(h)) }
	handle(http.MethodGet+" "+base, cs.list)
	handle(http.MethodGet+" "+base+"/{id}", cs.withConsumer(cs.show))
	handle(http.MethodPost+" "+base+"/{id}/"+contract.ActuatorPauseAction, cs.withConsumer(cs.pause))
	handle(http.MethodPost+" "+base+"/{id}/"+contract.ActuatorResumeAction, cs.withConsumer(cs.resume))
	handle(http.MethodPost+" "+base+"/{id}/"+contract.ActuatorScaleAction, cs.withConsumer(cs.scale))
}

func (cs consumers) list(w http.ResponseWriter, _ *http.Request) {
	out := ConsumerList{Consumers: []ConsumerStatus{}}
	for _, c := range cs.conn.Consumers() {
		out.Consumers = append(out.Consumers, statusOf(c))
	}
	writeJSON(w, http.StatusOK, out)
}

// withConsumer finds the consumer the path names, or answers 404.
func (cs consumers) withConsumer(h func(http.ResponseWriter, *http.Request, *acemq.Consumer)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		c := cs.conn.Consumer(id)
		if c == nil {
			refuse(w, http.StatusNotFound, fmt.Sprintf("there is no consumer %q on this connection (GET %s lists them)", id, contract.ActuatorConsumersPath))
			return
		}
		h(w, r, c)
	}
}

func (cs consumers) show(w http.ResponseWriter, _ *http.Request, c *acemq.Consumer) {
	writeJSON(w, http.StatusOK, statusOf(c))
}

func (cs consumers) pause(w http.ResponseWriter, r *http.Request, c *acemq.Consumer) {
	ctx, cancel := context.WithTimeout(r.Context(), ControlTimeout)
	defer cancel()
	answer(w, c, c.Pause(ctx))
}

func (cs consumers) resume(w http.ResponseWriter, r *http.Request, c *acemq.Consumer) {
	answer(w, c, c.Resume(r.Context()))
}

func (cs consumers) scale(w http.ResponseWriter, r *http.Request, c *acemq.Consumer) {
	s, err := readScale(w, r)
	if err != nil {
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	err = c.Rescale(r.Context(), s)
	if errors.Is(err, acemq.ErrInvalidOption) {
		// The consumer refused the numbers (its bounds): the caller's to mend.
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	answer(w, c, err)
}

// readScale reads {"concurrency":8,"prefetch":40}: either may be left out
// (or 0) to keep the current value, but not both, and neither is negative.
func readScale(w http.ResponseWriter, r *http.Request) (acemq.Scale, error) {
	var body struct {
		Concurrency *int `json:"concurrency"`
		Prefetch    *int `json:"prefetch"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxScaleBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		if errors.Is(err, io.EOF) {
			return acemq.Scale{}, errors.New(`the body is empty: send {"concurrency":8,"prefetch":40}, either field alone to change only it`)
		}
		return acemq.Scale{}, fmt.Errorf(`the body is not {"concurrency":8,"prefetch":40}: %w`, err)
	}
	if dec.More() {
		return acemq.Scale{}, errors.New("the body holds more than one JSON value")
	}
	var s acemq.Scale
	if body.Concurrency != nil {
		s.Concurrency = *body.Concurrency
	}
	if body.Prefetch != nil {
		s.Prefetch = *body.Prefetch
	}
	switch {
	case s.Concurrency < 0 || s.Prefetch < 0:
		return s, fmt.Errorf("concurrency %d and prefetch %d: neither may be negative", s.Concurrency, s.Prefetch)
	case s.Concurrency == 0 && s.Prefetch == 0:
		return s, errors.New("give a concurrency, a prefetch or both, above 0")
	}
	return s, nil
}

// answer answers a control request with the consumer's status after it:
// 200 when it is done; 202 when a pause ran out of time with handlers
// still running (the consumer is paused: they finish and settle as
// usual); 409 when the consumer is closed; 500 otherwise.
func answer(w http.ResponseWriter, c *acemq.Consumer, err error) {
	st := statusOf(c)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, st)
	case st.State == acemq.ConsumerClosed:
		refuse(w, http.StatusConflict, fmt.Sprintf("the consumer %q is closed: %v", st.ID, err))
	case st.State == acemq.ConsumerPaused && errors.Is(err, context.DeadlineExceeded):
		st.Detail = err.Error()
		writeJSON(w, http.StatusAccepted, st)
	default:
		refuse(w, http.StatusInternalServerError, err.Error())
	}
}
