package console

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// contentSecurityPolicy allows the console's own script, styles and images
// and nothing else: no inline script or style, no framing, forms posted
// only to the console.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxRequest bounds a POST: an import file, or a topology file.
const maxRequest = 1 << 30

// sessionCookie holds the login of a browser that gave the token.
const sessionCookie = "acemq_console"

// secure sets the headers of every response, lets in only the requests
// with credentials (when the console has any) and refuses a POST without
// the CSRF token or from another origin.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer a browser sends "Origin:
		// null" on its own forms, and the origin check would refuse them.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			// Pages show message bodies: keep them out of every cache.
			h.Set("Cache-Control", "no-store")
		}
		// Without credentials the console is for this machine alone, and
		// answers only to a loopback name: a page elsewhere whose name was
		// made to resolve to 127.0.0.1 (DNS rebinding) is same-origin with
		// itself, and would read the pages, the CSRF token with them.
		if !s.c.hasCredentials() && !loopbackHost(r.Host) {
			s.fail(w, r, http.StatusMisdirectedRequest, "Refused",
				"Without credentials this console answers only to localhost, 127.0.0.1 or [::1].")
			return
		}
		if r.URL.Path != "/login" && !strings.HasPrefix(r.URL.Path, "/static/") && !s.authorized(r) {
			s.unauthorized(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, maxRequest)
			if reason := s.forged(r); reason != "" {
				s.fail(w, r, http.StatusForbidden, "Refused", reason)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authorized says whether r shows the console's credentials, or the
// console has none.
func (s *Server) authorized(r *http.Request) bool {
	if !s.c.hasCredentials() {
		return true
	}
	if s.c.Token != "" {
		if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(bearer, s.c.Token) {
			return true
		}
		if c, err := r.Cookie(sessionCookie); err == nil && equal(c.Value, s.session) {
			return true
		}
	}
	if s.c.User != "" && s.c.Password != "" {
		if u, p, ok := r.BasicAuth(); ok && equal(u, s.c.User) && equal(p, s.c.Password) {
			return true
		}
	}
	return false
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	if s.c.User != "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="acemq console", charset="UTF-8"`)
	}
	if s.c.Token != "" && r.Method == http.MethodGet {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	s.fail(w, r, http.StatusUnauthorized, "Not signed in", "This console needs credentials: the token on the login page, or basic auth.")
}

// forged says why a state-changing request is refused, or "" when it
// carries the CSRF token and comes from the console's own pages.
func (s *Server) forged(r *http.Request) string {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return "The request came from another site."
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return "The request came from another origin."
		}
	}
	// FormValue parses a multipart form too (the import's and the drift's
	// uploads), up to 32 MB in memory and the rest in temporary files.
	if !equal(r.FormValue("csrf"), s.csrf) {
		return "The form's CSRF token is missing or wrong: reload the page and try again."
	}
	return ""
}

// loopbackHost says whether a request's Host (a name or address, with or
// without a port) is this machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return isLoopback(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

// equal compares in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
