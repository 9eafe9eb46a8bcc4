package console

import (
	"log/slog"
	"net/http"

	"github.com/acemq-go/acemq/internal/httpguard"
)

// login lets in a browser that gives the token: it starts a session of
// its own (a random id in an HttpOnly, SameSite=Strict cookie, Secure over
// TLS) with its own CSRF token. The login page hands out no token: its
// form is kept to the console's own pages by secure's crossSite, and a
// wrong token counts towards the address's throttling.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.c.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodPost {
		if s.throttled(w, r) {
			return
		}
		if httpguard.Equal(r.PostForm.Get("token"), s.c.Token) {
			se := s.sessions.start(s.c.Now())
			http.SetCookie(w, sessionCookieOf(r, se))
			s.audit(caller{Who: "token " + se.short, Addr: httpguard.ClientAddr(r)}, "console login", slog.String("method", "token"))
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		s.loginFailed(r, "token", "")
		s.render(w, http.StatusUnauthorized, "login", "Sign in", "That is not the token.")
		return
	}
	s.render(w, http.StatusOK, "login", "Sign in", "")
}

// logout ends the caller's session, and no other browser's.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r.Context())
	if c.session != "" {
		s.sessions.end(c.session)
		s.audit(c, "console sign-out")
	}
	http.SetCookie(w, sessionCookieOf(r, session{}))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
