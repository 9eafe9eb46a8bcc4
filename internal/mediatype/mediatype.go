// Package mediatype matches a message's content type against the types a
// codec reads, as the AceMQ family compares them (section 8 of the
// contract): without parameters and ignoring case.
package mediatype

import (
	"errors"
	"mime"
	"slices"
	"strings"
)

// Of is contentType's media type, lower case, without its parameters; ""
// for a missing or unparsable one. A bad parameter still yields the type,
// since parameters are ignored.
func Of(contentType string) string {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return ""
	}
	return mediaType
}

// Matches reports whether contentType is one of types (lower case) or a
// type/subtype whose subtype ends with suffix ("+yaml") after something
// else. A message without a content type matches nothing.
func Matches(contentType string, types []string, suffix string) bool {
	mediaType := Of(contentType)
	if mediaType == "" {
		return false
	}
	if slices.Contains(types, mediaType) {
		return true
	}
	top, subtype, ok := strings.Cut(mediaType, "/")
	return ok && top != "" && len(subtype) > len(suffix) && strings.HasSuffix(subtype, suffix)
}

// Readable says what Matches(_, types, suffix) accepts, for a codec's
// Readable: the consumer's refusal of a content type quotes it.
func Readable(types []string, suffix string) string {
	return "it reads " + strings.Join(types, ", ") + ", */*" + suffix + "; not a message without a content type"
}
