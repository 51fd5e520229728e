package racetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"sirtommy/engine"
)

// Sight is a test's oracle for the information invariant: given a race's
// deal and the racers' games, which cards may a connection other than a
// racer's own seat be shown? It is written apart from the race package's
// own rule, from the deal and the games alone, so that a test using it
// can catch that rule's mistakes.
type Sight struct {
	rules *engine.Rules
	deal  uint64
	// pos is each card's index in the stock as dealt (top first); -1 for
	// the cards that are never in the stock (the preset starters, shown
	// from the start, and the removed ranks).
	pos [256]int
	n   int
}

// NewSight is the oracle for deal under variant.
func NewSight(variant string, deal uint64) (*Sight, error) {
	rules, err := engine.Variant(variant)
	if err != nil {
		return nil, err
	}
	s := &Sight{rules: rules, deal: deal}
	for i := range s.pos {
		s.pos[i] = -1
	}
	stock, _ := engine.Layout(rules, deal)
	for i, c := range stock {
		s.pos[c] = i
	}
	s.n = len(stock)
	return s, nil
}

// Replay plays each seat's moves (notation, "resign" included) from the
// deal and returns the games, by seat.
func (s *Sight) Replay(moves [][]string) ([]engine.Game, error) {
	games := make([]engine.Game, len(moves))
	for seat := range moves {
		games[seat] = engine.New(s.rules, s.deal)
		for _, text := range moves[seat] {
			if text == "resign" {
				games[seat].Resign()
				continue
			}
			m, err := engine.ParseMove(text)
			if err == nil {
				err = games[seat].Apply(m)
			}
			if err != nil {
				return games, fmt.Errorf("seat %d move %q: %w", seat, text, err)
			}
		}
	}
	return games, nil
}

// turned is how many cards of the first pass's stock g has turned: all of
// them once it has redealt.
func (s *Sight) turned(g *engine.Game) int {
	v := g.View()
	if v.RedealsLeft < s.rules.Redeals {
		return s.n
	}
	return s.n - g.StockLeft()
}

// Visible reports whether card c may be shown to a spectator while the
// racers' games are games: every racer still playing has turned it.
func (s *Sight) Visible(c engine.Card, games []engine.Game) bool {
	p := s.pos[c]
	if p < 0 {
		return true
	}
	for i := range games {
		if games[i].Status() == engine.Playing && s.turned(&games[i]) <= p {
			return false
		}
	}
	return true
}

// Mask is v (a View of one of the games) as a spectator may see it while
// the racers' games are games: every card not Visible is engine.Hidden.
func (s *Sight) Mask(v engine.View, games []engine.Game) engine.View {
	hide := func(c engine.Card) engine.Card {
		if c != engine.NoCard && !s.Visible(c, games) {
			return engine.Hidden
		}
		return c
	}
	v.Turned = append([]engine.Card{}, v.Turned...)
	for i, c := range v.Turned {
		v.Turned[i] = hide(c)
	}
	for p := range v.Waste {
		v.Waste[p].Cards = append([]engine.Card{}, v.Waste[p].Cards...)
		for i, c := range v.Waste[p].Cards {
			v.Waste[p].Cards[i] = hide(c)
		}
	}
	for p := range v.Foundations {
		v.Foundations[p].Top = hide(v.Foundations[p].Top)
	}
	return v
}

// Check returns an error naming the first card in the JSON message raw
// that may not be shown while the games are games. Any string that is a
// card ("AS") or a move ("AS>F1") names one; "??" is a hidden card.
func (s *Sight) Check(raw []byte, games []engine.Game) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("not JSON: %w: %s", err, raw)
	}
	for _, c := range CardsIn(v) {
		if !s.Visible(c, games) {
			var racers []string
			for i := range games {
				racers = append(racers, fmt.Sprintf("%d turned, %s", s.turned(&games[i]), games[i].Status()))
			}
			return fmt.Errorf("card %s (stock index %d) shown before every racer still playing turned it (%s): %s",
				c, s.pos[c], strings.Join(racers, "; "), raw)
		}
	}
	return nil
}

// CardsIn lists the cards a decoded JSON value names, in card strings
// and in moves.
func CardsIn(v any) []engine.Card {
	var out []engine.Card
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			text := x
			if i := strings.IndexByte(text, '>'); i == 2 {
				text = text[:2]
			}
			if len(text) != 2 || strings.ToUpper(text) != text {
				return // the server writes cards in capitals
			}
			if c, err := engine.ParseCard(text); err == nil && c.Valid() {
				out = append(out, c)
			}
		}
	}
	walk(v)
	return out
}

// CheckRacer returns an error when a message sent to the racer in seat
// while the race runs (v, decoded JSON) shows a card of a game not
// theirs: their own board ("you", and the "view" and "move" of a "moved"
// of their seat) is all a racer may see of the deal until the end.
func CheckRacer(v map[string]any, seat int) error {
	typ, _ := v["type"].(string)
	if typ == "board" {
		return fmt.Errorf("a spectator's board sent to a racer: %v", v)
	}
	rest := maps.Clone(v)
	delete(rest, "you")
	if typ == "moved" {
		if s, ok := v["seat"].(float64); !ok || int(s) != seat {
			return fmt.Errorf("another seat's move sent to seat %d: %v", seat, v)
		}
		delete(rest, "view")
		delete(rest, "move")
	}
	if cards := CardsIn(rest); len(cards) > 0 {
		return fmt.Errorf("cards %v of another's game sent to seat %d: %v", cards, seat, v)
	}
	return nil
}
