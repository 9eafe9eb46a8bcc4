package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq/actuator"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/httpguard"
)

// Service is a service whose consumers the console shows and controls,
// through the consumer control of its actuator (package actuator:
// /acemq-consumers).
type Service struct {
	// Name names it on the page and in the audit log.
	Name string
	// URL is its actuator's base URL, such as http://127.0.0.1:9464.
	URL string
	// Token is its actuator's control token (actuator.WithControlToken),
	// sent as "Authorization: Bearer"; "" for an actuator on this machine
	// that needs none.
	Token string
}

// actuatorTimeout bounds each call to an actuator, well within a page's
// timeout: a service that does not answer is shown as such.
const actuatorTimeout = 3 * time.Second

// maxActuatorAnswer bounds what the console reads of an actuator's answer.
const maxActuatorAnswer = 1 << 20

// checkServices refuses services the console could not tell apart or
// reach: each needs a name of its own and an http or https URL.
func checkServices(services []Service) error {
	seen := map[string]bool{}
	for _, sv := range services {
		u, err := url.Parse(sv.URL)
		switch {
		case sv.Name == "":
			return fmt.Errorf("console: the service at %s has no name", sv.URL)
		case seen[sv.Name]:
			return fmt.Errorf("console: two services are named %q", sv.Name)
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "":
			return fmt.Errorf("console: the service %s: its actuator's URL %q is not http(s)://host:port", sv.Name, sv.URL)
		}
		seen[sv.Name] = true
	}
	return nil
}

// warnPlainTokens warns of a token sent in clear beyond this machine.
func (s *Server) warnPlainTokens() {
	for _, sv := range s.c.Services {
		if u, _ := url.Parse(sv.URL); sv.Token != "" && u.Scheme == "http" && !httpguard.IsLoopback(u.Hostname()) {
			s.log.Warn("INSECURE: the console sends the control token of a service's actuator over plain HTTP beyond this machine: serve the actuator over TLS",
				"service", sv.Name, "url", sv.URL)
		}
	}
}

// serviceRow is a service on the consumers page: its consumers, or why
// they could not be read.
type serviceRow struct {
	Name, URL string
	Consumers []actuator.ConsumerStatus
	Problem   string
}

// consumers lists every service's consumers, asking their actuators at
// once; one that does not answer is shown so, beside the others.
func (s *Server) consumers(w http.ResponseWriter, r *http.Request) {
	rows := make([]serviceRow, len(s.c.Services))
	var wg sync.WaitGroup
	for i, sv := range s.c.Services {
		wg.Go(func() {
			rows[i] = serviceRow{Name: sv.Name, URL: sv.URL}
			var list actuator.ConsumerList
			if err := s.callActuator(r.Context(), sv, http.MethodGet, contract.ActuatorConsumersPath, nil, &list); err != nil {
				rows[i].Problem = err.Error()
				return
			}
			rows[i].Consumers = list.Consumers
		})
	}
	wg.Wait()
	s.render(w, http.StatusOK, "consumers", "Consumers", rows)
}

// controlConsumer pauses, resumes or rescales a service's consumer through
// its actuator, audits it, and goes back to the consumers page.
func (s *Server) controlConsumer(w http.ResponseWriter, r *http.Request) {
	if s.refuseReadOnly(w, r) {
		return
	}
	name, id, op := r.PostFormValue("service"), r.PostFormValue("consumer"), r.PostFormValue("op")
	sv, ok := s.service(name)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "No such service", "The console is not told of a service "+strconv.Quote(name)+".")
		return
	}
	var body any
	attrs := []slog.Attr{slog.String("service", sv.Name), slog.String("consumer", id)}
	switch op {
	case contract.ActuatorPauseAction, contract.ActuatorResumeAction:
	case contract.ActuatorScaleAction:
		scale, err := readScale(r)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, "Cannot rescale", err.Error())
			return
		}
		body = scale
		attrs = append(attrs, slog.Int("concurrency", scale.Concurrency), slog.Int("prefetch", scale.Prefetch))
	default:
		s.fail(w, r, http.StatusBadRequest, "Cannot do that", "There is no consumer action "+strconv.Quote(op)+": pause, resume or scale.")
		return
	}
	if id == "" {
		s.fail(w, r, http.StatusBadRequest, "Cannot do that", "No consumer named.")
		return
	}
	path := contract.ActuatorConsumersPath + "/" + url.PathEscape(id) + "/" + op
	var after actuator.ConsumerStatus
	err := s.callActuator(r.Context(), sv, http.MethodPost, path, body, &after)
	if err != nil {
		s.auditAction(r, "consumer "+op, r.PostFormValue("queue"), "failed", append(attrs, slog.String("error", err.Error()))...)
		s.fail(w, r, http.StatusBadGateway, "The service did not "+op+" its consumer", err.Error())
		return
	}
	s.auditAction(r, "consumer "+op, after.Queue, "ok", append(attrs, slog.String("state", string(after.State)))...)
	http.Redirect(w, r, "/consumers", http.StatusSeeOther)
}

// service is the configured service of that name.
func (s *Server) service(name string) (Service, bool) {
	for _, sv := range s.c.Services {
		if sv.Name == name {
			return sv, true
		}
	}
	return Service{}, false
}

// scaleForm is a rescale's body: a field left empty keeps its value.
type scaleForm struct {
	Concurrency int `json:"concurrency,omitempty"`
	Prefetch    int `json:"prefetch,omitempty"`
}

func readScale(r *http.Request) (scaleForm, error) {
	var out scaleForm
	for _, f := range []struct {
		name string
		to   *int
	}{{"concurrency", &out.Concurrency}, {"prefetch", &out.Prefetch}} {
		v := strings.TrimSpace(r.PostFormValue(f.name))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return out, fmt.Errorf("the %s %q is not a whole number above 0", f.name, v)
		}
		*f.to = n
	}
	if out == (scaleForm{}) {
		return out, errors.New("give a concurrency, a prefetch or both")
	}
	return out, nil
}

// callActuator sends a request to sv's actuator, body as JSON, and reads
// its JSON answer into out; an answer other than 2xx is an error that
// carries the actuator's own words.
func (s *Server) callActuator(ctx context.Context, sv Service, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, actuatorTimeout)
	defer cancel()
	var in io.Reader
	if method == http.MethodPost {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(sv.URL, "/")+path, in)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", contract.ContentTypeJSON)
	}
	if sv.Token != "" {
		req.Header.Set("Authorization", "Bearer "+sv.Token)
	}
	resp, err := actuatorClient.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("unreachable: its actuator at %s did not answer within %s", sv.URL, actuatorTimeout)
		}
		return fmt.Errorf("unreachable: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxActuatorAnswer))
	if err != nil {
		return fmt.Errorf("reading its actuator's answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var refusal struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(answer, &refusal) == nil && refusal.Error != "" {
			return fmt.Errorf("its actuator answered %s: %s", resp.Status, refusal.Error)
		}
		return fmt.Errorf("its actuator answered %s (is %s an AceMQ actuator with consumer control?)", resp.Status, sv.URL)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("its actuator's answer does not read: %w", err)
	}
	return nil
}

// actuatorClient follows no redirect: an actuator answers where it is,
// and a token is sent to it alone.
var actuatorClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}
