package sqlstore

// MarkStatement is the statement Published runs for ids, for the tests of
// its plan.
func (s *Store) MarkStatement(ids []int64) (string, []any) {
	return s.markStatement(s.d.time(s.now()), ids)
}
