package console

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"
)

// auditAction, for an action done within its request (an edit and retry,
// say), writes one line naming the request's caller, the action, the
// queue, the outcome and what else it is given.
func TestAuditActionNamesTheCaller(t *testing.T) {
	var b bytes.Buffer
	s := &Server{log: slog.New(slog.NewJSONHandler(&b, nil))}
	r := httptest.NewRequest("POST", "/edit", nil)
	r = r.WithContext(context.WithValue(r.Context(), callerKey{}, caller{Who: "op", Addr: "192.0.2.7"}))
	s.auditAction(r, "edit-retry", "orders.new.dlq", "ok", slog.String("id", "id-00007"), slog.Int("moved", 1))
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
		t.Fatalf("the line %q: %v", b.String(), err)
	}
	for k, want := range map[string]any{"msg": "console action", "who": "op", "addr": "192.0.2.7", "action": "edit-retry",
		"queue": "orders.new.dlq", "outcome": "ok", "id": "id-00007", "moved": float64(1), "level": "INFO"} {
		if rec[k] != want {
			t.Errorf("%s is %v, want %v (the line: %s)", k, rec[k], want, b.String())
		}
	}
}
