package web_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

type ghostMade struct {
	Ghost lobby.GhostInfo
	Link  string
}

// ghostDeal is a classic deal the greedy strategy loses with more cards
// than the dumb one gets.
func ghostDeal(t *testing.T) uint64 {
	t.Helper()
	rules, _ := engine.Variant("classic")
	end := func(d uint64, st racetest.Strategy) (int, engine.Status) {
		g := engine.New(rules, d)
		for g.Status() == engine.Playing {
			_ = g.Apply(st(&g))
		}
		return g.Score(), g.Status()
	}
	for d := uint64(1); d < 1000; d++ {
		gs, gst := end(d, racetest.Greedy)
		ds, _ := end(d, racetest.Dumb)
		if gst != engine.Won && ds >= 1 && gs > ds+2 {
			return d
		}
	}
	t.Fatal("no deal")
	return 0
}

// stepTo plays one move of st on g through c.
func stepTo(c *client, g *engine.Game, st racetest.Strategy, id string) bool {
	c.t.Helper()
	if g.Status() != engine.Playing || c.finished() {
		return false
	}
	mv := st(g)
	if !c.move(mv, id) {
		return false
	}
	_ = g.Apply(mv)
	return true
}

// recordRace has ann (greedy, one move a second) and bob (dumb, after
// ann is out) race deal d in a private race, to its end; it returns the
// race id and each player's seat.
func recordRace(t *testing.T, e *lobbyEnv, ann, bob *client, d uint64) (string, int, int) {
	t.Helper()
	ann.send(map[string]any{"type": "invite", "deal": strconv.FormatUint(d, 10), "id": "i"})
	inv := decode[invited](t, ann.untilType("invited"))
	bob.send(map[string]any{"type": "accept-invite", "code": inv.Code, "id": "a"})
	ma := ann.takeSeat()
	bob.takeSeat()
	ann.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	ann.untilState(race.Running)
	ga, gb := newGame(d), newGame(d)
	e.clock.Advance(500 * time.Millisecond)
	stepTo(bob, &gb, racetest.Dumb, "b0")
	ann.expectError(map[string]any{"type": "ghost", "race": ma.Race, "seat": 0, "id": "g"}, lobby.CodeNoGame)
	for i := 0; stepTo(ann, &ga, racetest.Greedy, "a"+strconv.Itoa(i)); i++ {
		e.clock.Advance(time.Second)
	}
	for i := 1; stepTo(bob, &gb, racetest.Dumb, "b"+strconv.Itoa(i)); i++ {
		e.clock.Advance(time.Second)
	}
	res := ann.result()
	if res.Winner == nil || *res.Winner != ann.seat || res.Scores[ann.seat] != ga.Score() || res.Scores[bob.seat] != gb.Score() {
		t.Fatalf("recorded race: %+v (ann %d, bob %d)", res, ga.Score(), gb.Score())
	}
	return ma.Race, ann.seat, bob.seat
}

// challengerCheck fails on a card in a message to the challenger (before
// the final state) that the challenger had not turned when it was read.
type challengerCheck struct {
	t   *testing.T
	pos map[engine.Card]int
	n   int
}

func newChallengerCheck(t *testing.T, d uint64) *challengerCheck {
	rules, _ := engine.Variant("classic")
	stock, _ := engine.Layout(rules, d)
	ck := &challengerCheck{t: t, pos: make(map[engine.Card]int), n: len(stock)}
	for i, c := range stock {
		ck.pos[c] = i
	}
	return ck
}

// scan checks msgs, read with the challenger's game g.
func (ck *challengerCheck) scan(msgs []msg, g *engine.Game) (checked int) {
	ck.t.Helper()
	turned := ck.n - g.StockLeft()
	for _, m := range msgs {
		if m.Type == "state" && m.Result != nil {
			return checked
		}
		var v any
		_ = json.Unmarshal(m.raw, &v)
		for _, c := range racetest.CardsIn(v) {
			if p, ok := ck.pos[c]; ok && p >= turned {
				ck.t.Fatalf("the challenger, having turned %d cards, got card %s (stock index %d): %s", turned, c, p, m.raw)
			}
		}
		checked++
	}
	return checked
}

// TestGhostRaces races recorded games end to end: a challenger who wins,
// one who loses by count, one who runs out of time; every message to the
// challengers is scanned for cards they had not turned, and a spectator's
// for cards either racer had not; the deal stays secret behind a fresh
// commitment that the reveal opens; the authors see the runs.
func TestGhostRaces(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{GhostTTL: time.Hour})
	d := ghostDeal(t)
	ann, bob := e.dial(), e.dial()
	wa, wb := ann.hello("ann"), bob.hello("bob")
	orig, annSeat, bobSeat := recordRace(t, e, ann, bob, d)

	ann.send(map[string]any{"type": "ghost", "race": orig, "seat": annSeat, "id": "g"})
	annGhost := decode[ghostMade](t, ann.untilType("ghost-made"))
	bob.send(map[string]any{"type": "ghost", "race": orig, "seat": bobSeat, "id": "g"})
	bobGhost := decode[ghostMade](t, bob.untilType("ghost-made"))
	if !strings.HasSuffix(annGhost.Link, "/?ghost="+annGhost.Ghost.ID) || annGhost.Ghost.Name != "ann" || annGhost.Ghost.Author != wa.Player {
		t.Fatalf("ghost made: %+v", annGhost)
	}
	if strings.Contains(string(ann.all[len(ann.all)-1].raw), `"deal"`) {
		t.Fatalf("a ghost challenge names its deal: %s", ann.all[len(ann.all)-1].raw)
	}
	// "My best game on this deal": ann's own game, whichever seat is named.
	ann.send(map[string]any{"type": "ghost", "race": orig, "seat": bobSeat, "best": true, "id": "gb"})
	if best := decode[ghostMade](t, ann.untilType("ghost-made")); best.Ghost.Kind != lobby.GhostBest || best.Ghost.Name != "ann" || best.Ghost.Score != annGhost.Ghost.Score {
		t.Fatalf("best ghost: %+v", best.Ghost)
	}
	// Bad input: nobody races their own ghost or a deal they played; an
	// unknown (forged) id is no ghost.
	ann.expectError(map[string]any{"type": "race-ghost", "ghost": annGhost.Ghost.ID}, lobby.CodeOwnChallenge)
	bob.expectError(map[string]any{"type": "race-ghost", "ghost": annGhost.Ghost.ID}, lobby.CodeDealSeen)
	bob.expectError(map[string]any{"type": "race-ghost", "ghost": strings.Repeat("0", 32)}, lobby.CodeNoSuchGhost)
	var info lobby.GhostInfo
	if st := e.get("/api/ghosts/"+annGhost.Ghost.ID, &info); st != 200 || info.Score == 0 {
		t.Fatalf("GET ghost: %d %+v", st, info)
	}
	if st := e.get("/api/ghosts/nope", nil); st != 404 {
		t.Fatalf("GET unknown ghost: %d", st)
	}
	recorded := e.info(orig)

	for _, tc := range []struct {
		name    string
		ghost   ghostMade
		author  *client
		recSeat int
		st      racetest.Strategy
		perSec  int // moves a second; 0: one move, then nothing
		outcome string
		reasons string
	}{
		{"challenger wins", bobGhost, bob, bobSeat, racetest.Greedy, 3, "won", "passed more-cards"},
		{"challenger loses by count", annGhost, ann, annSeat, racetest.Dumb, 1, "lost", "passed more-cards"},
		{"challenger runs out of time", annGhost, ann, annSeat, racetest.Dumb, 0, "lost", "time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dial()
			wc := c.hello("cat" + strconv.Itoa(len(tc.name)))
			c.send(map[string]any{"type": "race-ghost", "ghost": tc.ghost.Ghost.ID, "id": "r"})
			mt := c.takeSeat()
			if mt.Via != "ghost" || mt.Rated || !mt.Opponent.Ghost || mt.Opponent.ID != "" {
				t.Fatalf("matched %+v", mt)
			}
			spy := e.dial()
			spy.send(map[string]any{"type": "watch", "race": mt.Race, "id": "w"})
			spy.untilType("watching")
			st := c.untilState(race.Countdown)
			commit := decode[struct{ Commitment string }](t, st).Commitment
			if commit == "" || strings.Contains(string(st.raw), `"deal"`) || !st.Players[1-c.seat].Ghost {
				t.Fatalf("state at the countdown: %s", st.raw)
			}
			e.clock.Advance(race.DefaultCountdown)
			c.untilState(race.Running)
			start := e.clock.Now()
			ck := newChallengerCheck(t, d)
			sight, _ := racetest.NewSight("classic", d)
			var ghostMoves []string
			var spyObs []observation
			g := newGame(d)
			checked, step := 0, 0
			for ; !c.finished() && step < 1000; step++ {
				n := tc.perSec
				if tc.perSec == 0 && step == 0 {
					n = 1
				}
				for i := 0; i < n; i++ {
					stepTo(c, &g, tc.st, "m"+strconv.Itoa(step)+"."+strconv.Itoa(i))
				}
				e.clock.Advance(time.Second)
				ping(c, "p"+strconv.Itoa(step))
				checked += ck.scan(c.all[checked:], &g)
				// What the spectator read now, against the ghost's
				// moves due by now and the challenger's sent.
				elapsed := e.clock.Now().Sub(start).Milliseconds()
				ghostMoves = ghostMoves[:0]
				for _, m := range recorded.Moves {
					if m.Seat == tc.recSeat && m.AtMs <= elapsed {
						ghostMoves = append(ghostMoves, m.Move)
					}
				}
				before := len(spy.all)
				ping(spy, "p"+strconv.Itoa(step))
				for _, m := range spy.all[before:] {
					var moves [2][]string
					moves[1-c.seat] = append([]string(nil), ghostMoves...)
					moves[c.seat] = movesOf(c)
					spyObs = append(spyObs, observation{raw: m.raw, sent: [2]int{len(moves[0]), len(moves[1])}, who: strings.Join(moves[0], ",") + "|" + strings.Join(moves[1], ",")})
					if m.Type == "state" && m.Result != nil {
						break
					}
				}
			}
			res := c.result()
			ck.scan(c.all[checked:], &g)
			hidden := 0
			for _, o := range spyObs {
				hidden += strings.Count(string(o.raw), `"??"`)
			}
			if checked < 10 || len(spyObs) < 10 || (tc.perSec > 0 && hidden == 0) {
				t.Fatalf("nothing tested: %d messages to the challenger, %d to the spectator, %d hidden cards", checked, len(spyObs), hidden)
			}
			for _, o := range spyObs {
				if strings.Contains(string(o.raw), `"result"`) && strings.Contains(string(o.raw), `"salt"`) {
					break
				}
				parts := strings.SplitN(o.who, "|", 2)
				moves := make([][]string, 2)
				for s := range 2 {
					if parts[s] != "" {
						moves[s] = strings.Split(parts[s], ",")
					}
				}
				games, err := sight.Replay(moves)
				if err != nil {
					t.Fatal(err)
				}
				if err := sight.Check(o.raw, games); err != nil {
					t.Fatalf("spectator: %v", err)
				}
			}
			me := c.seat
			won := res.Winner != nil && *res.Winner == me
			lost := res.Winner != nil && *res.Winner != me
			if (tc.outcome == "won" && !won) || (tc.outcome == "lost" && !lost) || !strings.Contains(tc.reasons, string(res.Reason)) || res.Rated {
				t.Fatalf("result %+v, want the challenger %s by %s", res, tc.outcome, tc.reasons)
			}
			if dd, _ := strconv.ParseUint(res.Deal, 10, 64); dd != d || race.Commitment(d, res.Salt) != commit {
				t.Fatalf("the reveal %s/%s does not open the commitment %s shown at the start", res.Deal, res.Salt, commit)
			}
			// The author, online, hears of it; both profiles show it.
			n := decode[struct{ Run lobby.GhostRun }](t, tc.author.untilType("ghost-raced"))
			if n.Run.Race != mt.Race || n.Run.Outcome != tc.outcome || n.Run.Player != wc.Player {
				t.Fatalf("ghost-raced %+v", n.Run)
			}
			var prof lobby.Profile
			e.get("/api/players/"+wc.Player, &prof)
			if prof.Ghosts == nil || prof.Ghosts.Record.Races != 1 || len(prof.Ghosts.Raced) != 1 || len(prof.Standings) != 0 {
				t.Fatalf("challenger's profile %+v", prof)
			}
			// Nobody races the same deal twice: not this ghost, nor another.
			c.expectError(map[string]any{"type": "race-ghost", "ghost": tc.ghost.Ghost.ID}, lobby.CodeDealSeen)
			// The challenger's game is a recording too: a counter-challenge.
			c.send(map[string]any{"type": "ghost", "race": mt.Race, "seat": c.seat, "id": "g"})
			decode[ghostMade](t, c.untilType("ghost-made"))
		})
	}
	var prof lobby.Profile
	e.get("/api/players/"+wa.Player, &prof)
	if prof.Ghosts == nil || len(prof.Ghosts.Against) != 2 || len(prof.Ghosts.Open) != 2 { // her game, and her best on the deal
		t.Fatalf("author's profile %+v", prof.Ghosts)
	}
	_ = wb
	e.clock.Advance(time.Hour)
	late := e.dial()
	late.hello("late")
	late.expectError(map[string]any{"type": "race-ghost", "ghost": annGhost.Ghost.ID}, lobby.CodeGhostExpired)
}

func ping(c *client, id string) {
	c.t.Helper()
	c.send(map[string]any{"type": "ping", "id": id})
	c.until(func(m msg) bool { return m.Type == "pong" && m.ID == id })
}

// movesOf is the moves c's seat had accepted so far.
func movesOf(c *client) []string {
	var out []string
	for _, m := range c.all {
		if m.Type == "moved" && m.Seat != nil && *m.Seat == c.seat {
			var mv struct{ Move string }
			_ = json.Unmarshal(m.raw, &mv)
			out = append(out, mv.Move)
		}
	}
	return out
}
