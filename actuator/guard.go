package actuator

import (
	"net/http"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/httpguard"
	"github.com/acemq-go/acemq/internal/mediatype"
)

// controlGuard keeps the consumer control to this machine, or to whoever
// shows the control token, as the console keeps its pages: a request is
// let in when it carries "Authorization: Bearer <token>", or came from
// this machine to a loopback address with a loopback Host (a name made to
// resolve to 127.0.0.1, DNS rebinding, is refused). No page of another
// site can drive it: a browser's request from another site or origin is
// refused, and so is a POST whose body is not declared JSON (a form a
// page posts across sites cannot declare it without asking first, which
// this actuator never allows).
type controlGuard struct {
	token string // "" lets in loopback requests alone
	next  http.Handler
}

func (g controlGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if httpguard.FromAnotherSite(r) {
		refuse(w, http.StatusForbidden, "the request came from another site's page: consumers are controlled from this machine, or with the control token, never by a page")
		return
	}
	token, hasToken := httpguard.Bearer(r)
	switch {
	case hasToken && g.token != "" && httpguard.Equal(token, g.token):
	case hasToken && g.token == "":
		refuse(w, http.StatusUnauthorized, "this actuator has no control token (actuator.WithControlToken): it lets in only requests from this machine to its loopback address")
		return
	case hasToken:
		w.Header().Set("WWW-Authenticate", `Bearer realm="acemq actuator"`)
		refuse(w, http.StatusUnauthorized, "the bearer token is wrong")
		return
	case httpguard.Local(r):
	case g.token != "":
		w.Header().Set("WWW-Authenticate", `Bearer realm="acemq actuator"`)
		refuse(w, http.StatusUnauthorized, "from beyond this machine consumer control needs Authorization: Bearer with the control token")
		return
	default:
		refuse(w, http.StatusForbidden, "without a control token (actuator.WithControlToken) consumers are controlled only from this machine, at 127.0.0.1, localhost or [::1]")
		return
	}
	if r.Method == http.MethodPost && mediatype.Of(r.Header.Get("Content-Type")) != contract.ContentTypeJSON {
		refuse(w, http.StatusUnsupportedMediaType, "a control request is a POST with Content-Type: "+contract.ContentTypeJSON)
		return
	}
	g.next.ServeHTTP(w, r)
}

// refusal is the JSON of a refused or failed control request.
type refusal struct {
	Error string `json:"error"`
}

func refuse(w http.ResponseWriter, status int, why string) {
	writeJSON(w, status, refusal{why})
}
