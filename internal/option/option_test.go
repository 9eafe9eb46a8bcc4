package option

import (
	"errors"
	"testing"
)

type config struct{ n int }

type opt struct{ s Setting[config] }

func (o opt) setting() Setting[config] { return o.s }

// Apply applies in order, names each option in its problem, joins them all,
// and refuses a nil or zero option instead of calling it.
func TestApply(t *testing.T) {
	set := func(n int) opt {
		return opt{Named("WithN", func(c *config) error {
			if n < 0 {
				return errors.New("below 0")
			}
			c.n = n
			return nil
		})}
	}
	var c config
	if err := Apply(&c, []opt{set(1), set(2)}, opt.setting); err != nil || c.n != 2 {
		t.Errorf("Apply = %v, n = %d; want nil, 2 (the last wins)", err, c.n)
	}
	err := Apply(&c, []any{set(-1), opt{}, nil}, func(o any) Setting[config] { return o.(opt).s })
	want := "WithN: below 0\nthe zero option: build options with the With functions\n" +
		"a nil option: build options with the With functions"
	if err == nil || err.Error() != want {
		t.Errorf("Apply = %v; want %q", err, want)
	}
}

// ApplyFuncs stops at the first error and refuses a nil option.
func TestApplyFuncs(t *testing.T) {
	type fn func(*config) error
	var c config
	calls := 0
	count := fn(func(c *config) error { calls++; c.n = calls; return nil })
	fail := fn(func(*config) error { return errors.New("no") })
	if err := ApplyFuncs(&c, []fn{count, count}); err != nil || c.n != 2 {
		t.Errorf("ApplyFuncs = %v, n = %d; want nil, 2", err, c.n)
	}
	if err := ApplyFuncs(&c, []fn{fail, count}); err == nil || err.Error() != "no" || calls != 2 {
		t.Errorf("ApplyFuncs = %v after %d calls; want the first error, nothing applied after it", err, calls)
	}
	if err := ApplyFuncs(&c, []fn{nil}); !errors.Is(err, ErrNil) {
		t.Errorf("ApplyFuncs(nil) = %v; want ErrNil", err)
	}
}
