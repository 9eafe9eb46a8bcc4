// Package kept is a bounded cache for values built once per key and read
// on every message: a map copied on write, so that a reader finds a value
// with one map read and no lock. Keys are meant to be a bounded set
// (queues, exchanges); past Limit a value is built for its caller alone.
package kept

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Map keeps values by key. Its zero value keeps none: set Limit. It must
// not be copied after first use.
type Map[K comparable, V any] struct {
	Limit int
	mu    sync.Mutex // serialises the writers
	m     atomic.Pointer[map[K]V]
}

// Get is the value kept by key, made by build the first time.
func (k *Map[K, V]) Get(key K, build func(K) V) V {
	if m := k.m.Load(); m != nil {
		if v, ok := (*m)[key]; ok {
			return v
		}
	}
	v := build(key)
	k.mu.Lock()
	defer k.mu.Unlock()
	old := map[K]V{}
	if m := k.m.Load(); m != nil {
		if kept, ok := (*m)[key]; ok { // another writer was first
			return kept
		}
		old = *m
	}
	if len(old) < k.Limit {
		m := maps.Clone(old)
		m[key] = v
		k.m.Store(&m)
	}
	return v
}
