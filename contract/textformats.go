package contract

// The content types the YAML, TOML and XML codecs write and read (section
// 8). Each also reads any type whose subtype ends with its suffix
// (application/vnd.acme.order+yaml), and none claims a message without a
// content type.
const (
	ContentTypeYAML       = "application/yaml"
	ContentTypeXYAML      = "application/x-yaml"
	ContentTypeTextYAML   = "text/yaml"
	ContentTypeTextXYAML  = "text/x-yaml"
	ContentTypeYAMLSuffix = "+yaml"

	ContentTypeTOML       = "application/toml"
	ContentTypeTextTOML   = "text/toml"
	ContentTypeTOMLSuffix = "+toml"

	ContentTypeXML       = "application/xml"
	ContentTypeTextXML   = "text/xml"
	ContentTypeXMLSuffix = "+xml"
)

// XMLMapRoot is the root element of a map written as XML, as the Ruby and
// Python libraries name theirs; a struct's root is its XML name (its
// XMLName field, or its type's name), as Java writes the class's simple
// name.
const XMLMapRoot = "message"
