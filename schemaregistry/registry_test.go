package schemaregistry_test

import (
	"errors"
	"testing"

	"github.com/acemq-go/acemq/schemaregistry"
)

// Ids from 1, one per definition, and an unknown id named in its error.
func TestMemory(t *testing.T) {
	var r schemaregistry.Memory
	ctx := t.Context()
	a, err := r.Register(ctx, `{"type":"string"}`)
	if err != nil || a != 1 {
		t.Fatalf("first Register = %d, %v; want 1", a, err)
	}
	b, _ := r.Register(ctx, `{"type":"long"}`)
	again, _ := r.Register(ctx, `{"type":"string"}`)
	if b != 2 || again != 1 {
		t.Errorf("ids %d then %d, want 2 and 1 again", b, again)
	}
	if def, err := r.Schema(ctx, 2); err != nil || def != `{"type":"long"}` {
		t.Errorf("Schema(2) = %q, %v", def, err)
	}
	for _, id := range []uint32{0, 3} {
		if _, err := r.Schema(ctx, id); !errors.Is(err, schemaregistry.ErrUnknownSchema) {
			t.Errorf("Schema(%d) = %v, want ErrUnknownSchema", id, err)
		}
	}
	if _, err := r.Schema(ctx, 7); err == nil || err.Error() != "schema registry: unknown schema id 7" {
		t.Errorf("Schema(7) = %v; want the id named", err)
	}
}
