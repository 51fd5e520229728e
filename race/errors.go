package race

import (
	"errors"
	"fmt"
)

// Error codes: stable strings that the protocol sends to clients.
const (
	CodeNotStarted  = "not-started"  // a move or resignation before the race runs
	CodeRaceOver    = "race-over"    // the race is finished or aborted
	CodeIllegalMove = "illegal-move" // the engine refused the move; Reason says why
	CodeBadToken    = "bad-token"    // the resume token is not one of this race's
	CodeRaceFull    = "race-full"    // both seats are taken
	CodeNoSuchRace  = "no-such-race" // no race has that id
	CodeBadOptions  = "bad-options"  // the race options are invalid
	CodeDraining    = "draining"     // the server is shutting down and starts no race
	CodeNotOver     = "not-over"     // a rematch asked for before the end, or during a match
	CodeInternal    = "internal"     // the server failed; nothing changed
	CodeUnavailable = "unavailable"  // the event log (Redis) cannot be reached; nothing changed, try again
)

// Error is a refusal with a stable code for the protocol and a sentence for
// people. A refused request changes nothing.
type Error struct {
	Code string
	// Reason refines the code: the engine's reason ("does-not-fit") for
	// illegal-move, or "bad-notation" for a move that is not notation.
	Reason  string
	Message string
	Err     error // the cause, if any
}

// Error is "code (reason): message".
func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Reason, e.Message)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an *Error with a code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns err's code, or CodeInternal if err is not an *Error.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
