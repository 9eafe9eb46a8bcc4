package contract

// Health and lifecycle conventions (section 21), from the family's
// framework integrations and the Go peer's and Ruby's health checks.
const (
	// HealthDetailBlocked is the family's detail for a connection the
	// broker has blocked (a memory or disk alarm), which is up: written
	// word for word, since alert rules match it. The Go peer, Ruby and the
	// Spring starter write it; this library appends ": <reason>" as the Go
	// peer does (BlockedDetail).
	HealthDetailBlocked = "the broker has blocked this connection; publishing is paused"
	// HealthPartBlocked and HealthPartBlockedReason stand beside the parts
	// of the health JSON, as the Go peer writes them: parts.blocked (true
	// or false) and parts.blockedReason (the broker's, while blocked).
	HealthPartBlocked       = "blocked"
	HealthPartBlockedReason = "blockedReason"
	// ExitDrainTimeout is the exit code of a service whose drain ran out
	// of time (EX_TEMPFAIL), as the family's Rails consumer command exits.
	ExitDrainTimeout = 75
)

// BlockedDetail is the detail of a blocked connection: HealthDetailBlocked,
// then ": <reason>" when the broker gave one (the Go peer's form).
func BlockedDetail(reason string) string {
	if reason == "" {
		return HealthDetailBlocked
	}
	return HealthDetailBlocked + ": " + reason
}
