package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// TestRaceOfSixOverWebsockets races six people over real websockets on a
// race made with "seats": 6: a seventh is refused (race-full), every racer
// hears every other's progress by seat, the race goes on after the first
// win while places can change, the result ranks every racer by the rules,
// and while the trailing racer has not moved the spectator is shown no
// card beyond what that racer turned.
func TestRaceOfSixOverWebsockets(t *testing.T) {
	const seats = 6
	e := newEnv(t, nil)
	deal := greedyWonDeal(t)
	id := e.create(`{"seats":6,"deal":"` + strconv.FormatUint(deal, 10) + `"}`)
	spectator := e.dial()
	spectator.send(map[string]any{"type": "watch", "race": id})
	spectator.untilType("state")
	cs := make([]*client, seats)
	for i := range cs {
		cs[i] = e.dial()
		cs[i].join(id, "racer"+strconv.Itoa(i))
		if cs[i].seat != i {
			t.Fatalf("racer %d got seat %d", i, cs[i].seat)
		}
	}
	late := e.dial()
	late.expectError(map[string]any{"type": "join", "race": id, "name": "seventh"}, race.CodeRaceFull)
	for _, c := range cs {
		if st := c.untilState(race.Countdown); len(st.Players) != seats || len(st.Opponents) != seats {
			t.Fatalf("state for %d players with %d racers' counts, want %d", len(st.Players), len(st.Opponents), seats)
		}
	}
	e.clock.Advance(race.DefaultCountdown)
	for _, c := range cs {
		c.untilState(race.Running)
	}

	// Seat 0 wins the deal; seats 1 and 2 are out; seat 3 resigns; seat 4
	// plays a few moves; seat 5 has not moved yet. The race goes on.
	games := make([]engine.Game, seats)
	for s := range games {
		games[s] = newGame(deal)
	}
	cs[0].play(&games[0], racetest.Greedy, nil)
	cs[1].play(&games[1], racetest.Dumb, nil)
	cs[2].play(&games[2], racetest.Dumb, nil)
	cs[3].play(&games[3], racetest.Greedy, movesLeft(4))
	cs[3].send(map[string]any{"type": "resign", "id": "r"})
	cs[3].until(func(m msg) bool { return m.Type == "moved" && m.ID == "r" })
	games[3].Resign()
	cs[4].play(&games[4], racetest.Greedy, movesLeft(3))
	if st := e.info(id).State; games[0].Status() != engine.Won || st != race.Running {
		t.Fatalf("seat 0 %s, race %s: want won, and the race running on", games[0].Status(), st)
	}
	idle := slices.Clone(games)
	idle[5] = newGame(deal)

	// Seat 4 is out, and seat 5 plays on until no place can change.
	cs[4].play(&games[4], racetest.Dumb, nil)
	cs[5].play(&games[5], racetest.Greedy, nil)
	res := cs[5].result()
	if res.Outcome != race.OutcomeWin || res.Winner == nil || *res.Winner != 0 || res.Reason != race.ReasonWonDeal || res.Rated {
		t.Errorf("result %s, winner %v, %s, rated %v: want seat 0 to win the deal, unrated", res.Outcome, res.Winner, res.Reason, res.Rated)
	}
	in := e.info(id)
	if len(in.Players) != seats || len(in.Counts) != seats || len(res.Scores) != seats || len(res.Games) != seats {
		t.Fatalf("record of %d players, %d counts, %d scores, %d games; want %d", len(in.Players), len(in.Counts), len(res.Scores), len(res.Games), seats)
	}
	if want := racetest.Ranking(res, in.Moves); !racetest.SamePlaces(res.Ranking, want) {
		t.Errorf("ranking %+v, want by the rules %+v", res.Ranking, want)
	}
	// The race ended as soon as seat 5, the last playing, had more cards
	// than every racer out: no place could change any more.
	if r := res.Ranking; r[0].Seat != 0 || r[1].Seat != 5 || r[1].Status != engine.Playing || r[1].Cards != r[2].Cards+1 {
		t.Errorf("ranking %+v: want seat 0, then seat 5 still playing, one card ahead of the best out", res.Ranking)
	}

	// Every racer heard every other racer's moves, by seat.
	for s, c := range cs {
		c.result() // read to the end
		heard := map[int]bool{}
		for _, m := range c.all {
			if m.Type == "opponent" && m.Seat != nil {
				heard[*m.Seat] = true
			}
			if m.Type == "board" {
				t.Fatalf("racer %d got a board: %s", s, m.raw)
			}
		}
		for o := range seats {
			if o != s && !heard[o] {
				t.Errorf("racer %d never heard of racer %d", s, o)
			}
		}
	}

	// The spectator, until seat 5's first move: nothing beyond what seat 5
	// had turned, every other game as it ended then.
	sight, err := racetest.NewSight("classic", deal)
	if err != nil {
		t.Fatal(err)
	}
	spectator.untilState(race.Finished)
	checked, hidden := 0, 0
	for _, m := range spectator.all {
		if m.Type == "board" && m.Seat != nil && *m.Seat == 5 {
			break
		}
		if err := sight.Check(m.raw, idle); err != nil {
			t.Fatalf("the spectator: %v", err)
		}
		checked++
		if strings.Contains(string(m.raw), `"??"`) {
			hidden++
		}
	}
	if checked < 50 || hidden < 10 {
		t.Errorf("checked %d spectator messages, %d with a card face down: too few to tell", checked, hidden)
	}
}

// TestSeatsOutOfRangeOverTheAPI: "seats" out of 2..10 is refused,
// naming the range.
func TestSeatsOutOfRangeOverTheAPI(t *testing.T) {
	e := newEnv(t, nil)
	for _, body := range []string{`{"seats":11}`, `{"seats":1}`, `{"seats":0}`, `{"seats":3,"bestOf":3}`} {
		res, err := http.Post(e.ts.URL+"/api/races", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var out struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(b, &out)
		if res.StatusCode != http.StatusBadRequest || out.Error.Code != string(race.CodeBadOptions) {
			t.Errorf("%s: %d %s, want 400 bad-options", body, res.StatusCode, b)
		}
		if !strings.Contains(body, "bestOf") && !strings.Contains(out.Error.Message, "from 2 to 10") {
			t.Errorf("%s: %q does not name the range", body, out.Error.Message)
		}
	}
}

// movesLeft is a play's stop after n moves.
func movesLeft(n int) func() bool {
	return func() bool { n--; return n < 0 }
}

// greedyWonDeal is a classic deal racetest.Greedy wins and racetest.Dumb
// does not.
func greedyWonDeal(t *testing.T) uint64 {
	t.Helper()
	for d := uint64(1); d < 5000; d++ {
		g, b := newGame(d), newGame(d)
		for g.Status() == engine.Playing {
			_ = g.Apply(racetest.Greedy(&g))
		}
		for b.Status() == engine.Playing {
			_ = b.Apply(racetest.Dumb(&b))
		}
		if g.Status() == engine.Won && b.Status() != engine.Won {
			return d
		}
	}
	t.Fatal("no deal of the first 5,000 that Greedy wins and Dumb does not")
	return 0
}
