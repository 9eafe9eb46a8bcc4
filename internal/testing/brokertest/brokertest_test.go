package brokertest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// The management API is found from the test broker's AMQP URL as the CLI
// finds it, not at localhost:15672 whatever the broker.
func TestManagementURL(t *testing.T) {
	tests := []struct {
		name, amqpURL, managementURL, want string
	}{
		{"the AMQP host on port 15672", "amqp://u:pw@rabbit.example:5673/shop", "", "http://u:pw@rabbit.example:15672"},
		{"the management URL, with the AMQP credentials", "amqp://u:pw@rabbit.example:5673/", "http://mgmt.example:15674", "http://u:pw@mgmt.example:15674"},
		{"the management URL's own credentials", "amqp://u:pw@rabbit.example:5673/", "http://m:pw2@mgmt.example:15674", "http://m:pw2@mgmt.example:15674"},
		{"no broker configured: the default one's", "", "", "http://guest:guest@localhost:15672"},
		{"an AMQP URL that does not parse", "ftp://x", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", "")
			t.Setenv("ACEMQ_TEST_URL", tt.amqpURL)
			t.Setenv("ACEMQ_TEST_MANAGEMENT_URL", tt.managementURL)
			if got := ManagementURL(); got != tt.want {
				t.Errorf("ManagementURL() = %q, want %q", got, tt.want)
			}
		})
	}
}

// requests records the requests a fake management API gets.
type requests struct {
	mu  sync.Mutex
	got []string
}

func (r *requests) server(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got = append(r.got, req.Method+" "+req.URL.EscapedPath())
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.Close)
	return s
}

func (r *requests) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// UniqueName deletes what it named on the test broker, in its vhost;
// UniqueNameOn on the broker it is given, through the first node that
// answers, and nowhere else.
func TestUniqueNameCleanup(t *testing.T) {
	var test, cluster requests
	t.Setenv("ACEMQ_TEST_URL", "amqp://guest:guest@127.0.0.1:1/shop")
	t.Setenv("ACEMQ_TEST_MANAGEMENT_URL", test.server(t).URL)

	var name string
	t.Run("test broker", func(t *testing.T) { name = UniqueName(t, "q") })
	want := []string{"DELETE /api/queues/shop/" + name, "DELETE /api/exchanges/shop/" + name}
	if got := test.list(); !slices.Equal(got, want) {
		t.Errorf("the test broker got %q, want %q", got, want)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // a node that is down: connection refused
	t.Run("cluster", func(t *testing.T) { name = UniqueNameOn(t, "q", "/", down.URL, cluster.server(t).URL) })
	want = []string{"DELETE /api/queues/%2F/" + name, "DELETE /api/exchanges/%2F/" + name}
	if got := cluster.list(); !slices.Equal(got, want) {
		t.Errorf("the cluster's second node got %q, want %q", got, want)
	}
	if got := test.list(); len(got) != 2 {
		t.Errorf("the test broker got %q; the cluster's names are none of its business", got)
	}
}
