package capability

import (
	"slices"
	"testing"

	"github.com/acemq-go/acemq/contract"
)

func TestRegister(t *testing.T) {
	every := List()
	if !slices.IsSorted(every) || !slices.Contains(every, contract.CapabilityPublisherConfirms) || slices.Contains(every, contract.CapabilityClaimCheck) {
		t.Fatalf("List() = %q, want every build's, sorted, and not claim-check, which this test does not link", every)
	}
	Register(contract.CapabilityClaimCheck)
	Register(contract.CapabilityClaimCheck)
	got := List()
	if want := slices.Sorted(slices.Values(append(every, contract.CapabilityClaimCheck))); !slices.Equal(got, want) {
		t.Errorf("after registering claim-check twice: %q, want %q", got, want)
	}
}
