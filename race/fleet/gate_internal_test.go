package fleet

import (
	"testing"

	"sirtommy/race"
)

// An opponent's update passes the gate once, never after a newer one of
// the same seat, and never after the final state: the owner's and the
// seat's holder's (Fleet.Tell) may both come, in either order.
func TestGatePassesEachOpponentUpdateOnce(t *testing.T) {
	var g feedGate
	opp := func(seat, moves int, st race.Counts) *race.OpponentEvent {
		st.Moves = moves
		return &race.OpponentEvent{Race: "r", Seat: seat, Counts: st}
	}
	steps := []struct {
		ev   *race.OpponentEvent
		want bool
	}{
		{opp(0, 1, race.Counts{Stock: 50}), true},
		{opp(0, 1, race.Counts{Stock: 50}), false},           // the same again
		{opp(1, 1, race.Counts{Stock: 50}), true},            // another seat's
		{opp(0, 3, race.Counts{Stock: 48}), true},            // ahead
		{opp(0, 2, race.Counts{Stock: 49}), false},           // behind it
		{opp(0, 3, race.Counts{Stock: 48, Status: 3}), true}, // same moves, resigned
		{opp(9, 1, race.Counts{}), true},
		{opp(race.MaxSeats, 1, race.Counts{}), false},
		{opp(-1, 1, race.Counts{}), false},
	}
	for i, s := range steps {
		if got := g.fresh(s.ev); got != s.want {
			t.Errorf("step %d, seat %d at %+v: passed %v, want %v", i, s.ev.Seat, s.ev.Counts, got, s.want)
		}
	}
	g.passed(&race.StateEvent{Race: "r", State: race.Running})
	if !g.fresh(opp(1, 2, race.Counts{})) {
		t.Fatal("a state without a result stopped the updates")
	}
	g.passed(&race.StateEvent{Race: "r", State: race.Finished, Result: &race.Result{}})
	if g.fresh(opp(1, 3, race.Counts{})) {
		t.Fatal("an update passed after the final state")
	}
}
