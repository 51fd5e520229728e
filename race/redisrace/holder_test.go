package redisrace_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"sirtommy/race"
	"sirtommy/race/redisrace"
	"sirtommy/race/redisrace/redistest"
)

// A seat's holder is the only one whose appends of the seat's moves the
// log takes: not the race's owner once the seat is claimed, nor an earlier
// holder once it is claimed again; a move already in the log is still
// answered as stored, whoever sends it again.
func TestOnlyTheSeatsHolderAppends(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	owner := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-a"})
	b := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-b"})
	c := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-c"})
	ctx := t.Context()
	if err := rdb.Set(ctx, redisrace.Keys{}.Owner("R"), "instance-a", 0).Err(); err != nil {
		t.Fatal(err)
	}

	// Nobody claimed seat 1: the race's owner plays it, fenced by its lease.
	first := race.MoveRecord{Seat: 1, Seq: 1, Move: "AS>F1", ID: "m1"}
	if _, err := owner.AppendCarrying(ctx, "R", first, nil); err != nil {
		t.Fatalf("the owner's append of an unclaimed seat: %v", err)
	}
	held, err := b.ClaimSeat(ctx, "R", 1)
	if err != nil || !strings.HasPrefix(held, "instance-b#") {
		t.Fatalf("claim: %q, %v", held, err)
	}
	second := race.MoveRecord{Seat: 1, Seq: 2, Move: "2S>W1", ID: "m2"}
	if _, err := owner.AppendCarrying(ctx, "R", second, nil); !errors.Is(err, race.ErrNotHolder) || !errors.Is(err, race.ErrUnavailable) {
		t.Fatalf("the owner's append of a seat claimed by another: %v; want not the holder", err)
	}
	if _, err := b.AppendHeld(ctx, "R", "instance-b#0", second, nil); !errors.Is(err, race.ErrNotHolder) {
		t.Fatalf("an append with a holder never given: %v; want not the holder", err)
	}
	if _, err := b.AppendHeld(ctx, "R", held, second, nil); err != nil {
		t.Fatalf("the holder's append: %v", err)
	}
	// Seat 0, unclaimed, is still its owner's.
	if _, err := owner.AppendCarrying(ctx, "R", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "o1"}, nil); err != nil {
		t.Fatalf("the owner's append of the other seat: %v", err)
	}

	// The player resumes on instance c, which claims the seat: b is out,
	// though it is the same seat's holder by name.
	heldC, err := c.ClaimSeat(ctx, "R", 1)
	if err != nil || heldC == held {
		t.Fatalf("claim again: %q (before %q), %v", heldC, held, err)
	}
	third := race.MoveRecord{Seat: 1, Seq: 3, Move: "3S>W2", ID: "m3"}
	if _, err := b.AppendHeld(ctx, "R", held, third, nil); !errors.Is(err, race.ErrNotHolder) {
		t.Fatalf("the earlier holder's append: %v; want not the holder", err)
	}
	if _, err := c.AppendHeld(ctx, "R", heldC, second, nil); err != nil {
		t.Fatalf("a move in the log sent again by the new holder: %v; want it answered as stored", err)
	}
	if _, err := c.AppendHeld(ctx, "R", heldC, third, nil); err != nil {
		t.Fatalf("the new holder's append: %v", err)
	}
	// b claims it back (its player came back): a new number, not the old.
	again, err := b.ClaimSeat(ctx, "R", 1)
	if err != nil || again == held || again == heldC {
		t.Fatalf("b's second claim: %q (its first %q), %v", again, held, err)
	}

	// The owner takes it back: only the owner may, and then every
	// holder is out.
	if err := b.ReleaseSeat(ctx, "R", 1); !errors.Is(err, race.ErrNotOwner) {
		t.Fatalf("a release by an instance that does not own the race: %v; want not owner", err)
	}
	if err := owner.ReleaseSeat(ctx, "R", 1); err != nil {
		t.Fatal(err)
	}
	fourth := race.MoveRecord{Seat: 1, Seq: 4, Move: "4S>W3", ID: "m4"}
	for _, h := range []string{held, heldC, again} {
		if _, err := b.AppendHeld(ctx, "R", h, fourth, nil); !errors.Is(err, race.ErrNotHolder) {
			t.Fatalf("holder %s's append once the owner took the seat back: %v; want not the holder", h, err)
		}
	}
	if _, err := owner.AppendCarrying(ctx, "R", fourth, nil); err != nil {
		t.Fatalf("the owner's append of the seat it took back: %v", err)
	}

	moves, err := owner.Moves(ctx, "R")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range moves {
		got = append(got, m.ID)
	}
	if want := []string{"m1", "m2", "o1", "m3", "m4"}; !slices.Equal(got, want) {
		t.Fatalf("log %v, want %v", got, want)
	}
}

// The race's end seals its log: no instance's append of a new move is
// taken after it (a move already there is still answered as stored), no
// seat is claimed, and the seal tells each seat's last move, the ones the
// end must count.
func TestTheEndSealsTheLog(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	owner := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-a"})
	b := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-b"})
	ctx := t.Context()
	held, err := b.ClaimSeat(ctx, "R", 1)
	if err != nil {
		t.Fatal(err)
	}
	mine := race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1", ID: "o1"}
	theirs := race.MoveRecord{Seat: 1, Seq: 1, Move: "AH>F1", ID: "b1"}
	if _, err := owner.AppendCarrying(ctx, "R", mine, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendHeld(ctx, "R", held, theirs, nil); err != nil {
		t.Fatal(err)
	}

	why, last, err := owner.Seal(ctx, "R", "time", 3)
	if err != nil || why != "time" || !slices.Equal(last, []int{1, 1, 0}) {
		t.Fatalf("seal: %q %v %v; want time [1 1 0]", why, last, err)
	}
	if why, _, err := b.Seal(ctx, "R", "won", 3); err != nil || why != "time" {
		t.Fatalf("a second seal: %q %v; want the first's reason", why, err)
	}
	late := race.MoveRecord{Seat: 1, Seq: 2, Move: "2H>W1", ID: "b2"}
	if _, err := b.AppendHeld(ctx, "R", held, late, nil); !errors.Is(err, race.ErrRaceEnded) {
		t.Fatalf("the holder's append after the end: %v; want race ended", err)
	}
	if _, err := owner.AppendCarrying(ctx, "R", race.MoveRecord{Seat: 0, Seq: 2, Move: "2S>W1", ID: "o2"}, nil); !errors.Is(err, race.ErrRaceEnded) {
		t.Fatalf("the owner's append after the end: %v; want race ended", err)
	}
	if _, err := b.AppendHeld(ctx, "R", held, theirs, nil); err != nil {
		t.Fatalf("a move in the log sent again after the end: %v; want it answered as stored", err)
	}
	if _, err := b.ClaimSeat(ctx, "R", 0); !errors.Is(err, race.ErrRaceEnded) {
		t.Fatalf("a claim after the end: %v; want race ended", err)
	}
	if moves, err := owner.Moves(ctx, "R"); err != nil || len(moves) != 2 {
		t.Fatalf("log after the end: %v %v; want the two moves before it", moves, err)
	}
}

// A race's decided end (Finished, as the race calls it) seals the log
// too: a move that comes after it is refused, and the race answers it as
// a move after the end, not as storage that failed.
func TestFinishedSealsTheLog(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	store := redisrace.NewStore(srv.Client(t), redisrace.StoreOptions{})
	ctx := t.Context()
	if err := store.Append(ctx, "R", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatal(err)
	}
	if err := store.Finished(ctx, "R"); err != nil {
		t.Fatal(err)
	}
	err := store.Append(ctx, "R", race.MoveRecord{Seat: 1, Seq: 1, Move: "AH>F1"})
	if !errors.Is(err, race.ErrRaceEnded) || errors.Is(err, race.ErrUnavailable) {
		t.Fatalf("an append after Finished: %v; want race ended, not unavailable", err)
	}
	if why, _, err := store.Seal(context.Background(), "R", "time", 2); err != nil || why != "finished" {
		t.Fatalf("seal after Finished: %q %v; want finished", why, err)
	}
}

// Like a decision, a seal is fenced by the race's lease: an instance that
// lost the race cannot end it, unless its result is stored already.
func TestSealIsFenced(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client(t)
	owner := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-a"})
	stale := redisrace.NewStore(rdb, redisrace.StoreOptions{Instance: "instance-b"})
	ctx := t.Context()
	keys := redisrace.Keys{}
	if err := rdb.Set(ctx, keys.Owner("R"), "instance-a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := stale.Seal(ctx, "R", "time", 2); !errors.Is(err, race.ErrNotOwner) {
		t.Fatalf("a seal by an instance that lost the race: %v; want not owner", err)
	}
	if err := owner.Append(ctx, "R", race.MoveRecord{Seat: 0, Seq: 1, Move: "AS>F1"}); err != nil {
		t.Fatalf("the owner's append after the refused seal: %v", err)
	}
	if err := rdb.Set(ctx, keys.Result("R"), "{}", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if why, last, err := stale.Seal(ctx, "R", "time", 2); err != nil || why != "time" || !slices.Equal(last, []int{1, 0}) {
		t.Fatalf("a seal once the result is stored: %q %v %v", why, last, err)
	}
}
