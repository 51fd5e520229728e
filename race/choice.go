package race

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"sirtommy/engine"
)

// Bounds on what a client may choose for a race (Choice).
const (
	// MaxTimeLimit is the longest race a client may ask for: longer ones
	// tie up two players and the server's memory for nothing.
	MaxTimeLimit = time.Hour
	// MaxBestOf is the longest match: more rounds tie up two players for
	// an hour or more.
	MaxBestOf = 9
	// MinSeats and MaxSeats bound a race's racers: two is a duel, ten a
	// room's field (more and the standings no longer fit a phone).
	MinSeats = 2
	MaxSeats = 10
	// MinComputerPace is the computer's fastest pace: faster is no game
	// for a person.
	MinComputerPace = 100 * time.Millisecond
	// MaxComputerPace is its slowest: slower runs into the time limit
	// before a deal is played out.
	MaxComputerPace = time.Minute
	// DefaultComputerPace is its pace when none is asked for: about a
	// person's.
	DefaultComputerPace = 2 * time.Second
)

// Choice is what a client chooses for a race, as the protocol carries it:
// the body of POST /api/races and the options of the lobby's invite and
// challenge. A nil (or empty) field is absent and takes the default; a
// present one must be in range, an explicit 0 included: Validate refuses
// it with bad-options and a sentence naming the field and its range. It
// is the one place those ranges are checked.
//
// It is the one definition of those options: the lobby's (RaceOptions),
// the websocket's and the API's bodies embed it, so that its JSON names
// are theirs. Public is set by the server from what each protocol
// carries elsewhere, never read from it.
type Choice struct {
	// Variant is the engine variant's name; "" is the default.
	Variant string `json:"variant,omitempty"`
	// TimeLimitSeconds is from 1 to MaxTimeLimit; absent: DefaultTimeLimit.
	TimeLimitSeconds *int `json:"timeLimitSeconds,omitempty"`
	// BestOf is odd, from 1 to MaxBestOf; absent: 1. A match is between
	// two racers.
	BestOf *int `json:"bestOf,omitempty"`
	// Seats is the number of racers, from MinSeats to MaxSeats; absent: 2.
	Seats *int `json:"seats,omitempty"`
	// Deal names the deal, in decimal (a uint64), in private races only;
	// "" is a secret random deal.
	Deal string `json:"deal,omitempty"`
	// Grade draws the secret deal among the engine's graded deals of that
	// grade: "easy", "medium" or "hard"; "" is any deal. Only where the
	// variant's deals are graded, and not with a named Deal.
	Grade string `json:"grade,omitempty"`
	// Public races are listed and may not name their deal.
	Public bool `json:"-"`
}

// badOption is the refusal of one field.
func badOption(format string, args ...any) *Error {
	return Errorf(CodeBadOptions, format, args...)
}

// Validate refuses a choice with a field out of range (CodeBadOptions).
func (c Choice) Validate() error {
	if _, err := engine.Variant(c.Variant); err != nil {
		return &Error{Code: CodeBadOptions, Message: fmt.Sprintf("variant %q is unknown: it must be one of %s", c.Variant, strings.Join(engine.VariantNames(), ", ")), Err: err}
	}
	if v := c.TimeLimitSeconds; v != nil && (*v < 1 || *v > int(MaxTimeLimit/time.Second)) {
		return badOption("timeLimitSeconds must be from 1 to %d, not %d", int(MaxTimeLimit/time.Second), *v)
	}
	if v := c.BestOf; v != nil && (*v < 1 || *v > MaxBestOf || *v%2 == 0) {
		return badOption("bestOf must be odd, from 1 to %d, not %d", MaxBestOf, *v)
	}
	if v := c.Seats; v != nil && (*v < MinSeats || *v > MaxSeats) {
		return badOption("seats must be from %d to %d, not %d", MinSeats, MaxSeats, *v)
	}
	if c.Seats != nil && *c.Seats > MinSeats && c.BestOf != nil && *c.BestOf > 1 {
		return badOption("bestOf: a match is between two racers; a race of %d seats is one race", *c.Seats)
	}
	if c.Deal != "" {
		if c.Public {
			return badOption("deal: a public race's deal is secret; only private races name one")
		}
		if _, err := ParseDeal(c.Deal); err != nil {
			return err
		}
	}
	if c.Grade != "" {
		if c.Deal != "" {
			return badOption("grade: a named deal has no grade to draw from; name a deal or ask for a grade, not both")
		}
		rules, _ := engine.Variant(c.Variant) // checked above
		if _, err := gradedDeals(rules.Name, c.Grade); err != nil {
			return err
		}
	}
	return nil
}

// ParseDeal reads a deal number in decimal (CodeBadOptions otherwise).
func ParseDeal(s string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, badOption("deal must be a decimal number from 0 to %d, not %q", uint64(1<<64-1), s)
	}
	return n, nil
}

// Options validates the choice and makes the race options it asks for,
// with the defaults for absent fields written out. Options the server
// sets (Grace, SpectatorDelay, Unrated) are left for the caller.
func (c Choice) Options() (Options, error) {
	if err := c.Validate(); err != nil {
		return Options{}, err
	}
	rules, _ := engine.Variant(c.Variant) // validated
	o := Options{Variant: rules.Name, Public: c.Public, TimeLimit: DefaultTimeLimit, BestOf: 1, Seats: MinSeats, Grade: strings.ToLower(c.Grade)}
	if c.TimeLimitSeconds != nil {
		o.TimeLimit = time.Duration(*c.TimeLimitSeconds) * time.Second
	}
	if c.BestOf != nil {
		o.BestOf = *c.BestOf
	}
	if c.Seats != nil {
		o.Seats = *c.Seats
	}
	if c.Deal != "" {
		o.Deal, _ = ParseDeal(c.Deal) // validated
		o.DealNamed = true
	}
	return o, nil
}

// ComputerPaceOf is the pace a computer player is asked for in
// milliseconds (field names it in the refusal): from MinComputerPace to
// MaxComputerPace, DefaultComputerPace when absent (nil).
func ComputerPaceOf(field string, ms *int) (time.Duration, error) {
	if ms == nil {
		return DefaultComputerPace, nil
	}
	if lo, hi := int(MinComputerPace/time.Millisecond), int(MaxComputerPace/time.Millisecond); *ms < lo || *ms > hi {
		return 0, badOption("%s must be from %d to %d, not %d", field, lo, hi, *ms)
	}
	return time.Duration(*ms) * time.Millisecond, nil
}
