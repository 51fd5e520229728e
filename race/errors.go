package race

import (
	"errors"
	"fmt"
)

// Code is an error's stable code, as the protocol sends it to clients
// (PROTOCOL.md lists them all). The lobby and the web layer add their own.
type Code string

// Error codes: stable strings that the protocol sends to clients.
const (
	CodeNotStarted  Code = "not-started"   // a move or resignation before the race runs
	CodeRaceOver    Code = "race-over"     // the race is finished or aborted
	CodeIllegalMove Code = "illegal-move"  // the engine refused the move; Reason says why
	CodeBadToken    Code = "bad-token"     // the resume token is not one of this race's
	CodeNotYourSeat Code = "not-your-seat" // the seat is reserved for another player of the lobby
	CodeRaceFull    Code = "race-full"     // every seat is taken
	CodeNoSuchRace  Code = "no-such-race"  // no race has that id
	CodeBadOptions  Code = "bad-options"   // the race options are invalid
	CodeDraining    Code = "draining"      // the server is shutting down and starts no race
	CodeNotOver     Code = "not-over"      // a rematch asked for before the end, or during a match
	CodeInternal    Code = "internal"      // the server failed; nothing changed
	CodeUnavailable Code = "unavailable"   // the event log (Redis) cannot be reached; nothing changed, try again
	CodeNoBerserk   Code = "no-berserk"    // berserk in a race without it (only an arena's races have it)
	CodeBerserkLate Code = "berserk-late"  // berserk after the countdown
)

// Error is a refusal with a stable code for the protocol and a sentence for
// people. A refused request changes nothing.
type Error struct {
	Code Code
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
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an *Error with a code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns err's code: an *Error's own; CodeUnavailable for a
// failure of the storage (an error wrapping ErrUnavailable: try again);
// CodeInternal for any other error; "" for nil.
func ErrorCode(err error) Code {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, ErrUnavailable):
		return CodeUnavailable
	}
	return CodeInternal
}

// IsRefusal reports whether err is (or wraps) an *Error: a refusal with
// its own code, rather than a failure of something underneath.
func IsRefusal(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
