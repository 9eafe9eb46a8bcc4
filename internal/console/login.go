package console

import (
	"net/http"
)

// login lets in a browser that gives the token: it sets the session
// cookie (HttpOnly, SameSite=Strict).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.c.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodPost {
		if equal(r.FormValue("token"), s.c.Token) {
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		s.render(w, http.StatusUnauthorized, "login", "Sign in", "That is not the token.")
		return
	}
	s.render(w, http.StatusOK, "login", "Sign in", "")
}
