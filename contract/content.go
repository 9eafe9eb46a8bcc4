package contract

// The content types the built-in codecs write (section 8).
const (
	ContentTypeJSON  = "application/json"
	ContentTypeText  = "text/plain; charset=utf-8"
	ContentTypeBytes = "application/octet-stream"
)

// Content types read as well as the written ones (section 8): JSON is also
// text/json and any */*+json; text is any text/*.
const (
	ContentTypeTextJSON   = "text/json"
	ContentTypeJSONSuffix = "+json"
	ContentTypeTextPrefix = "text/"
)
