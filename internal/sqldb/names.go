package sqldb

import "regexp"

// MaxIdentifier is PostgreSQL's longest name, in bytes: a longer one is
// cut, so that two tables' indexes could collide.
const MaxIdentifier = 63

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidTable says whether name is a table name the stores take unquoted:
// letters, digits and underscores, not starting with a digit, short enough
// that name+indexSuffix fits MaxIdentifier.
func ValidTable(name, indexSuffix string) bool {
	return identifier.MatchString(name) && len(name)+len(indexSuffix) <= MaxIdentifier
}
