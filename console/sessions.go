package console

import (
	"net/http"
	"sync"
	"time"

	"github.com/acemq-go/acemq/internal/httpguard"
)

// sessionLifetime is how long a browser stays signed in after giving the
// token: a working day, after which it gives the token again.
const sessionLifetime = 12 * time.Hour

// maxSessions bounds the sessions kept: each takes the token to make, so
// only a flood of sign-ins by someone who has it reaches the bound, and
// then the oldest session ends first.
const maxSessions = 1000

// session is one browser's sign-in: its cookie holds id, its forms carry
// csrf, and the audit log names it by short.
type session struct {
	id, csrf, short string
	expires         time.Time
}

// sessions are the signed-in browsers of this process, in memory: a
// restart signs every browser out.
type sessions struct {
	mu   sync.Mutex
	byID map[string]session
}

func newSessions() *sessions { return &sessions{byID: map[string]session{}} }

// start makes a session that ends at now+sessionLifetime.
func (ss *sessions) start(now time.Time) session {
	s := session{id: randomHex(), csrf: randomHex(), short: randomHex()[:8], expires: now.Add(sessionLifetime)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for id, old := range ss.byID {
		if !now.Before(old.expires) {
			delete(ss.byID, id)
		}
	}
	if len(ss.byID) >= maxSessions {
		oldest := ""
		for id, old := range ss.byID {
			if oldest == "" || old.expires.Before(ss.byID[oldest].expires) {
				oldest = id
			}
		}
		delete(ss.byID, oldest)
	}
	ss.byID[s.id] = s
	return s
}

// get is the live session of id.
func (ss *sessions) get(id string, now time.Time) (session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[id]
	if ok && !now.Before(s.expires) {
		delete(ss.byID, id)
		return session{}, false
	}
	return s, ok
}

// end ends the session id, and no other.
func (ss *sessions) end(id string) {
	ss.mu.Lock()
	delete(ss.byID, id)
	ss.mu.Unlock()
}

// sessionCookieOf is the cookie that holds s, or (s zero) that ends it.
// Secure when the browser reached the console over TLS, its own or a
// proxy's: then the cookie never travels in clear.
func sessionCookieOf(r *http.Request, s session) *http.Cookie {
	c := &http.Cookie{Name: sessionCookie, Value: s.id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: overTLS(r)}
	if s.id == "" {
		c.MaxAge = -1
	} else {
		c.Expires = s.expires
	}
	return c
}

// overTLS says whether the browser's request came over TLS: to this
// server, or to the TLS-terminating proxy in front of a loopback listener
// (which says so in X-Forwarded-Proto; only a process on this machine can
// reach a loopback listener to say otherwise).
func overTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return httpguard.IsLoopback(httpguard.ClientAddr(r)) && r.Header.Get("X-Forwarded-Proto") == "https"
}
