// Package httpguard holds the checks that keep an operator's HTTP surface
// (the console, the actuator's consumer control) to this machine, or to
// those who show a credential, and away from other sites' pages: the
// loopback tests that stop DNS rebinding, the constant-time comparison of
// a secret, and the browser's word on where a request comes from.
package httpguard

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// IsLoopback says whether host (a name or an address, without a port) is
// this machine's loopback: "localhost" or a loopback address.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackHost says whether a request's Host (a name or address, with or
// without a port, an IPv6 address in brackets) is this machine's loopback.
// A page elsewhere whose name was made to resolve to 127.0.0.1 (DNS
// rebinding) sends its own name: it is refused.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return IsLoopback(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

// ClientAddr is the address a request came from, without its port.
func ClientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// Local says whether r came from this machine to a loopback address of it
// (when the server says where it came to), with a loopback Host, and not
// through a proxy that says so (Forwarded, X-Forwarded-For): a proxy on
// this machine connects from loopback on behalf of anyone.
func Local(r *http.Request) bool {
	if r.Header.Get("Forwarded") != "" || r.Header.Get("X-Forwarded-For") != "" {
		return false
	}
	if to, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		host, _, err := net.SplitHostPort(to.String())
		if err != nil || !IsLoopback(host) {
			return false
		}
	}
	return IsLoopback(ClientAddr(r)) && LoopbackHost(r.Host)
}

// Equal compares two secrets in constant time.
func Equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// Bearer is the token of r's "Authorization: Bearer" header, if it has one.
func Bearer(r *http.Request) (string, bool) {
	return strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// FromAnotherSite says whether a browser sent r from a page of another site
// or origin (another port of this host is another origin): Sec-Fetch-Site
// (every current browser) says so, or Origin (a POST, a script's fetch)
// names another host. A request without either (curl, a script) is not.
func FromAnotherSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none": // "none": typed, or a bookmark
	default:
		return true
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
			return true
		}
	}
	return false
}
