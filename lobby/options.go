package lobby

import (
	"time"

	"sirtommy/race"
)

// RaceOptions are what a player chooses for a private race or a challenge:
// the race's options (race.Choice, with its JSON names) and whether it is
// rated.
type RaceOptions struct {
	race.Choice
	// Rated asks for a rated race (private races are unrated unless asked).
	Rated bool `json:"rated,omitempty"`
}

// check validates the options (race.Choice: the one check of every
// client's options), writes the defaults of absent ones out, and returns
// the race options. allowDeal is false for public races (challenges),
// which may not name their deal.
func (o *RaceOptions) check(allowDeal bool) (race.Options, error) {
	c := o.Choice
	c.Public = !allowDeal
	opts, err := c.Options()
	if err != nil {
		return race.Options{}, err
	}
	if opts.Seats != race.MinSeats {
		// An invite or a challenge pairs two players.
		return race.Options{}, race.Errorf(race.CodeBadOptions, "seats: an invite or a challenge is a race of %d; make a race of more over the API", race.MinSeats)
	}
	opts.Public = false // the lobby decides who sees it
	opts.Unrated = !o.Rated
	limit, bestOf := int(opts.TimeLimit/time.Second), opts.BestOf
	o.Variant, o.TimeLimitSeconds, o.BestOf, o.Grade = opts.Variant, &limit, &bestOf, opts.Grade
	return opts, nil
}
