package chaos

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// clusterName is a brokertest.UniqueName whose queue and exchange are
// deleted, when the test ends, on the cluster (through the first node's
// management API that answers, as one may be down): not on the test broker
// of ACEMQ_TEST_URL, nor on whatever answers at localhost:15672.
func clusterName(t *testing.T, prefix string) string {
	return brokertest.UniqueNameOn(t, prefix, "/", managementURLs(t, clusterURLs(t))...)
}

// managementURLs are the nodes' management APIs: the AMQP URL's
// credentials, its port plus 10000 (as scripts/cluster.sh has them: 5681,
// 15681).
func managementURLs(t *testing.T, amqpURLs []string) []string {
	var out []string
	for _, a := range amqpURLs {
		u, err := url.Parse(a)
		if err != nil {
			t.Fatalf("ACEMQ_CLUSTER_URLS: %v", err)
		}
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			t.Fatalf("ACEMQ_CLUSTER_URLS: %s has no port", u.Redacted())
		}
		m := url.URL{Scheme: "http", User: u.User, Host: net.JoinHostPort(u.Hostname(), strconv.Itoa(port+10000))}
		out = append(out, m.String())
	}
	return out
}

// clusterURLs are the three nodes' AMQP URLs from ACEMQ_CLUSTER_URLS; the
// test fails without them (make chaos-cluster starts the cluster and sets it).
func clusterURLs(t *testing.T) []string {
	urls := strings.Fields(os.Getenv("ACEMQ_CLUSTER_URLS"))
	if len(urls) < 3 {
		t.Fatal("ACEMQ_CLUSTER_URLS must list the three nodes' AMQP URLs (make chaos-cluster starts the cluster and sets it)")
	}
	return urls
}

// The cluster runs' names are deleted on the cluster's own nodes (their
// management ports, AMQP port + 10000), the first that answers, and not
// through ACEMQ_TEST_MANAGEMENT_URL or the default localhost:15672. No
// cluster is needed: the nodes' management APIs are fakes.
func TestClusterNameCleansUpOnTheCluster(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]string{} // node -> requests
	fake := func(node string) int {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[node] = append(got[node], r.Method+" "+r.URL.EscapedPath())
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(s.Close)
		_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
		n, _ := strconv.Atoi(port)
		return n
	}
	// The first node is down: nothing listens on its management port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var urls []string
	for _, port := range []int{downPort, fake("c2"), fake("c3")} {
		if port <= 10000 {
			t.Fatalf("port %d has no AMQP port 10000 below it", port)
		}
		urls = append(urls, fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", port-10000))
	}
	t.Setenv("ACEMQ_CLUSTER_URLS", strings.Join(urls, " "))
	elsewhere := fake("the test broker")
	t.Setenv("ACEMQ_TEST_MANAGEMENT_URL", fmt.Sprintf("http://guest:guest@127.0.0.1:%d", elsewhere))

	var name string
	t.Run("run", func(t *testing.T) { name = clusterName(t, "acemq.chaos") })
	want := []string{"DELETE /api/queues/%2F/" + name, "DELETE /api/exchanges/%2F/" + name}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got["c2"]) != fmt.Sprint(want) || len(got) != 1 {
		t.Errorf("requests by node: %q; want only %q, on c2 (c1 is down)", got, want)
	}
}
