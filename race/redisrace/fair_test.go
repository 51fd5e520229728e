package redisrace_test

import (
	"encoding/json"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// TestSpectatorFeedSurvivesTakeover: a public race's instance dies with
// moves still held back by the spectator delay. The instance that takes
// it over starts the spectators' feed one epoch on (versions above every
// one sent before), at the delayed point, and releases the held moves in
// order when their time comes; the spectators who watched from other
// instances before get a fresh state from it; no card a racer still
// playing has not turned is shown anywhere.
func TestSpectatorFeedSurvivesTakeover(t *testing.T) {
	clock := racetest.NewClock(time.Now())
	rdb := redistest.Start(t, redistest.Options{}).Client(t)
	a, b, c := newInstance(t, rdb, "a", clock), newInstance(t, rdb, "b", clock), newInstance(t, rdb, "c", clock)
	const delay = 10 * time.Second
	r, _, _ := runningOn(t, a, clock, race.Options{Public: true, SpectatorDelay: delay})
	var onA recorder
	defer r.Watch(&onA)()
	// Spectators on b and c, watching a's race from there.
	var early [2]recorder
	for i, in := range []*instance{b, c} {
		h, err := in.svc.Open(t.Context(), r.ID())
		if err != nil {
			t.Fatal(err)
		}
		defer h.Watch(&early[i])()
		early[i].waitFor(t, "state", func(ev race.Event) bool { _, ok := ev.(*race.StateEvent); return ok })
	}
	rules, _ := engine.Variant("")
	games := []engine.Game{engine.New(rules, testDeal), engine.New(rules, testDeal)}
	play(t, r, &games[0], 0, 5)
	play(t, r, &games[1], 1, 1)
	clock.Advance(delay + race.FeedSlack) // those reach the spectators
	play(t, r, &games[0], 0, 3)
	play(t, r, &games[1], 1, 1) // these are held back

	sight, err := racetest.NewSight("classic", testDeal)
	if err != nil {
		t.Fatal(err)
	}
	check := func(who string, evs []race.Event) (last uint64) {
		t.Helper()
		for _, ev := range evs {
			raw, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if err := sight.Check(raw, games); err != nil {
				t.Fatalf("%s: %v", who, err)
			}
			var v struct{ Ver uint64 }
			_ = json.Unmarshal(raw, &v)
			if v.Ver <= last {
				t.Fatalf("%s: version %d after %d: %s", who, v.Ver, last, raw)
			}
			last = v.Ver
		}
		return last
	}
	lastOnA := check("on a", onA.Events())
	if lastOnA == 0 || lastOnA>>32 != 0 {
		t.Fatalf("versions on a end at %d, want epoch 0", lastOnA)
	}

	a.crash(t)
	h, err := b.svc.Open(t.Context(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var onB recorder
	defer h.Watch(&onB)()
	st, ok := onB.waitFor(t, "state", func(ev race.Event) bool { _, ok := ev.(*race.StateEvent); return ok }).(*race.StateEvent)
	if !ok || st.Ver>>32 != 1 || st.Ver <= lastOnA || st.State != race.Running {
		t.Fatalf("the state after the takeover: ver %d (%s), want epoch 1 above %d", st.Ver, st.State, lastOnA)
	}
	if st.Boards[0].Moves != 5 || st.Boards[1].Moves != 1 {
		t.Fatalf("the rebuilt feed shows %d and %d moves, want the delayed 5 and 1", st.Boards[0].Moves, st.Boards[1].Moves)
	}
	clock.Advance(delay + race.FeedSlack)
	seqs := [2]int{5, 1}
	onB.waitFor(t, "the held boards", func(race.Event) bool {
		n := 0
		for _, ev := range onB.Events() {
			if bd, ok := ev.(*race.BoardEvent); ok && !bd.Reveal {
				n++
			}
		}
		return n == 4
	})
	for _, ev := range onB.Events() {
		bd, ok := ev.(*race.BoardEvent)
		if !ok || bd.Reveal {
			continue
		}
		if bd.Seq != seqs[bd.Seat]+1 {
			t.Fatalf("seat %d board seq %d after %d", bd.Seat, bd.Seq, seqs[bd.Seat])
		}
		seqs[bd.Seat] = bd.Seq
	}
	last := check("on b", onB.Events())
	for i, name := range []string{"early on b", "early on c"} {
		early[i].waitFor(t, "a state from the new owner", func(ev race.Event) bool {
			st, ok := ev.(*race.StateEvent)
			return ok && st.Ver>>32 == 1
		})
		evs := early[i].Events()
		check(name, evs)
	}
	if last != st.Ver+uint64(len(onB.Events())-1) {
		t.Errorf("versions on b run from %d to %d over %d events: a gap", st.Ver, last, len(onB.Events()))
	}
}
