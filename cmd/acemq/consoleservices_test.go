package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/console"
)

// --service NAME=URL names a service's actuator for the Consumers page,
// each with the one control token; anything else is refused before
// anything starts.
func TestConsoleServiceFlags(t *testing.T) {
	got, err := parseServices([]string{"orders=http://127.0.0.1:9464", "billing=https://billing.internal:9464"}, "tok")
	want := []console.Service{{Name: "orders", URL: "http://127.0.0.1:9464", Token: "tok"}, {Name: "billing", URL: "https://billing.internal:9464", Token: "tok"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseServices = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"orders", "=http://127.0.0.1:9464", "orders="} {
		if _, err := parseServices([]string{bad}, ""); err == nil || !strings.Contains(err.Error(), "want NAME=URL") {
			t.Errorf("--service %q: %v, want an error asking for NAME=URL", bad, err)
		}
	}
}
