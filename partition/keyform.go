package partition

import (
	"fmt"

	"github.com/acemq-go/acemq/contract"
)

// KeyForm is a form of a partition's routing key, or a set of forms: the
// family's libraries route to partition k of a set N under different keys
// (section 14 of the contract).
type KeyForm uint8

const (
	// JavaForm is "p<k>" on the exchange N: Java's OrderedQueue binds its
	// partition queues under it and publishes with it.
	JavaForm KeyForm = 1 << iota
	// DottedForm is "N.<k>" on the exchange N: the routing key the Go
	// peer's, Ruby's and Python's partition helpers compute (their
	// "base.<k>", with the set's name as the base).
	DottedForm
	// BothForms is every form, a set's default binding: a service of
	// any of those libraries reaches the set.
	BothForms = JavaForm | DottedForm
)

// String names the forms.
func (f KeyForm) String() string {
	switch f {
	case JavaForm:
		return "p<k>"
	case DottedForm:
		return "N.<k>"
	case BothForms:
		return "p<k> and N.<k>"
	}
	return fmt.Sprintf("KeyForm(%d)", uint8(f))
}

// key is partition k's routing key in the single form f of the set name.
func (f KeyForm) key(name string, k int) string {
	if f == DottedForm {
		return contract.PartitionDottedRoutingKey(name, k)
	}
	return contract.PartitionRoutingKey(k)
}

// bindForms are the forms s's queues are bound under, the default filled
// in.
func (s Set) bindForms() KeyForm {
	if s.BindForms == 0 {
		return BothForms
	}
	return s.BindForms
}

// publishForm is the form s's Publisher routes by, the default filled in:
// Java's when it is bound, since a set a Java service declared binds only
// that one; else the dotted form.
func (s Set) publishForm() KeyForm {
	switch {
	case s.PublishForm != 0:
		return s.PublishForm
	case s.bindForms()&JavaForm != 0:
		return JavaForm
	}
	return DottedForm
}

// validateForms says what is wrong with s's forms: an unknown one, or a
// publisher routing by a form the queues are not bound under (every
// message would be unroutable).
func (s Set) validateForms() error {
	bind, pub := s.bindForms(), s.publishForm()
	switch {
	case bind&^BothForms != 0:
		return fmt.Errorf("partition: %s binds %s; want JavaForm, DottedForm or both", s.Name, bind)
	case pub != JavaForm && pub != DottedForm:
		return fmt.Errorf("partition: %s publishes as %s; want one form, JavaForm or DottedForm", s.Name, pub)
	case bind&pub == 0:
		return fmt.Errorf("partition: %s publishes as %s but binds only %s: every message would be unroutable", s.Name, pub, bind)
	}
	return nil
}
