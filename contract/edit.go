package contract

// The edit headers record that an operator edited a dead-lettered message
// before retrying it (the console's edit and retry). CONTRACT.md has no
// convention for them: they are this library's extension, application
// headers like the replay headers of section 6 (a handler sees them), and
// written beside them, since an edited retry is a replay too.
const (
	// HeaderEditedAt is when the edit was retried, written as
	// acemq-replayed-at is (ReplayedAtLayout).
	HeaderEditedAt = "acemq-edited-at"
	// HeaderEditedBy names who edited the message (the console's user),
	// omitted when not known.
	HeaderEditedBy = "acemq-edited-by"
	// HeaderEditedParts says what was changed: EditedBody, EditedHeaders,
	// or both, comma-separated, in that order.
	HeaderEditedParts = "acemq-edited"
	// HeaderEditCount is how many times the message has been edited,
	// an integer from 1.
	HeaderEditCount = "acemq-edit-count"
	// HeaderOriginalBodySHA256 is the SHA-256 (lowercase hex) of the body
	// before its latest edit, to match the edited copy with an export of
	// the original.
	HeaderOriginalBodySHA256 = "acemq-original-body-sha256"
)

// The parts an edit may change, as HeaderEditedParts lists them.
const (
	EditedBody    = "body"
	EditedHeaders = "headers"
)
