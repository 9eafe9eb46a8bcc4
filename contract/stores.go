package contract

// The default tables of the SQL stores that services sharing a database
// share (section 16). The family names the schema registry's table three
// ways (Java, Ruby and Python acemq_schema_registry, the other Go library
// acemq_schemas, .NET acemq_schema); this library takes the majority's. The
// columns differ across the family, so a table is shared with this
// library's own registries only.
const (
	DefaultSchemaRegistryTable = "acemq_schema_registry"
)
