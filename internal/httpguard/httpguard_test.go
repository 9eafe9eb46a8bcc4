package httpguard_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/acemq-go/acemq/internal/httpguard"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "localhost:8080": true, "127.0.0.1": true, "127.0.0.1:9464": true, "[::1]:9464": true, "::1": true,
		"evil.example:9464": false, "evil.example": false, "10.0.0.1:9464": false, "": false, "localhost.evil.example": false,
	} {
		if got := httpguard.LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %t, want %t", host, got, want)
		}
	}
}

func TestLocal(t *testing.T) {
	req := func(remote, host string, to net.Addr) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr, r.Host = remote, host
		if to != nil {
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, to))
		}
		return r
	}
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9464}
	every := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 9464}
	for _, c := range []struct {
		name string
		r    *http.Request
		want bool
	}{
		{"from and to loopback", req("127.0.0.1:5000", "127.0.0.1:9464", loopback), true},
		{"no local address known", req("[::1]:5000", "localhost:9464", nil), true},
		{"from elsewhere", req("10.0.0.9:5000", "127.0.0.1:9464", loopback), false},
		{"to an outside address", req("127.0.0.1:5000", "127.0.0.1:9464", every), false},
		{"a rebound name", req("127.0.0.1:5000", "evil.example:9464", loopback), false},
		{"through a proxy", proxied(req("127.0.0.1:5000", "127.0.0.1:9464", loopback), "X-Forwarded-For"), false},
		{"through a proxy, Forwarded", proxied(req("127.0.0.1:5000", "127.0.0.1:9464", loopback), "Forwarded"), false},
	} {
		if got := httpguard.Local(c.r); got != c.want {
			t.Errorf("%s: Local = %t, want %t", c.name, got, c.want)
		}
	}
}

func proxied(r *http.Request, header string) *http.Request {
	r.Header.Set(header, "for=203.0.113.9")
	return r
}

func TestFromAnotherSite(t *testing.T) {
	for _, c := range []struct {
		name, site, origin string
		want               bool
	}{
		{"curl", "", "", false},
		{"same origin", "same-origin", "http://127.0.0.1:9464", false},
		{"typed", "none", "", false},
		{"same site, another port", "same-site", "", true},
		{"cross-site", "cross-site", "", true},
		{"another origin", "", "http://evil.example", true},
		{"null origin", "", "null", true},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9464/x", nil)
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := httpguard.FromAnotherSite(r); got != c.want {
			t.Errorf("%s: FromAnotherSite = %t, want %t", c.name, got, c.want)
		}
	}
}

func TestEqualAndBearer(t *testing.T) {
	if !httpguard.Equal("s3cret", "s3cret") || httpguard.Equal("s3cret", "s3cre") || httpguard.Equal("", "x") {
		t.Error("Equal compares wrongly")
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if _, ok := httpguard.Bearer(r); ok {
		t.Error("Bearer found a token in a request without one")
	}
	r.Header.Set("Authorization", "Bearer abc")
	if tok, ok := httpguard.Bearer(r); !ok || tok != "abc" {
		t.Errorf("Bearer = %q, %t", tok, ok)
	}
	r.Header.Set("Authorization", "Basic abc")
	if _, ok := httpguard.Bearer(r); ok {
		t.Error("Bearer took basic auth for a token")
	}
}
