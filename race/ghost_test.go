package race_test

import (
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// recording plays deal with st, one move every pace, and returns it as a
// ghost's schedule.
func recording(deal uint64, st racetest.Strategy, pace time.Duration) (race.Ghost, engine.Game) {
	g := newGame(deal)
	var gh race.Ghost
	for i := 1; g.Status() == engine.Playing; i++ {
		m := st(&g)
		_ = g.Apply(m)
		gh.Moves = append(gh.Moves, race.GhostMove{Move: m.String(), AtMs: (time.Duration(i) * pace).Milliseconds()})
	}
	return gh, g
}

// TestGhostSeatPlaysItsRecordingOnTime races a recording: its moves come
// at their offsets, counts only to the challenger, on the recording's
// deal behind a fresh commitment; a forged recording is refused.
func TestGhostSeatPlaysItsRecordingOnTime(t *testing.T) {
	var deal uint64
	for d := uint64(1); d < 500; d++ {
		a, _ := finalScore(d, racetest.Dumb)
		b, _ := finalScore(d, racetest.Greedy)
		if b > a+2 {
			deal = d
			break
		}
	}
	gh, end := recording(deal, racetest.Greedy, time.Second)
	f := newRace(t, race.Options{Deal: deal, DealFixed: true})
	if f.race.Commitment() == "" {
		t.Fatal("a fixed deal has no commitment")
	}
	forged := race.Ghost{Moves: append([]race.GhostMove{{Move: "KS>F1", AtMs: 0}}, gh.Moves...)}
	if _, err := f.race.SeatGhost("ann", forged); race.ErrorCode(err) != race.CodeBadGhost {
		t.Fatalf("forged recording: %v, want bad-ghost", err)
	}
	if s, err := f.race.SeatGhost("ann", gh); err != nil || s != 0 {
		t.Fatalf("seat ghost: %d %v", s, err)
	}
	sub := &recorder{}
	f.subs[0] = sub
	tk, err := f.race.Join("bob", "", sub)
	if err != nil || tk.Seat != 1 {
		t.Fatalf("join: %+v %v", tk, err)
	}
	st := sub.Events()[1].(*race.StateEvent)
	if st.Deal != "" || !st.Players[0].Ghost || st.Players[1].Ghost {
		t.Fatalf("state before the start: deal %q, players %+v", st.Deal, st.Players)
	}
	f.clock.Advance(race.DefaultCountdown)
	// Half a second in, nothing; at 1 s, the ghost's first move.
	f.clock.Advance(500 * time.Millisecond)
	if n := countsOf(sub); n != 0 {
		t.Fatalf("%d opponent events before the first recorded move", n)
	}
	f.clock.Advance(500 * time.Millisecond)
	if n := countsOf(sub); n != 1 {
		t.Fatalf("%d opponent events at 1 s, want 1", n)
	}
	// The challenger plays badly and is out; the ghost passes them.
	g := newGame(deal)
	f.playOut(t, 1, &g, racetest.Dumb, nil)
	f.clock.Advance(time.Duration(len(gh.Moves)) * time.Second)
	res := f.result(t)
	if res.Winner == nil || *res.Winner != 0 || res.Scores[1] != g.Score() || res.Scores[0] > end.Score() {
		t.Fatalf("result %+v, want the ghost (%d at most) to pass %d", res, end.Score(), g.Score())
	}
	if race.Commitment(mustUint(t, res.Deal), res.Salt) != f.race.Commitment() || mustUint(t, res.Deal) != deal {
		t.Fatalf("the reveal %s/%s does not open the commitment", res.Deal, res.Salt)
	}
	for _, ev := range sub.Events() {
		if m, ok := ev.(*race.MovedEvent); ok && m.Seat == 0 {
			t.Fatalf("the challenger got the ghost's move %+v", m)
		}
	}
}

func countsOf(r *recorder) int {
	n := 0
	for _, ev := range r.Events() {
		if _, ok := ev.(*race.OpponentEvent); ok {
			n++
		}
	}
	return n
}

// TestGhostRestoredPlaysOn rebuilds a ghost race from its record and log
// (another instance taking it over): the ghost plays on from where the
// log has it.
func TestGhostRestoredPlaysOn(t *testing.T) {
	gh, end := recording(11, racetest.Greedy, 400*time.Millisecond) // done before the grace ends
	f := newRace(t, race.Options{Deal: 11, DealFixed: true})
	if _, err := f.race.SeatGhost("ann", gh); err != nil {
		t.Fatal(err)
	}
	if _, err := f.race.Join("bob", "", &recorder{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(race.DefaultCountdown + 2500*time.Millisecond)
	g := newGame(11)
	if err := f.race.Move(1, engine.PlaceMove(g.View().Turned[0], engine.W(0)).String(), ""); err != nil {
		t.Fatal(err) // a first move, so that the race is not aborted
	}
	r2 := restored(t, f)
	f.clock.Advance(race.DefaultTimeLimit)
	in, err := r2.Info(t.Context())
	if err != nil || in.Result == nil {
		t.Fatalf("info %+v %v", in, err)
	}
	n := 0
	for _, m := range in.Moves {
		if m.Seat == 0 && m.Move != "resign" {
			if m.Move != gh.Moves[n].Move || m.AtMs != gh.Moves[n].AtMs {
				t.Fatalf("ghost move %d: %+v, recorded %+v", n, m, gh.Moves[n])
			}
			n++
		}
	}
	if n != len(gh.Moves) || in.Result.Scores[0] != end.Score() {
		t.Fatalf("%d of %d recorded moves played, score %d of %d", n, len(gh.Moves), in.Result.Scores[0], end.Score())
	}
}
