package race

// The owner's side of a seat-played move (held.go): the moves that the
// holders of the race's seats on other instances played and logged are
// counted here as they arrive, so that the opponents, the spectators
// and the referee hear of them as of the owner's own.

import (
	"fmt"

	"sirtommy/engine"
)

// ApplyRemote counts moves that the holders of the race's seats on other
// instances played and logged (HeldSeat), each seat's in its log order:
// the opponents get their update, the spectators their board when the
// feed reaches it, and the referee decides. A move counted already is
// skipped, so the same records may come again (the log read after a
// gap). gap reports a record past one not counted yet (a message lost on
// the way, or one sent before this instance subscribed): the caller then
// reads the race's log and passes it all. A record the seat's game
// cannot take is an error: the log and this copy disagree.
func (r *Race) ApplyRemote(recs ...MoveRecord) (gap bool, err error) {
	r.mu.Lock()
	defer r.unlock()
	for _, rec := range recs {
		if r.stopped || r.state.Over() {
			return false, nil // the end counted what came before the log's seal
		}
		if rec.Seat < 0 || rec.Seat >= len(r.seats) {
			return gap, fmt.Errorf("race %s: remote move %+v: no such seat", r.id, rec)
		}
		st := &r.seats[rec.Seat]
		switch want := len(st.moves) + 1; {
		case rec.Seq < want || st.game.Status() == engine.Resigned:
			continue
		case rec.Seq > want:
			gap = true
			continue
		}
		if err := r.applyRemoteLocked(st, rec); err != nil {
			return gap, err
		}
	}
	return gap, nil
}

// applyRemoteLocked applies rec, the next logged move of seat st, and
// tells everyone but the seat's own connection (its holder answered it).
func (r *Race) applyRemoteLocked(st *seat, rec MoveRecord) error {
	fm := feedMove{seat: rec.Seat, seq: rec.Seq, move: rec.Move, atMs: rec.AtMs}
	if rec.Move == "resign" {
		st.game.Resign()
		fm.resign = true
	} else {
		m, err := engine.ParseMove(rec.Move)
		if err == nil {
			err = st.game.Apply(m)
		}
		if err != nil {
			return fmt.Errorf("race %s: remote move %+v: %w", r.id, rec, err)
		}
		st.moves = append(st.moves, m)
		fm.play = m
	}
	st.last = rec
	ev := moveEvents{opp: &OpponentEvent{Race: r.id, Seat: rec.Seat, Counts: countsOf(&st.game, st.connected)}}
	r.afterChangeLocked(fm, ev)
	return nil
}
