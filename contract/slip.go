package contract

import "strings"

// Routing slips and pipelines (section 13). The step form's headers
// (HeaderRoute, HeaderRoutePosition, HeaderRouteID) are with the envelope's.
const (
	// HeaderRoutingSlip carries a routing slip in its JSON form, as the Go,
	// Python and Ruby libraries write it:
	// {"steps":[{"exchange":…,"routingKey":…,"name":…}],"done":[{…,"completedAt":…}]}.
	// It is an application header: a handler sees it among its headers.
	HeaderRoutingSlip = "acemq-routing-slip"
	// RoutingSlipCompletedAtLayout is how a done step's completedAt is
	// written: RFC 3339 UTC to the second.
	RoutingSlipCompletedAtLayout = "2006-01-02T15:04:05Z"
)

// JoinRoute writes the step names of a slip's step form as x-acemq-route
// carries them: comma-joined.
func JoinRoute(steps []string) string { return strings.Join(steps, ",") }

// SplitRoute reads an x-acemq-route into its step names, each trimmed of
// surrounding spaces; empty names are kept, so that positions still match.
func SplitRoute(route string) []string {
	steps := strings.Split(route, ",")
	for i, s := range steps {
		steps[i] = strings.TrimSpace(s)
	}
	return steps
}

// PipelineQueue names the queue of step of pipeline: "P.S", bound to the
// pipeline's exchange P (direct) under S.
func PipelineQueue(pipeline, step string) string { return pipeline + "." + step }
