package sqlstore

import "time"

// MarkStatement is the statement Published runs for ids, for the tests of
// its plan.
func (s *Store) MarkStatement(ids []int64) (string, []any) {
	return s.markStatement(s.d.time(s.now()), ids)
}

// ClaimStatement is the statement an unordered Claim runs, and its
// arguments, for the tests of its plan.
func (s *Store) ClaimStatement(owner string, limit int) (string, []any) {
	now := s.now()
	return s.claim, []any{owner, s.d.time(now.Add(time.Minute)), 10, s.d.time(now), limit}
}
