package race

// The refusals a seat's request meets, the same wherever the seat is
// played (on the race's instance, or by its holder on another: held.go).

import (
	"errors"
	"fmt"

	"sirtommy/engine"
)

// gameOverError refuses a request of a seat whose game g is over.
func gameOverError(g *engine.Game) *Error {
	return &Error{Code: CodeIllegalMove, Reason: engine.ReasonGameOver.String(),
		Message: fmt.Sprintf("your game is already over (%s)", g.Status())}
}

// berserkUpError refuses a move of a berserk racer whose half of the
// race's time is up.
func berserkUpError() *Error {
	return &Error{Code: CodeIllegalMove, Reason: engine.ReasonGameOver.String(), Message: "your time is up: you went berserk, for half the race's time"}
}

// illegalMoveError is the refusal of a move the engine did not take.
func illegalMoveError(err error) *Error {
	var ill *engine.IllegalMoveError
	if errors.As(err, &ill) {
		return &Error{Code: CodeIllegalMove, Reason: ill.Reason.String(), Message: ill.Detail, Err: err}
	}
	return &Error{Code: CodeInternal, Message: "the engine failed", Err: err}
}

// storageRefusal is the refusal of a move or resignation (what) that the
// event log did not take, wrapped its error: after the race's end, race
// over; any storage failure, unavailable (the race is unchanged, and the
// same request may be sent again).
func storageRefusal(what string, err, wrapped error) *Error {
	switch {
	case errors.Is(err, ErrRaceEnded):
		// The race's end sealed the log, wherever it was decided: the
		// move is not the race's.
		return &Error{Code: CodeRaceOver, Message: "the race is over: the " + what + " came after its end", Err: wrapped}
	case errors.Is(err, ErrUnavailable):
		// Rarely the log stored it and only the answer was lost: sent
		// again with the same id, it is answered as stored (see Move).
		return &Error{Code: CodeUnavailable, Message: "the " + what + " may not have been recorded: storage is unavailable; send it again shortly, with the same id", Err: wrapped}
	}
	return &Error{Code: CodeUnavailable, Message: "the " + what + " could not be recorded: storage failed; send it again shortly, with the same id", Err: wrapped}
}
