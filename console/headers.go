package console

import (
	"maps"
	"strings"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// withoutDeath is h without x-death, which a page shows on its own
// (deathLines), so that it is shown once.
func withoutDeath(h transport.Table) transport.Table {
	if _, ok := h[contract.HeaderDeath]; !ok {
		return h
	}
	out := maps.Clone(h)
	delete(out, contract.HeaderDeath)
	return out
}

// deathLines renders x-death one death a line, newest first as RabbitMQ
// keeps them.
func deathLines(v any) string {
	deaths, ok := v.([]any)
	if !ok {
		return transport.FormatTable(transport.Table{contract.HeaderDeath: v})
	}
	lines := make([]string, len(deaths))
	for i, d := range deaths {
		if t, ok := d.(transport.Table); ok {
			lines[i] = transport.FormatTable(t)
		} else {
			lines[i] = transport.FormatTable(transport.Table{"": d})
		}
	}
	return contract.HeaderDeath + " (newest first):\n" + strings.Join(lines, "\n")
}
