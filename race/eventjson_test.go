package race_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// marshalNoHTML is encoding/json without HTML escaping, the form the
// events' AppendJSON promise.
func marshalNoHTML(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestEventAppendJSON: the per-move events write what encoding/json
// writes, byte for byte, over whole games of every variant, with ids that
// need escaping, hidden cards, reveals and versions.
func TestEventAppendJSON(t *testing.T) {
	const maxMoves = 400 // a game the greedy player does not end (waste to waste) stops here
	ids := []string{"", "7", `q"uote`, `back\slash`, "tab\there", "<&>", "é ü 漢", "bad \xff utf8", "line\u2028sep", "ctl\x01"}
	for _, rules := range engine.Variants() {
		g := engine.New(rules, 5)
		for n := 0; g.Status() == engine.Playing && n < maxMoves; n++ {
			m := racetest.Greedy(&g)
			if err := g.Apply(m); err != nil {
				t.Fatalf("%s: %v", rules.Name, err)
			}
			v := g.View()
			counts := race.Counts{Score: g.Score(), Stock: g.StockLeft(), Status: g.Status(), Moves: g.Plies(), Connected: n%2 == 0}
			id := ids[n%len(ids)]
			masked := g.View()
			for i := range masked.Turned {
				masked.Turned[i] = engine.Hidden
			}
			evs := []race.JSONAppender{
				&race.MovedEvent{Race: "r" + id, ID: id, Seat: n % 2, Seq: n + 1, Move: m.String(), AtMs: int64(n * 517), View: v},
				&race.OpponentEvent{Race: "r" + id, Seat: 1, Counts: counts},
				&race.BoardEvent{Race: "r", Seat: 0, Seq: n + 1, Move: m.String(), AtMs: int64(n), View: v, Counts: counts},
				&race.BoardEvent{Race: "r", Seat: 1, Seq: n, Move: "??>W1", View: masked, Counts: counts, Reveal: n%2 == 1, Ver: uint64(n)<<32 + 7},
			}
			if n == 0 {
				evs = append(evs, &race.MovedEvent{Race: "r"}, // nil slices
					&race.OpponentEvent{Counts: race.Counts{Status: engine.Status(99)}}) // "unknown"
			}
			for _, ev := range evs {
				got, err := ev.AppendJSON([]byte("prefix"))
				if err != nil {
					t.Fatal(err)
				}
				if want := append([]byte("prefix"), marshalNoHTML(t, ev)...); !bytes.Equal(got, want) {
					t.Fatalf("%s move %d:\n got %s\nwant %s", rules.Name, n, got, want)
				}
			}
		}
	}
}

// TestEventAppendJSONRefusesWhatJSONCannotWrite: an invalid card is an
// error, as it is for encoding/json.
func TestEventAppendJSONRefusesWhatJSONCannotWrite(t *testing.T) {
	bad := []race.JSONAppender{
		&race.MovedEvent{Race: "r", View: engine.View{Turned: []engine.Card{engine.Card(0xff)}}},
		&race.BoardEvent{Race: "r", View: engine.View{Turned: []engine.Card{engine.Card(0xff)}}},
	}
	for _, ev := range bad {
		if _, err := json.Marshal(ev); err == nil {
			t.Fatalf("encoding/json wrote %#v", ev)
		}
		if b, err := ev.AppendJSON(nil); err == nil {
			t.Fatalf("AppendJSON wrote %s", b)
		}
	}
}

// TestStateAppendJSON: a state writes what encoding/json writes, byte for
// byte: every state a race sends its players and spectators from the
// join to the result (public and private, a best-of-three match, a
// resignation), and states with every optional field set, names that need
// escaping, ratings and times of every form.
func TestStateAppendJSON(t *testing.T) {
	var states []*race.StateEvent
	for _, opts := range []race.Options{
		{Variant: "classic", Deal: 3, DealNamed: true},
		{Variant: "aces-out", Deal: 8, DealNamed: true, Public: true, SpectatorDelay: 2 * time.Second, BestOf: 3},
	} {
		f := newRace(t, opts)
		w := &recorder{}
		stop := f.race.Watch(w)
		f.seatBoth(t)
		rules, _ := engine.Variant(opts.Variant)
		g := engine.New(rules, opts.Deal)
		for n := 0; n < 30 && g.Status() == engine.Playing; n++ {
			m := racetest.Greedy(&g)
			_ = g.Apply(m)
			if err := f.race.Move(0, m.String(), ""); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(500 * time.Millisecond)
		}
		if err := f.race.Resign(1, ""); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Minute)
		stop()
		for _, rec := range []*recorder{w, f.subs[0], f.subs[1]} {
			for _, ev := range rec.Events() {
				if st, ok := ev.(*race.StateEvent); ok {
					states = append(states, st)
				}
			}
		}
	}
	seat, winner := 1, 0
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("", -(3*3600+30*60)))
	boards := make([]engine.View, 2)
	counts := []race.Counts{{Score: 3, Status: engine.Won}, {Stock: 9, Connected: true}}
	for _, name := range []string{"", "ann", `q"uote`, "<&>", "é 漢", "bad \xff", "ctl\x01"} {
		for _, rating := range []float64{0, 1500, 1523.4567891234, -3, 1e-6, 999999999999.5} {
			states = append(states, &race.StateEvent{
				Race: "r" + name, State: race.Finished, Variant: "classic" + name, Seat: &seat,
				Players: []race.PlayerInfo{{Name: name, Player: name, Rating: rating, Taken: true, Level: name, Computer: true, Ghost: true, Solo: true, Connected: true, Berserk: true}, {}},
				Deal:    "12" + name, Commitment: "c" + name, TimeLimitMs: 300000, Now: at, StartAt: &at, EndsAt: &at,
				You: &boards[0], Opponent: &counts[1], Opponents: counts, Boards: boards, Counts: counts,
				Result:     &race.Result{Outcome: race.OutcomeWin, Winner: &winner, Reason: race.Reason("forfeit" + name), Games: []string{name, "x"}, Scores: []int{52, 3}, Ranking: []race.Place{{Seat: 0, Place: 1, Cards: 52, Status: engine.Won, FinishedMs: new(int64(1234))}, {Seat: 1, Place: 2, Cards: 3}}},
				Match:      &race.Match{Round: 2, BestOf: 3, Wins: [2]int{1, 0}, Prev: name},
				Spectators: 7, Ver: 1<<32 + 5, SpectatorDelayMs: 2000,
			})
		}
	}
	if len(states) < 30 {
		t.Fatalf("only %d states", len(states))
	}
	for i, st := range states {
		got, err := st.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if want := append([]byte("prefix"), marshalNoHTML(t, st)...); !bytes.Equal(got, want) {
			t.Fatalf("state %d:\n got %s\nwant %s", i, got, want)
		}
	}
	// What the hand-written JSON leaves to encoding/json (which writes it
	// otherwise, or not at all) is an error, for the generic path.
	for _, st := range []*race.StateEvent{
		{Players: []race.PlayerInfo{{Rating: 1e-9}}},
		{Players: []race.PlayerInfo{{Rating: 1e22}}},
		{Now: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{You: &engine.View{Turned: []engine.Card{engine.Card(0xff)}}},
	} {
		if b, err := st.AppendJSON(nil); err == nil {
			t.Errorf("AppendJSON wrote %s", b)
		}
	}
}
