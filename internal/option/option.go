// Package option is what the options of every AceMQ constructor share: a
// name to put in errors and the setting it makes. Each package types its
// options per constructor (acemq.ConsumeOption, request.ClientOption...)
// as interfaces whose unexported method hands back a Setting, so that an
// option given to the wrong constructor does not compile; this package
// applies them and words their errors one way.
package option

import (
	"errors"
	"fmt"
)

// Setting is one option: its name and what it sets in a configuration C.
type Setting[C any] struct {
	name string
	set  func(*C) error
}

// Named is the option name, setting c with set; set's error is the
// option's problem with its value.
func Named[C any](name string, set func(c *C) error) Setting[C] {
	return Setting[C]{name: name, set: set}
}

// Apply applies each of opts to c, in order, through setting, and joins
// every problem into one error, each naming its option. A nil option, or
// the zero value of an option type (one not made by its With function),
// is a problem too, never a panic.
func Apply[C, O any](c *C, opts []O, setting func(O) Setting[C]) error {
	var errs []error
	for _, opt := range opts {
		if any(opt) == nil {
			errs = append(errs, errors.New("a nil option: build options with the With functions"))
			continue
		}
		if s := setting(opt); s.set == nil {
			errs = append(errs, errors.New("the zero option: build options with the With functions"))
		} else if err := s.set(c); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
	}
	return errors.Join(errs...)
}

// ApplyFuncs applies each of opts to c, in order, for a package whose one
// constructor takes options that are functions (func(*C) error): the
// first error stops it, and a nil option is an error, never a call of nil.
func ApplyFuncs[C any, O ~func(*C) error](c *C, opts []O) error {
	for _, opt := range opts {
		if opt == nil {
			return ErrNil
		}
		if err := opt(c); err != nil {
			return err
		}
	}
	return nil
}

// ErrNil is ApplyFuncs's error for a nil option.
var ErrNil = errors.New("a nil Option")
