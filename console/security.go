package console

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq/internal/httpguard"
)

// contentSecurityPolicy allows the console's own script, styles and images
// and nothing else: no inline script or style, no framing, forms posted
// only to the console.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// The bounds of a request's body: every form is small; a topology file
// to compare is a YAML file; an import upload is Config.MaxImport
// (DefaultMaxImport), streamed to a temporary file.
const (
	maxForm     = 1 << 20
	maxTopology = 4 << 20
	// DefaultMaxImport is the largest export file an import takes, unless
	// Config.MaxImport says otherwise.
	DefaultMaxImport = 256 << 20
)

// sessionCookie holds the session of a browser that gave the token.
const sessionCookie = "acemq_console"

// secure sets the headers of every response; refuses a request from
// another site but a link to the overview, and one whose Host is not
// this machine's when the console has no credentials; lets in only the
// requests with credentials (when the console has any), throttling wrong
// ones; bounds the body of a POST; and refuses a POST without the CSRF
// token of its caller. The handlers find the caller with callerOf.
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
		if !s.c.hasCredentials() && !httpguard.LoopbackHost(r.Host) {
			s.refuse(w, r, http.StatusMisdirectedRequest, "Without credentials this console answers only to localhost, 127.0.0.1 or [::1].")
			return
		}
		if reason := crossSite(r); reason != "" {
			s.refuse(w, r, http.StatusForbidden, reason)
			return
		}
		c, ok := s.identify(w, r)
		if !ok {
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		w = &callerWriter{w, c}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			up, status, reason := s.readBody(w, r)
			defer up.remove()
			if status != 0 {
				s.refuse(w, r, status, reason)
				return
			}
			if up != nil {
				r = r.WithContext(context.WithValue(r.Context(), receivedKey{}, up))
			}
			// The login form comes before any token is handed out: it has
			// none, and is kept to the console's own pages by crossSite.
			if r.URL.Path != "/login" && c.csrf != "" && !httpguard.Equal(r.PostForm.Get("csrf"), c.csrf) {
				s.refuse(w, r, http.StatusForbidden, "The form's CSRF token is missing or wrong: reload the page and try again.")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// crossSiteLinks are the pages a link on another site may open: the
// overview, which reads only the management API and the queues' depths,
// and the login page the overview sends a browser to.
var crossSiteLinks = map[string]bool{"/": true, "/login": true}

// crossSite says why a request from another site (or another origin of
// this one: another port is the same site) is refused, or "" when it is
// not from one, or is a link to one of crossSiteLinks followed by a
// person.
func crossSite(r *http.Request) string {
	foreign := httpguard.FromAnotherSite(r)
	if !foreign {
		return ""
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") != "iframe" {
			if crossSiteLinks[r.URL.Path] {
				return ""
			}
			return "This link came from another site: from elsewhere the console opens only its overview. Go to the overview and on from there."
		}
	}
	return "The request came from another site."
}

// identify finds the caller of r, or answers r itself (unauthorized,
// throttled) and says so. The login page and the static files need no
// credentials.
func (s *Server) identify(w http.ResponseWriter, r *http.Request) (caller, bool) {
	addr := httpguard.ClientAddr(r)
	if !s.c.hasCredentials() {
		return caller{Who: "local", Addr: addr, csrf: s.csrf}, true
	}
	if r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/") {
		return caller{Addr: addr}, true
	}
	bearer, hasBearer := httpguard.Bearer(r)
	user, password, hasBasic := r.BasicAuth()
	if hasBearer || hasBasic {
		if s.throttled(w, r) {
			return caller{}, false
		}
		switch {
		case hasBearer && s.c.Token != "" && httpguard.Equal(bearer, s.c.Token):
			// A script's header, which no browser adds by itself: no CSRF.
			return caller{Who: "token", Addr: addr}, true
		case hasBasic && s.c.User != "" && s.c.Password != "" && httpguard.Equal(user, s.c.User) && httpguard.Equal(password, s.c.Password):
			// A browser resends basic auth by itself: its forms carry the token.
			return caller{Who: user, Addr: addr, csrf: s.csrf}, true
		}
		method := "bearer"
		if hasBasic {
			method = "basic"
		}
		s.loginFailed(r, method, user)
		s.unauthorized(w, r)
		return caller{}, false
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if se, ok := s.sessions.get(ck.Value, s.c.Now()); ok {
			return caller{Who: "token " + se.short, Addr: addr, csrf: se.csrf, session: se.id}, true
		}
	}
	s.unauthorized(w, r)
	return caller{}, false
}

// throttled refuses r (429) when its address gave too many wrong
// credentials of late.
func (s *Server) throttled(w http.ResponseWriter, r *http.Request) bool {
	wait := s.throttle.wait(httpguard.ClientAddr(r), s.c.Now())
	if wait <= 0 {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	s.refuse(w, r, http.StatusTooManyRequests, "Too many wrong credentials from your address: wait "+wait.Round(time.Second).String()+" and try again.")
	return true
}

// loginFailed counts a wrong credential of r's address and logs it.
func (s *Server) loginFailed(r *http.Request, method, user string) {
	addr := httpguard.ClientAddr(r)
	s.throttle.failed(addr, s.c.Now())
	attrs := []slog.Attr{slog.String("method", method)}
	if user != "" {
		attrs = append(attrs, slog.String("user", user))
	}
	s.audit(caller{Addr: addr}, "console login failed", attrs...)
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

// refuse answers r with status and why, and logs it: a refusal is what
// an attack looks like from here.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, reason string) {
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "console request refused", slog.Int("status", status),
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("addr", httpguard.ClientAddr(r)),
		slog.String("sec_fetch_site", r.Header.Get("Sec-Fetch-Site")), slog.String("origin", r.Header.Get("Origin")),
		slog.String("reason", reason))
	title := "Refused"
	if status == http.StatusRequestEntityTooLarge {
		title = "Too large"
	}
	s.fail(w, r, status, title, reason)
}

// readBody reads a POST's form within its bound: an urlencoded form
// whole, a multipart one part by part with its file streamed to a
// temporary file (see receive). It says the status and reason of a
// refusal, or 0.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (*received, int, string) {
	limit := int64(0) // no upload
	switch r.URL.Path {
	case "/import":
		limit = s.c.MaxImport
	case "/drift":
		limit = maxTopology
	}
	mediaType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if strings.TrimSpace(mediaType) != "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return nil, http.StatusRequestEntityTooLarge, "A form is at most " + sizeOf(maxForm) + "."
			}
			return nil, http.StatusBadRequest, "The form does not read: " + err.Error()
		}
		return nil, 0, ""
	}
	if limit == 0 {
		return nil, http.StatusUnsupportedMediaType, "This page takes no upload."
	}
	// The file and up to maxForm of fields around it.
	if r.ContentLength > limit+maxForm {
		return nil, http.StatusRequestEntityTooLarge, "The file is larger than the " + sizeOf(limit) + " this console takes."
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit+maxForm)
	form, up, err := receive(r, limit)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, errFileTooLarge) || errors.As(err, &tooLarge):
		return up, http.StatusRequestEntityTooLarge, "The file is larger than the " + sizeOf(limit) + " this console takes."
	case err != nil:
		return up, http.StatusBadRequest, "The upload does not read: " + err.Error()
	}
	r.PostForm, r.Form = form, url.Values{}
	for k, v := range r.URL.Query() {
		r.Form[k] = v
	}
	for k, v := range form {
		r.Form[k] = append(r.Form[k], v...)
	}
	return up, 0, ""
}

// callerWriter carries the caller to render, which writes their CSRF
// token into the forms it renders.
type callerWriter struct {
	http.ResponseWriter
	c caller
}

func (w *callerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets a page stream through the wrapper (http.Flusher).
func (w *callerWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// callerOfWriter is the caller of the request w answers.
func callerOfWriter(w http.ResponseWriter) caller {
	for {
		switch x := w.(type) {
		case *callerWriter:
			return x.c
		case interface{ Unwrap() http.ResponseWriter }: // a middleware's writer around it
			w = x.Unwrap()
		default:
			return caller{}
		}
	}
}
