package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/idempotency"
)

// lookupsPerClaim is how many times a claim may find its row gone between
// its write and its read (forgotten, pruned) before that is its error.
const lookupsPerClaim = 3

// fly makes one flight's writes (groupcommit.go): its claims and confirms
// in one upsert, its forgets in one delete, then one read of the rows its
// claims found held. Each statement commits on its own and answers its
// callers; the claims whose rows vanished before the read are returned,
// to be made again.
func (s *Store) fly(ctx context.Context, ops []*op) (again []*op) {
	var writes, forgets, held []*op
	for _, o := range ops {
		if o.kind == opForget {
			forgets = append(forgets, o)
		} else {
			writes = append(writes, o)
		}
	}
	s.each(ctx, writes, func(ops []*op) error {
		h, err := s.upsert(ctx, ops)
		held = append(held, h...)
		return err
	})
	s.each(ctx, forgets, func(ops []*op) error { return s.forgetAll(ctx, ops) })
	s.each(ctx, held, func(ops []*op) error {
		a, err := s.lookUp(ctx, ops)
		again = append(again, a...)
		return err
	})
	return again
}

// each runs stmt on ops. If it fails, it runs it on each op alone, so that
// an error one op's data causes (a key the database refuses) is that op's
// only; unless ctx has ended, when it is every op's.
func (s *Store) each(ctx context.Context, ops []*op, stmt func([]*op) error) {
	if len(ops) == 0 {
		return
	}
	err := stmt(ops)
	switch {
	case err == nil:
	case len(ops) == 1 || ctx.Err() != nil:
		for _, o := range ops {
			o.answer(0, fmt.Errorf("idempotency: %s %q in table %s: %w", verbs[o.kind], o.key, s.table, err))
		}
	default:
		for _, o := range ops {
			s.each(ctx, []*op{o}, stmt)
		}
	}
}

var verbs = map[opKind]string{opClaim: "claim", opConfirm: "confirm", opForget: "forget"}

// upsert claims and confirms ops' keys in one statement, and answers the
// confirms and the claims it made; it returns the claims whose keys are
// held (unexpired rows), which lookUp answers. Its rows are in key order,
// so that two stores' statements lock rows in the same order.
func (s *Store) upsert(ctx context.Context, ops []*op) (held []*op, err error) {
	slices.SortFunc(ops, func(a, b *op) int { return strings.Compare(a.key, b.key) })
	now := s.now()
	args := make([]any, 0, 5*len(ops))
	values := make([]string, len(ops))
	for i, o := range ops {
		state, owner := contract.IdempotencyClaimed, any(o.owner)
		if o.kind == opConfirm {
			state, owner = contract.IdempotencyConfirmed, nil // a confirm keeps the claim's owner
		}
		values[i] = s.params(len(args), 5)
		args = append(args, o.key, state, owner, s.d.time(now), s.d.time(now.Add(o.d)))
	}
	rows, err := s.db.QueryContext(ctx, s.upsertHead+strings.Join(values, ", ")+s.upsertTail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	written := make(map[string]bool, len(ops))
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, err
		}
		written[key] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	for _, o := range ops {
		switch {
		case o.kind == opConfirm:
			o.answer(0, nil)
		case written[o.key]:
			o.answer(idempotency.Claimed, nil)
		default:
			held = append(held, o)
		}
	}
	return held, nil
}

// forgetAll deletes ops' claims, each only if its owner still holds it.
func (s *Store) forgetAll(ctx context.Context, ops []*op) error {
	args := make([]any, 0, 2*len(ops))
	match := make([]string, len(ops))
	for i, o := range ops {
		match[i] = "(message_id = " + s.d.param(len(args)+1) + " AND claimed_by = " + s.d.param(len(args)+2) + ")"
		args = append(args, o.key, o.owner)
	}
	if _, err := s.db.ExecContext(ctx, s.forgetHead+strings.Join(match, " OR ")+")", args...); err != nil {
		return err
	}
	for _, o := range ops {
		o.answer(0, nil)
	}
	return nil
}

// lookUp reads the rows of claims that found their keys held, and answers
// each with what holds it: Confirmed or InProgress. A claim whose row has
// gone since is returned, to be made again.
func (s *Store) lookUp(ctx context.Context, ops []*op) (again []*op, err error) {
	args := make([]any, len(ops))
	for i, o := range ops {
		args[i] = o.key
	}
	rows, err := s.db.QueryContext(ctx, s.lookUpHead+s.params(0, len(ops)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[string]error, len(ops))
	states := make(map[string]string, len(ops))
	for rows.Next() {
		var key, state string
		var owner sql.NullString
		var expires any
		if err := rows.Scan(&key, &state, &owner, &expires); err != nil {
			return nil, err
		}
		if _, err := decodeRecord(s.d, state, owner, expires); err != nil {
			found[key] = fmt.Errorf("%w: the row of %q in table %s: %w", ErrBadRow, key, s.table, err)
			continue
		}
		found[key], states[key] = nil, state
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	for _, o := range ops {
		err, ok := found[o.key]
		switch {
		case err != nil:
			o.answer(0, err)
		case ok && states[o.key] == contract.IdempotencyConfirmed:
			o.answer(idempotency.Confirmed, nil)
		case ok:
			o.answer(idempotency.InProgress, nil)
		case o.lookups+1 < lookupsPerClaim:
			o.lookups++
			again = append(again, o)
		default:
			o.answer(0, fmt.Errorf("idempotency: claim %q in table %s: its row kept changing", o.key, s.table))
		}
	}
	return again, nil
}

// params is n parameters from the one after the first (numbered on
// PostgreSQL), in parentheses: "(?, ?)", "($3, $4)".
func (s *Store) params(first, n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = s.d.param(first + i + 1)
	}
	return "(" + strings.Join(p, ", ") + ")"
}
