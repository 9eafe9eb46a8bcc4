package sqldb

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Options are what every SQL store's constructor takes. Each store
// package names its own option type over them (func(*sqldb.Options)
// error), so that the compiler refuses one store's option to another, and
// builds its options from the constructors here, so that a bad value is
// the constructor's error, naming the option.
type Options struct {
	Table string
	Owned bool             // Close closes the database too
	Now   func() time.Time // the store's clock
}

// Apply applies opts over defaults, in order; the first error is returned
// as New's, prefixed by what ("outbox").
func Apply[O ~func(*Options) error](what string, defaults Options, opts []O) (Options, error) {
	o := defaults
	for _, opt := range opts {
		if opt == nil {
			return Options{}, fmt.Errorf("%s: New: an option is nil", what)
		}
		if err := opt(&o); err != nil {
			return Options{}, fmt.Errorf("%s: New: %w", what, err)
		}
	}
	return o, nil
}

var (
	identifier          = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	qualifiedIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
)

// WithTable names the table: letters, digits and underscores, not starting
// with a digit, short enough that name+indexSuffix, its index, fits
// MaxIdentifier.
func WithTable(name, indexSuffix string) func(*Options) error {
	return func(o *Options) error {
		if !identifier.MatchString(name) || len(name)+len(indexSuffix) > MaxIdentifier {
			return fmt.Errorf("WithTable(%q): use at most %d letters, digits and underscores, not starting with a digit",
				name, MaxIdentifier-len(indexSuffix))
		}
		o.Table = name
		return nil
	}
}

// WithQualifiedTable names a table that has no index named after it, so
// that a schema may qualify it ("registry.schemas").
func WithQualifiedTable(name string) func(*Options) error {
	return func(o *Options) error {
		if !qualifiedIdentifier.MatchString(name) {
			return fmt.Errorf("WithTable(%q): use letters, digits and underscores (optionally schema.table)", name)
		}
		o.Table = name
		return nil
	}
}

// WithClock sets the store's time.
func WithClock(now func() time.Time) func(*Options) error {
	return func(o *Options) error {
		if now == nil {
			return errors.New("WithClock: the clock is nil")
		}
		o.Now = now
		return nil
	}
}

// OwnDB makes the store's Close close its database too.
func OwnDB() func(*Options) error {
	return func(o *Options) error {
		o.Owned = true
		return nil
	}
}
