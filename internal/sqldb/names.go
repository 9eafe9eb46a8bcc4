package sqldb

// MaxIdentifier is PostgreSQL's longest name, in bytes: a longer one is
// cut, so that two tables' indexes could collide.
const MaxIdentifier = 63
