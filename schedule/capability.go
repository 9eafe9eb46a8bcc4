package schedule

import (
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/capability"
)

// A build that links this package says so at /acemq-info (package actuator).
func init() { capability.Register(contract.CapabilityScheduler) }
