package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// playDaily takes the day's seat c was matched to, plays from its views
// (one move a second on the fake clock) until its game is over, or for
// moves moves and then resigns; it returns the first card it saw and
// the final state.
func playDaily(t *testing.T, e *lobbyEnv, c *client, moves int) (engine.Card, msg) {
	t.Helper()
	mt := c.takeSeat()
	if mt.Via != "daily" || mt.Rated {
		t.Fatalf("matched %+v", mt)
	}
	st := c.untilState(race.Countdown)
	if !st.Players[0].Solo || strings.Contains(string(st.raw), `"deal"`) {
		t.Fatalf("day's race at the countdown: %s", st.raw)
	}
	e.clock.Advance(race.DefaultCountdown)
	run := c.untilState(race.Running)
	first := run.You.Turned[0]
	v := *run.You
	for i := 0; v.Status == engine.Playing && !c.finished(); i++ {
		if i == moves {
			c.send(map[string]any{"type": "resign", "id": "r"})
			break
		}
		e.clock.Advance(time.Second)
		c.playBlind(v, 1)
		if lv := lastView(c); lv != nil {
			v = *lv
		}
	}
	fin := c.untilState(race.Finished)
	return first, fin
}

// TestDailyDeal is the day's deal from 00:00 to the next: one commitment
// for everyone, one attempt each, a board, the leader's ghost for those
// who played, nothing revealed (not to the players, not over the API)
// until midnight, then the deal opens the commitment every player was
// shown and every game replays on it; the next day is another deal.
func TestDailyDeal(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{Tick: time.Hour})
	e.clock.Advance(23*time.Hour + 30*time.Minute) // 23:30 UTC on 2026-01-01
	var today lobby.DailyInfo
	if st := e.get("/api/daily?variant=classic", &today); st != 200 || today.Day != "2026-01-01" || today.Commitment == "" || today.Revealed || today.Deal != "" {
		t.Fatalf("GET /api/daily: %d %+v", st, today)
	}
	if st := e.get("/api/daily/classic/2026-01-01/reveal", nil); st != 403 {
		t.Fatalf("reveal before the end of the day: %d", st)
	}
	if st := e.get("/api/daily/classic/2026-01-02", nil); st != 403 {
		t.Fatalf("a day to come: %d", st)
	}
	ann, bob, cat := e.dial(), e.dial(), e.dial()
	wa, wb := ann.hello("ann"), bob.hello("bob")
	cat.hello("cat")
	lob := decode[struct{ Daily []lobby.DailyBrief }](t, ann.untilType("lobby"))
	if len(lob.Daily) == 0 || lob.Daily[0].Commitment == "" {
		t.Fatalf("the lobby shows no day's deal: %+v", lob)
	}

	ann.send(map[string]any{"type": "play-daily", "variant": "classic", "id": "d"})
	annFirst, annEnd := playDaily(t, e, ann, 1000)
	if c := decode[struct{ Commitment string }](t, annEnd).Commitment; c != today.Commitment {
		t.Fatalf("the race's commitment %s is not the day's %s", c, today.Commitment)
	}
	if annEnd.Result.Deal != "" || annEnd.Result.Salt != "" || annEnd.Result.Games[1] != "" {
		t.Fatalf("the day's deal revealed at the end of a race: %s", annEnd.raw)
	}
	annRace := decode[struct{ Race string }](t, annEnd).Race
	if in := e.info(annRace); len(in.Moves) != 0 || in.Result.Deal != "" {
		t.Fatalf("the day's race's record shows its moves or deal before midnight: %+v", in)
	}
	// A spectator of the finished race sees every card face down until
	// midnight: others have still to play the deal.
	spy := e.dial()
	spy.send(map[string]any{"type": "watch", "race": annRace, "id": "w"})
	ws := spy.untilType("state")
	var v any
	_ = json.Unmarshal(ws.raw, &v)
	if cards := racetest.CardsIn(v); len(cards) != 0 || !strings.Contains(string(ws.raw), `"??"`) {
		t.Fatalf("a spectator of the day's race sees %v: %s", cards, ws.raw)
	}
	if st := e.get("/api/races/"+annRace+"/solution", nil); st != 403 {
		t.Fatalf("the solver on a sealed deal: %d", st)
	}
	// Nor is a day's game a ghost challenge before midnight.
	ann.expectError(map[string]any{"type": "ghost", "race": annRace, "seat": 1}, lobby.CodeNotRevealed)
	m := ann.expectError(map[string]any{"type": "play-daily", "variant": "classic"}, lobby.CodeDailyPlayed)
	if !strings.Contains(string(m.raw), "2026-01-02T00:00:00Z") {
		t.Fatalf("the refusal does not say when the next opens: %s", m.raw)
	}
	// Racing the leader's ghost is for those who played.
	cat.expectError(map[string]any{"type": "race-daily-leader", "variant": "classic"}, lobby.CodeDailyNotPlayed)
	bob.send(map[string]any{"type": "play-daily", "variant": "classic", "id": "d"})
	bobFirst, _ := playDaily(t, e, bob, 1)
	if bobFirst != annFirst {
		t.Fatalf("ann's first card %s, bob's %s: not the same deal", annFirst, bobFirst)
	}
	ann.expectError(map[string]any{"type": "race-daily-leader", "variant": "classic"}, lobby.CodeOwnChallenge)
	bob.all = nil // from here on, the ghost race's messages
	bob.send(map[string]any{"type": "race-daily-leader", "variant": "classic", "id": "g"})
	mt := bob.takeSeat()
	if mt.Via != "daily-ghost" || !mt.Opponent.Ghost {
		t.Fatalf("matched %+v", mt)
	}
	bob.untilState(race.Countdown)
	e.clock.Advance(race.DefaultCountdown)
	bob.untilState(race.Running)
	bob.send(map[string]any{"type": "resign", "id": "r"})
	bob.until(func(m msg) bool { return m.Type == "moved" && m.ID == "r" })
	e.clock.Advance(race.DefaultTimeLimit)
	if res := bob.result(); res.Winner == nil || *res.Winner == bob.seat {
		t.Fatalf("the leader's ghost against a resigned bob: %+v", res)
	}

	var mine lobby.DailyInfo
	e.get("/api/daily?variant=classic&player="+wa.Player, &mine)
	if mine.Players != 2 || !mine.Played || mine.You == nil || mine.You.Rank != 1 || mine.Board[0].Player != wa.Player || mine.Board[1].Player != wb.Player || mine.Board[0].Game != "" {
		t.Fatalf("the board: %+v", mine)
	}

	// Midnight: the day is revealed, and the next one opens.
	if now := e.clock.Now(); now.Day() != 1 {
		t.Fatalf("past midnight already: %s", now)
	}
	e.clock.Advance(20 * time.Minute)
	var rev lobby.DailyInfo
	if st := e.get("/api/daily/classic/2026-01-01/reveal", &rev); st != 200 || !rev.Revealed {
		t.Fatalf("reveal: %d %+v", st, rev)
	}
	deal, err := race.ParseDeal(rev.Deal)
	if err != nil || race.Commitment(deal, rev.Salt) != today.Commitment {
		t.Fatalf("the reveal %s/%s does not open the commitment published at the start of the day", rev.Deal, rev.Salt)
	}
	rules, _ := engine.Variant("classic")
	if stock, _ := engine.Layout(rules, deal); stock[0] != annFirst {
		t.Fatalf("the revealed deal's first card is %s; the players were dealt %s", stock[0], annFirst)
	}
	for _, ent := range rev.Board {
		rec, err := engine.ParseRecord(ent.Game)
		if err != nil || rec.Deal != deal {
			t.Fatalf("%s's game %q: %v", ent.Name, ent.Game, err)
		}
		g, err := rec.Replay()
		if err != nil || g.Score() != ent.Score {
			t.Fatalf("%s's game does not replay to %d: %v", ent.Name, ent.Score, err)
		}
	}
	if in := e.info(annRace); len(in.Moves) == 0 || in.Result.Deal != rev.Deal {
		t.Fatalf("the day's race is not a public replay after midnight: %+v", in.Result)
	}
	var next lobby.DailyInfo
	e.get("/api/daily?variant=classic", &next)
	if next.Day != "2026-01-02" || next.Commitment == today.Commitment || next.Players != 0 {
		t.Fatalf("the next day: %+v", next)
	}
	ann.all = nil
	ann.send(map[string]any{"type": "play-daily", "variant": "classic", "id": "d2"})
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range ann.all {
				t.Logf("%.300s", m.raw)
			}
		}
	})
	playDaily(t, e, ann, 2)
	var prof lobby.Profile
	e.get("/api/players/"+wa.Player, &prof)
	if prof.Daily == nil || prof.Daily.Played != 2 || prof.Daily.Streak != 2 {
		t.Fatalf("ann's days: %+v", prof.Daily)
	}
}

// slowSaves is a ratings store whose every Save takes a while, as a busy
// database's would: the end worker records a race that long after its
// players were told the result.
type slowSaves struct {
	*memlobby.Ratings
	delay time.Duration
}

func (s slowSaves) Save(ctx context.Context, g lobby.GameRecord, after []lobby.Standing) error {
	time.Sleep(s.delay)
	return s.Ratings.Save(ctx, g, after)
}

// TestDailyDealSeenByTheNextRequest: a player who has just finished the
// day's deal sees it in their very next request, although the lobby
// records it after telling them the result: the leader's ghost is theirs,
// not refused as "play the day's deal first", and their profile and the
// day's board show the game (read your own writes).
func TestDailyDealSeenByTheNextRequest(t *testing.T) {
	e := newLobbyEnvOver(t, lobby.Config{Tick: time.Hour}, func(r *memlobby.Ratings) lobby.Ratings {
		return slowSaves{Ratings: r, delay: 300 * time.Millisecond}
	})
	ann := e.dial()
	wa := ann.hello("ann")
	ann.untilType("lobby")
	ann.send(map[string]any{"type": "play-daily", "variant": "classic", "id": "d"})
	playDaily(t, e, ann, 2)
	ann.expectError(map[string]any{"type": "race-daily-leader", "variant": "classic"}, lobby.CodeOwnChallenge)
	var prof lobby.Profile
	if st := e.get("/api/players/"+wa.Player, &prof); st != 200 || prof.Daily == nil || prof.Daily.Played != 1 || len(prof.History) != 1 {
		t.Fatalf("ann's profile right after her day's game: %d %+v", st, prof)
	}
	var mine lobby.DailyInfo
	if e.get("/api/daily?variant=classic&player="+wa.Player, &mine); mine.You == nil || mine.Players != 1 {
		t.Fatalf("the day's board right after ann's game: %+v", mine)
	}
}

// failingSaves is a ratings store that cannot save while down: the end
// worker tries the race's record again and again.
type failingSaves struct {
	*memlobby.Ratings
	down *atomic.Bool
}

func (f failingSaves) Save(ctx context.Context, g lobby.GameRecord, after []lobby.Standing) error {
	if f.down.Load() {
		return errors.New("disk on fire")
	}
	return f.Ratings.Save(ctx, g, after)
}

// TestPlayerFreedWhenTheirRaceCannotBeRecorded: while the stores cannot
// record a player's finished race, their next request does not wait for
// it for ever: after a bounded wait they are freed and may queue again
// (the race is recorded once the stores answer).
func TestPlayerFreedWhenTheirRaceCannotBeRecorded(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	e := newLobbyEnvOver(t, lobby.Config{Tick: time.Hour}, func(r *memlobby.Ratings) lobby.Ratings {
		return failingSaves{Ratings: r, down: &down}
	})
	ann := e.dial()
	wa := ann.hello("ann")
	ann.untilType("lobby")
	ann.send(map[string]any{"type": "play-daily", "variant": "classic", "id": "d"})
	playDaily(t, e, ann, 2)
	// Her next request waits for the race's end, in vain, then frees her.
	ann.send(map[string]any{"type": "queue", "variant": "classic", "id": "q"})
	if m := ann.until(func(m msg) bool { return m.Type == "queued" || m.Type == "error" }); m.Type != "queued" {
		t.Fatalf("ann's quick play after a race the stores cannot record: %s", m.raw)
	}
	var prof lobby.Profile
	if st := e.get("/api/players/"+wa.Player, &prof); st != 200 && st != 404 {
		t.Fatalf("ann's profile while her race cannot be recorded: %d", st)
	}
	// The stores answer again: the race is recorded, once.
	down.Store(false)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var p lobby.Profile
		if e.get("/api/players/"+wa.Player, &p); len(p.History) == 1 && p.Daily != nil && p.Daily.Played == 1 {
			break
		}
		if time.Now().After(deadline) { // a hang bound, not a measure
			t.Fatalf("ann's race not recorded once the stores answer: %+v", p)
		}
	}
}
