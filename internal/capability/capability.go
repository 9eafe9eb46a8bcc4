// Package capability keeps the list of what a build offers, for the info
// endpoint (package actuator): a package that brings a capability, such as
// request, says so from its init when it is linked, as image formats and
// database drivers register themselves, so that the list is the build's
// and no package has to import the actuator.
package capability

import (
	"slices"
	"sync"

	"github.com/acemq-go/acemq/contract"
)

var (
	mu   sync.Mutex
	have = []contract.Capability{
		contract.CapabilityPublisherConfirms, contract.CapabilityRetryLadder,
		contract.CapabilityAtLeastOnceRungs, contract.CapabilityDeadLetterQueues,
	}
)

// Register adds c to the build's capabilities; registering one twice adds
// it once.
func Register(c contract.Capability) {
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(have, c) {
		have = append(have, c)
	}
}

// List is the build's capabilities, sorted.
func List() []contract.Capability {
	mu.Lock()
	defer mu.Unlock()
	list := slices.Clone(have)
	slices.Sort(list)
	return list
}
