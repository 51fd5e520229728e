package lobby

import (
	"time"

	"sirtommy/race"
)

// RaceOptions are what a player chooses for a private race or a challenge.
type RaceOptions struct {
	Variant string `json:"variant,omitempty"`
	// TimeLimitSeconds and BestOf are absent (nil) for the defaults; a
	// present value must be in range (race.Choice), 0 included.
	TimeLimitSeconds *int `json:"timeLimitSeconds,omitempty"`
	BestOf           *int `json:"bestOf,omitempty"`
	// Deal names the deal (private races only; decimal); empty means a
	// secret deal.
	Deal string `json:"deal,omitempty"`
	// Rated asks for a rated race (private races are unrated unless asked).
	Rated bool `json:"rated,omitempty"`
	// Grade draws the secret deal among deals of a grade ("easy",
	// "medium", "hard"; race.Choice); empty is any deal.
	Grade string `json:"grade,omitempty"`
}

// check validates the options (race.Choice: the one check of every
// client's options), writes the defaults of absent ones out, and returns
// the race options. allowDeal is false for public races (challenges),
// which may not name their deal.
func (o *RaceOptions) check(allowDeal bool) (race.Options, error) {
	c := race.Choice{Variant: o.Variant, TimeLimitSeconds: o.TimeLimitSeconds, BestOf: o.BestOf, Deal: o.Deal, Public: !allowDeal, Grade: o.Grade}
	opts, err := c.Options()
	if err != nil {
		return race.Options{}, err
	}
	opts.Public = false // the lobby decides who sees it
	opts.Unrated = !o.Rated
	limit, bestOf := int(opts.TimeLimit/time.Second), opts.BestOf
	o.Variant, o.TimeLimitSeconds, o.BestOf, o.Grade = opts.Variant, &limit, &bestOf, opts.Grade
	return opts, nil
}
