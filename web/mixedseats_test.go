package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// TestTenSeatsOfPeopleComputersAndGhosts races ten on one deal: six
// people over real websockets, two computer players and two ghosts (the
// games of a finished race, raced again), all asked for in one
// POST /api/races. Each ranking rule ends one race: one racer wins the
// deal (and the race runs on while places can change), every racer is
// out with ties, and the time runs out. Every message each racer gets is
// scanned for a card of another racer's game, and every message the
// spectator gets for a card that some racer still playing had not
// turned when it was sent (the race's log read at each step); the result
// ranks every racer as the rules say (racetest.Ranking).
func TestTenSeatsOfPeopleComputersAndGhosts(t *testing.T) {
	won, out := greedyWonDeal(t), noneWinDeal(t)
	cases := []struct {
		name string
		deal uint64
		// opts are the race's options beside its seats and ghosts.
		opts string
		// plans are the six people's, in seats 4 to 9.
		plans [6]plan
		// reasons are the results' acceptable reasons.
		reasons []race.Reason
		// ties are pairs of seats that must share a place.
		ties [][2]int
		// winner is the seat that must win the race, if any.
		winner *int
	}{
		{
			name: "one wins the deal", deal: won,
			opts: `"computers":[{"level":"easy","paceMs":100},{"level":"easy","paceMs":100}]`,
			plans: [6]plan{
				{play: racetest.Greedy},                         // wins first
				{play: racetest.Greedy, wait: 3},                // wins later: second
				{play: racetest.Dumb},                           // out,
				{play: racetest.Dumb},                           // tied with seat 6
				{play: racetest.Greedy, moves: 5, resign: true}, // leaves
				{play: racetest.Dumb, wait: 10},
			},
			reasons: []race.Reason{race.ReasonWonDeal},
			ties:    [][2]int{{6, 7}},
			winner:  ptr(4),
		},
		{
			name: "everyone out, with ties", deal: out,
			opts: `"computers":[{"level":"easy","paceMs":100},{"level":"easy","paceMs":100}]`,
			plans: [6]plan{
				{play: racetest.Dumb},
				{play: racetest.Dumb, wait: 2},
				{play: racetest.Greedy, wait: 1},
				{play: racetest.Greedy, wait: 4},
				{play: racetest.Greedy, moves: 3, resign: true},
				{play: racetest.Dumb, wait: 7},
			},
			reasons: []race.Reason{race.ReasonMoreCards, race.ReasonEqualCards},
			ties:    [][2]int{{4, 5}, {6, 7}},
		},
		{
			name: "the time runs out", deal: out,
			opts: `"timeLimitSeconds":60,"computers":[{"level":"easy","paceMs":20000},{"level":"easy","paceMs":20000}]`,
			plans: [6]plan{
				{play: racetest.Greedy, moves: 8},
				{play: racetest.Greedy, moves: 8},
				{play: racetest.Dumb, moves: 4},
				{play: racetest.Greedy, moves: 12},
				{play: racetest.Dumb, moves: 2},
				{play: racetest.Greedy, moves: 1},
			},
			reasons: []race.Reason{race.ReasonTime},
			ties:    [][2]int{{4, 5}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			src := e.sourceRace(tc.deal)
			// No deal named: the ghosts' is the race's.
			id := e.create(fmt.Sprintf(`{"seats":10,%s,"ghosts":[{"race":%q,"seat":0},{"race":%q,"seat":1}]}`, tc.opts, src, src))
			in := e.info(id)
			if len(in.Players) != 10 || !in.Players[0].Computer || !in.Players[1].Computer || !in.Players[2].Ghost || !in.Players[3].Ghost {
				t.Fatalf("players %+v: want two computers, then two ghosts, then six free seats", in.Players)
			}
			mr := e.mixedRace(id, tc.deal, tc.plans)
			res := mr.run()
			if !slices.Contains(tc.reasons, res.Reason) {
				t.Errorf("result %s by %s, want one of %v", res.Outcome, res.Reason, tc.reasons)
			}
			if w := tc.winner; w != nil && (res.Winner == nil || *res.Winner != *w || res.Ranking[0].Seat != *w || res.Ranking[1].Seat != 5) {
				t.Errorf("winner %v, ranking %+v: want seat %d first to win the deal, seat 5 second", res.Winner, res.Ranking, *w)
			}
			in = e.info(id)
			if want := racetest.Ranking(res, in.Moves); !racetest.SamePlaces(res.Ranking, want) {
				t.Errorf("ranking %+v, want by the rules %+v", res.Ranking, want)
			}
			place := map[int]int{}
			for _, p := range res.Ranking {
				place[p.Seat] = p.Place
			}
			for _, tie := range tc.ties {
				if place[tie[0]] != place[tie[1]] {
					t.Errorf("seats %d and %d placed %d and %d: want them tied (%+v)", tie[0], tie[1], place[tie[0]], place[tie[1]], res.Ranking)
				}
			}
			for s := range 4 {
				if !slices.ContainsFunc(in.Moves, func(m race.MoveRecord) bool { return m.Seat == s }) {
					t.Errorf("seat %d (%+v) never moved", s, in.Players[s])
				}
			}
			if mr.checked < 50 || mr.hidden < 10 {
				t.Errorf("checked %d spectator messages, %d with a card face down: too few to tell", mr.checked, mr.hidden)
			}
			t.Logf("%s: %s by %s after %d steps; %d spectator messages checked (%d with a card face down), %d racers' messages", tc.name, res.Outcome, res.Reason, mr.steps, mr.checked, mr.hidden, mr.racerMsgs)
		})
	}
}

// plan is how a person plays in a mixedRace: with play, starting after
// wait steps, for moves moves (0: to the end), then resigning or
// waiting for the end.
type plan struct {
	play   racetest.Strategy
	wait   int
	moves  int
	resign bool
}

// mixedRace is a race of ten seen by its six people and a spectator.
type mixedRace struct {
	e         *env
	id        string
	sight     *racetest.Sight
	people    []*client // seats 4 to 9
	plans     [6]plan
	games     [6]engine.Game
	spectator *client
	read      map[*client]int // how many of each client's messages are checked
	steps     int
	// The messages checked: the spectator's, those with a face-down card,
	// and the racers'.
	checked, hidden, racerMsgs int
}

// mixedRace seats six people in race id (its seats 0 to 3 taken), a
// spectator watching, and runs the countdown.
func (e *env) mixedRace(id string, deal uint64, plans [6]plan) *mixedRace {
	e.t.Helper()
	sight, err := racetest.NewSight("classic", deal)
	if err != nil {
		e.t.Fatal(err)
	}
	mr := &mixedRace{e: e, id: id, sight: sight, plans: plans, read: map[*client]int{}}
	mr.spectator = e.dial()
	mr.spectator.send(map[string]any{"type": "watch", "race": id})
	mr.spectator.untilType("state")
	for i := range plans {
		c := e.dial()
		c.join(id, "person"+strconv.Itoa(i))
		if c.seat != 4+i {
			e.t.Fatalf("person %d got seat %d, want %d", i, c.seat, 4+i)
		}
		mr.people = append(mr.people, c)
		mr.games[i] = newGame(deal)
	}
	for _, c := range mr.people {
		c.untilState(race.Countdown)
	}
	e.clock.Advance(race.DefaultCountdown)
	for _, c := range mr.people {
		c.untilState(race.Running)
	}
	return mr
}

// run plays the people's plans a move each per step, the clock 100 ms
// on after each (the computers and ghosts move on it), and checks what
// everyone was sent at each step, until the race ends.
func (mr *mixedRace) run() *race.Result {
	t := mr.e.t
	t.Helper()
	for ; mr.steps < 2000; mr.steps++ {
		for i, c := range mr.people {
			p, g := &mr.plans[i], &mr.games[i]
			if mr.steps < p.wait || g.Status() != engine.Playing {
				continue
			}
			switch {
			case p.moves > 0 && g.Plies() >= p.moves && p.resign:
				c.send(map[string]any{"type": "resign", "id": "r"})
				c.until(func(m msg) bool { return m.ID == "r" })
				g.Resign()
			case p.moves > 0 && g.Plies() >= p.moves: // waits for the end
			default:
				mv := p.play(g)
				if c.move(mv, "m"+strconv.Itoa(g.Plies())) {
					if err := g.Apply(mv); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		mr.e.clock.Advance(100 * time.Millisecond)
		if res := mr.check(); res != nil {
			return res
		}
	}
	t.Fatalf("the race did not end in %d steps", mr.steps)
	return nil
}

// check reads every client's messages up to now (a request answered in
// order after them) and scans those not yet checked: the spectator's
// against the games as the race's log has them now, each racer's for
// any card but their own. It returns the result once the race is over.
func (mr *mixedRace) check() *race.Result {
	t := mr.e.t
	t.Helper()
	tag := "sync" + strconv.Itoa(mr.steps)
	for _, c := range append([]*client{mr.spectator}, mr.people...) {
		c.send(map[string]any{"type": "move", "id": tag, "move": "?"})
		c.until(func(m msg) bool { return m.Type == "error" && m.ID == tag })
	}
	r, err := mr.e.races.Get(mr.id)
	if err != nil {
		t.Fatal(err)
	}
	log, err := r.Log(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	moves := make([][]string, 10)
	for _, m := range log {
		moves[m.Seat] = append(moves[m.Seat], m.Move)
	}
	games, err := mr.sight.Replay(moves)
	if err != nil {
		t.Fatal(err)
	}
	var res *race.Result
	for _, m := range mr.unread(mr.spectator) {
		if m.Type == "state" && m.Result != nil {
			res = m.Result // the end shows every game
			break
		}
		if err := mr.sight.Check(m.raw, games); err != nil {
			t.Fatalf("the spectator at step %d: %v", mr.steps, err)
		}
		mr.checked++
		if strings.Contains(string(m.raw), `"??"`) {
			mr.hidden++
		}
	}
	for i, c := range mr.people {
		for _, m := range mr.unread(c) {
			if m.Type == "state" && m.Result != nil {
				break
			}
			mr.racerMsgs++
			var v map[string]any
			if err := json.Unmarshal(m.raw, &v); err != nil {
				t.Fatal(err)
			}
			if err := racetest.CheckRacer(v, c.seat); err != nil {
				t.Fatalf("person %d (seat %d) at step %d: %v", i, c.seat, mr.steps, err)
			}
		}
	}
	return res
}

// unread is c's messages not yet checked, barriers left out.
func (mr *mixedRace) unread(c *client) []msg {
	from := mr.read[c]
	mr.read[c] = len(c.all)
	var out []msg
	for _, m := range c.all[from:] {
		if !strings.HasPrefix(m.ID, "sync") {
			out = append(out, m)
		}
	}
	return out
}

// sourceRace plays a race of two on deal, a move each 100 ms (the pace
// of the race of ten, so that the ghosts race in the pack): seat 0 with
// racetest.Dumb to the end, seat 1 with racetest.Greedy for 12 moves
// before resigning. Its games are the ghosts of the race of ten.
func (e *env) sourceRace(deal uint64) string {
	e.t.Helper()
	id, a, b := e.startRace(deal)
	ga, gb := newGame(deal), newGame(deal)
	for i := 0; ga.Status() == engine.Playing || gb.Status() == engine.Playing; i++ {
		if ga.Status() == engine.Playing {
			mv := racetest.Dumb(&ga)
			if !a.move(mv, "a"+strconv.Itoa(i)) {
				break
			}
			_ = ga.Apply(mv)
		}
		if gb.Status() == engine.Playing {
			if gb.Plies() == 12 {
				b.send(map[string]any{"type": "resign", "id": "r"})
				b.until(func(m msg) bool { return m.ID == "r" })
				gb.Resign()
			} else {
				mv := racetest.Greedy(&gb)
				if !b.move(mv, "b"+strconv.Itoa(i)) {
					break
				}
				_ = gb.Apply(mv)
			}
		}
		e.clock.Advance(100 * time.Millisecond)
	}
	if res := a.result(); res == nil || len(res.Games) != 2 {
		e.t.Fatalf("source race %s: no result", id)
	}
	return id
}

// noneWinDeal is a classic deal that racetest.Greedy, racetest.Dumb and
// the computer players of these tests (racetest.FirstLegal) all lose.
func noneWinDeal(t *testing.T) uint64 {
	t.Helper()
	rules, _ := engine.Variant("classic")
	for d := uint64(1); d < 5000; d++ {
		lost := true
		for _, st := range []racetest.Strategy{racetest.Greedy, racetest.Dumb, firstLegal} {
			g := engine.New(rules, d)
			for g.Status() == engine.Playing {
				_ = g.Apply(st(&g))
			}
			lost = lost && g.Status() != engine.Won
		}
		if lost {
			return d
		}
	}
	t.Fatal("no deal of the first 5,000 that every test player loses")
	return 0
}

// firstLegal is racetest.FirstLegal as a strategy.
func firstLegal(g *engine.Game) engine.Move {
	v := g.Memory()
	m, _ := racetest.FirstLegal{}.Choose(&v, g.AppendMoves(nil))
	return m
}

// TestAPIRefusesBadSeatFillers: computers and ghosts asked for wrongly
// are refused with a clear code and message, and make no race: both
// "computer" and "computers", a pace out of range in the list, no seat
// left for a person, a ghost of a race not over, of a seat out of
// range, of another deal or variant than the race's, in a public race.
func TestAPIRefusesBadSeatFillers(t *testing.T) {
	e := newEnv(t, nil)
	deal := greedyWonDeal(t)
	src := e.sourceRace(deal)
	running, _, _ := e.startRace(deal)
	made := len(e.races.Races())
	easy := `{"level":"easy"}`
	ghost := func(race string, seat int) string { return fmt.Sprintf(`{"race":%q,"seat":%d}`, race, seat) }
	cases := []struct {
		name, body string
		status     int
		code       race.Code
		names      string
	}{
		{"computer and computers", `{"seats":3,"computer":` + easy + `,"computers":[` + easy + `]}`, 400, race.CodeBadOptions, "not both"},
		{"a pace out of range", `{"seats":3,"computers":[` + easy + `,{"level":"easy","paceMs":50}]}`, 400, race.CodeBadOptions, "computers[1].paceMs must be from 100 to 60000, not 50"},
		{"no seat for a person", `{"seats":3,"computers":[` + easy + `,` + easy + `],"ghosts":[` + ghost(src, 0) + `]}`, 400, race.CodeBadOptions, "at most 2 of the race's 3 seats"},
		{"no seat for a person, of two", `{"computers":[` + easy + `,` + easy + `]}`, 400, race.CodeBadOptions, "at most 1 of the race's 2 seats"},
		{"a ghost of a race not over", `{"seats":3,"ghosts":[` + ghost(running, 0) + `]}`, 409, lobby.CodeNoGame, "only a finished race's games"},
		{"a ghost of no race", `{"seats":3,"ghosts":[` + ghost("f00d", 0) + `]}`, 404, race.CodeNoSuchRace, ""},
		{"a ghost's seat out of range", `{"seats":3,"ghosts":[` + ghost(src, 2) + `]}`, 400, race.CodeBadOptions, "ghosts[0]: seat must be from 0 to 1, not 2"},
		{"a ghost without a seat", `{"seats":3,"ghosts":[{"race":"` + src + `"}]}`, 400, race.CodeBadOptions, `a finished race's "race" and a "seat"`},
		{"a ghost of another deal", fmt.Sprintf(`{"seats":3,"deal":"%d","ghosts":[%s]}`, deal+1, ghost(src, 0)), 400, race.CodeBadOptions, "a ghost races its own deal"},
		{"a ghost of another variant", `{"seats":3,"variant":"aces-out","ghosts":[` + ghost(src, 0) + `]}`, 400, race.CodeBadOptions, "a ghost races its own variant"},
		{"a ghost in a public race", `{"seats":3,"public":true,"ghosts":[` + ghost(src, 0) + `]}`, 400, race.CodeBadOptions, "race ghosts in a private race"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, code, message := postRace(t, e, tc.body)
			if status != tc.status || code != tc.code || !strings.Contains(message, tc.names) {
				t.Errorf("%s: %d %s %q; want %d %s naming %q", tc.body, status, code, message, tc.status, tc.code, tc.names)
			}
		})
	}
	if n := len(e.races.Races()); n != made {
		t.Errorf("%d races made by refused requests", n-made)
	}
	// The ghosts' deal taken when none is named; the same deal named is fine.
	id := e.create(fmt.Sprintf(`{"seats":3,"deal":%d,"computers":[%s],"ghosts":[%s]}`, deal, easy, ghost(src, 1)))
	if in := e.info(id); in.Result != nil || !in.Players[0].Computer || !in.Players[1].Ghost || in.Players[2].Taken {
		t.Errorf("race of a computer, a ghost and a free seat: %+v", in.Players)
	}
}

func ptr[T any](v T) *T { return &v }
