package web

// The seats a race made over the API fills at once, before anyone joins:
// computer players, and recorded games of finished races raced again
// (ghosts). People take the seats left.

import (
	"context"
	"fmt"
	"strconv"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race"
)

// computerRequest asks POST /api/races for a computer player.
type computerRequest struct {
	Level  string `json:"level"`
	PaceMs *int   `json:"paceMs,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
}

// ghostRequest asks POST /api/races for seat Seat's game of finished
// race Race, raced again on its deal.
type ghostRequest struct {
	Race string `json:"race"`
	Seat *int   `json:"seat"`
}

// filler is one seat filled when the race is made: a computer player or
// a recording.
type filler struct {
	name  string
	bot   race.Computer
	ghost *race.Ghost
}

// seatsRequest is what a POST /api/races body asks of its seats: the
// computers (one as "computer", or a list as "computers") and ghosts.
type seatsRequest struct {
	Computer  *computerRequest  `json:"computer,omitempty"`
	Computers []computerRequest `json:"computers,omitempty"`
	Ghosts    []ghostRequest    `json:"ghosts,omitempty"`
}

// fillers resolves the request's computers and ghosts, in that order.
// A ghost fixes the race's deal and variant (choice's, when it names
// none; refused when it names others), so it is read before the choice
// becomes options.
func (q *seatsRequest) fillers(ctx context.Context, deps Deps, choice *race.Choice) ([]filler, error) {
	type asked struct {
		field string
		req   computerRequest
	}
	var computers []asked
	switch {
	case q.Computer != nil && q.Computers != nil:
		return nil, race.Errorf(race.CodeBadOptions, "computer and computers: ask for one computer or for a list, not both")
	case q.Computer != nil:
		computers = append(computers, asked{"computer", *q.Computer})
	default:
		for i, c := range q.Computers {
			computers = append(computers, asked{fmt.Sprintf("computers[%d]", i), c})
		}
	}
	var out []filler
	for _, c := range computers {
		pace, err := race.ComputerPaceOf(c.field+".paceMs", c.req.PaceMs)
		if err != nil {
			return nil, err
		}
		if deps.Computer == nil {
			return nil, race.Errorf(CodeNoComputer, "this server has no computer players")
		}
		p, err := deps.Computer(c.req.Level, c.req.Seed)
		if err != nil {
			return nil, &race.Error{Code: race.CodeBadOptions, Message: fmt.Sprintf("%s.level: %v", c.field, err), Err: err}
		}
		out = append(out, filler{name: "computer", bot: race.Computer{Player: p, Level: c.req.Level, Seed: c.req.Seed, Pace: pace}})
	}
	if len(q.Ghosts) > 0 && choice.Public {
		return nil, race.Errorf(race.CodeBadOptions, "ghosts: a public race's deal is secret, and a ghost's deal is known; race ghosts in a private race")
	}
	for i, g := range q.Ghosts {
		f, err := ghostFiller(ctx, deps.Races, fmt.Sprintf("ghosts[%d]", i), g, choice)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// ghostFiller reads the recording g asks for and makes the choice's deal
// and variant its own.
func ghostFiller(ctx context.Context, races *race.Service, field string, g ghostRequest, choice *race.Choice) (filler, error) {
	if g.Race == "" || g.Seat == nil {
		return filler{}, race.Errorf(race.CodeBadOptions, "%s: a ghost is a finished race's \"race\" and a \"seat\" of it", field)
	}
	h, err := races.Open(ctx, g.Race)
	if err != nil {
		return filler{}, err
	}
	in, err := h.Info(ctx)
	if err != nil {
		return filler{}, err
	}
	seat := *g.Seat
	switch {
	case in.State != race.Finished || in.Result == nil:
		return filler{}, race.Errorf(lobby.CodeNoGame, "%s: race %s is %s: only a finished race's games can be raced again", field, g.Race, in.State)
	case seat < 0 || seat >= len(in.Players):
		return filler{}, race.Errorf(race.CodeBadOptions, "%s: seat must be from 0 to %d, not %d", field, len(in.Players)-1, seat)
	case in.Players[seat].Solo:
		return filler{}, race.Errorf(race.CodeBadOptions, "%s: seat %d of race %s is nobody: there is no game there", field, seat, g.Race)
	case in.Result.Deal == "":
		return filler{}, race.Errorf(lobby.CodeNotRevealed, "%s: race %s is on the day's deal, sealed until the day ends", field, g.Race)
	}
	if choice.Variant == "" {
		choice.Variant = in.Variant
	}
	if rules, err := engine.Variant(choice.Variant); err == nil && rules.Name != in.Variant {
		return filler{}, race.Errorf(race.CodeBadOptions, "%s: race %s is %s, not %s: a ghost races its own variant", field, g.Race, in.Variant, rules.Name)
	}
	if choice.Deal == "" {
		choice.Deal = in.Result.Deal
	}
	if d, err := race.ParseDeal(choice.Deal); err == nil && strconv.FormatUint(d, 10) != in.Result.Deal {
		return filler{}, race.Errorf(race.CodeBadOptions, "%s: race %s is on deal %s, not %d: a ghost races its own deal", field, g.Race, in.Result.Deal, d)
	}
	rec, err := race.GhostOf(in, seat)
	if err != nil {
		return filler{}, err
	}
	return filler{name: in.Players[seat].Name, ghost: &rec}, nil
}

// seat puts f in r's first free seat.
func (f filler) seat(r *race.Race) error {
	if f.ghost != nil {
		_, err := r.SeatGhost(f.name, *f.ghost)
		return err
	}
	_, err := r.SeatComputer(f.name, f.bot)
	return err
}
