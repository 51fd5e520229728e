package lobbytest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// Instances is the shared stores of n instances on one backing store
// (several views of one in memory), timed by clock.
type Instances func(t *testing.T, clock race.Clock, n int) []lobby.Stores

// SharedSuite runs the conformance tests of the Queue, Challenges,
// Invites, Seats and Rooms that newInstances makes (fresh and empty on
// each call).
func SharedSuite(t *testing.T, newInstances Instances) {
	t.Run("QueueJoinLeave", func(t *testing.T) { queueJoinLeave(t, newInstances) })
	t.Run("QueuePairsByRatingAcrossInstances", func(t *testing.T) { queuePairs(t, newInstances) })
	t.Run("QueueThreeInstancesNeverPairTwice", func(t *testing.T) { queueThreeInstances(t, newInstances) })
	t.Run("ChallengesOpenTakeOnce", func(t *testing.T) { challengesOpenTake(t, newInstances) })
	t.Run("InvitesUsedOnce", func(t *testing.T) { invitesOnce(t, newInstances) })
	t.Run("SeatsClaimAssignFree", func(t *testing.T) { seatsClaim(t, newInstances) })
	t.Run("SeatsConcurrentClaims", func(t *testing.T) { seatsConcurrent(t, newInstances) })
	t.Run("ClaimUnqueuesAndRacingCannotQueue", func(t *testing.T) { claimUnqueues(t, newInstances) })
	t.Run("RoomsChangedByManyAtOnce", func(t *testing.T) { roomsChanged(t, newInstances) })
	t.Run("RoomsGetMany", func(t *testing.T) { roomsGetMany(t, newInstances) })
}

// roomsGetMany: GetMany finds, in one call, every room of its codes that
// another instance stored, as Get would, and leaves out the codes of no
// room (never made, or emptied); no codes find none.
func roomsGetMany(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 2)
	made := time.Unix(1_000_000, 0).UTC()
	a := lobby.Room{Code: "mass:classic", Members: []lobby.PlayerRef{{ID: "p1", Name: "Ann"}, {ID: "p2", Name: "Bob"}}, Made: made}
	b := lobby.Room{Code: "mass:strict", Members: []lobby.PlayerRef{{ID: "p3", Name: "Cleo"}}, Made: made}
	at := made.Add(15 * time.Second)
	b.StartAt = &at
	gone := lobby.Room{Code: "mass:redeal", Members: []lobby.PlayerRef{{ID: "p4", Name: "Dan"}}, Made: made}
	for _, r := range []lobby.Room{a, b, gone} {
		if err := sh[0].Rooms.Put(ctx, r, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := sh[0].Rooms.Change(ctx, gone.Code, time.Hour, func(r *lobby.Room) error { r.Members = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	codes := []string{"mass:classic", "mass:nosuch", gone.Code, "mass:strict"}
	got, err := sh[1].Rooms.GetMany(ctx, codes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("GetMany(%v) found %d rooms, want 2: %+v", codes, len(got), got)
	}
	for _, want := range []lobby.Room{a, b} {
		one, _, err := sh[1].Rooms.Get(ctx, want.Code)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := got[want.Code]
		if !ok || r.Code != want.Code || len(r.Members) != len(want.Members) || r.Members[0] != want.Members[0] ||
			!r.Made.Equal(want.Made) || (r.StartAt == nil) != (want.StartAt == nil) || (r.StartAt != nil && !r.StartAt.Equal(*want.StartAt)) {
			t.Errorf("GetMany's %s: %+v (found %v), want %+v", want.Code, r, ok, want)
		}
		if len(one.Members) != len(r.Members) {
			t.Errorf("GetMany's %s differs from Get's: %+v, %+v", want.Code, r, one)
		}
	}
	if none, err := sh[1].Rooms.GetMany(ctx, nil); err != nil || len(none) != 0 {
		t.Fatalf("GetMany of no codes: %+v %v", none, err)
	}
}

// roomsChanged: a room made on one instance is found on the others; ten
// joining at once from three instances are all in it (no change lost to
// another); a refused change changes nothing; the last to leave deletes
// it.
func roomsChanged(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 3)
	r := lobby.Room{Code: "ROOMCODE12", Host: "host", Members: []lobby.PlayerRef{{ID: "host", Name: "Host"}}, Made: time.Unix(1_000_000, 0).UTC()}
	if err := sh[0].Rooms.Put(ctx, r, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := sh[1].Rooms.Get(ctx, r.Code); err != nil || !ok || got.Host != "host" || len(got.Members) != 1 {
		t.Fatalf("get on another instance: %+v %v %v", got, ok, err)
	}
	if _, ok, _ := sh[1].Rooms.Get(ctx, "NOSUCHROOM"); ok {
		t.Fatal("found a room never made")
	}
	if _, ok, err := sh[2].Rooms.Change(ctx, "NOSUCHROOM", time.Hour, func(*lobby.Room) error { return nil }); ok || err != nil {
		t.Fatalf("changed a room never made: %v %v", ok, err)
	}
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Go(func() {
			id := fmt.Sprint("p", i)
			if _, ok, err := sh[i%3].Rooms.Change(ctx, r.Code, time.Hour, func(r *lobby.Room) error {
				r.Members = append(r.Members, lobby.PlayerRef{ID: id, Name: id})
				return nil
			}); err != nil || !ok {
				t.Errorf("%s joins: %v %v", id, ok, err)
			}
		})
	}
	wg.Wait()
	got, _, _ := sh[0].Rooms.Get(ctx, r.Code)
	if len(got.Members) != 10 {
		t.Fatalf("%d members after nine joined at once, want 10: %+v", len(got.Members), got.Members)
	}
	refusal := race.Errorf(race.CodeRaceFull, "full")
	if _, ok, err := sh[1].Rooms.Change(ctx, r.Code, time.Hour, func(r *lobby.Room) error {
		r.Members = append(r.Members, lobby.PlayerRef{ID: "eleventh"})
		return refusal
	}); !ok || err != refusal {
		t.Fatalf("a refused change: %v %v", ok, err)
	}
	if again, _, _ := sh[2].Rooms.Get(ctx, r.Code); len(again.Members) != 10 {
		t.Fatalf("a refused change left %d members", len(again.Members))
	}
	if _, ok, err := sh[2].Rooms.Change(ctx, r.Code, time.Hour, func(r *lobby.Room) error {
		r.Members = nil
		return nil
	}); !ok || err != nil {
		t.Fatalf("all leave: %v %v", ok, err)
	}
	if _, ok, _ := sh[0].Rooms.Get(ctx, r.Code); ok {
		t.Fatal("an empty room is still found")
	}
}

func start() *racetest.Clock { return racetest.NewClock(time.Unix(1_000_000, 0)) }

func queueJoinLeave(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 2)
	a, b := sh[0].Queue, sh[1].Queue
	if err := a.Join(ctx, lobby.Seeker{Player: "a", Name: "Ann", Variant: "classic", Rating: 1500}); err != nil {
		t.Fatal(err)
	}
	if err := b.Join(ctx, lobby.Seeker{Player: "a", Variant: "strict", Rating: 1500}); race.ErrorCode(err) != lobby.CodeAlreadyQueued {
		t.Fatalf("joining twice, on another instance: %v", err)
	}
	if v, ok, err := b.Queued(ctx, "a"); err != nil || !ok || v != "classic" {
		t.Fatalf("a queued in %q %v %v", v, ok, err)
	}
	if left, err := b.Leave(ctx, "a"); !left || err != nil {
		t.Fatalf("leave from another instance: %v %v", left, err)
	}
	if left, _ := a.Leave(ctx, "a"); left {
		t.Fatal("left twice")
	}
	if _, ok, _ := a.Queued(ctx, "a"); ok {
		t.Fatal("still queued")
	}
}

func queuePairs(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 2)
	for i, j := range []struct {
		p      string
		rating float64
	}{{"a", 1500}, {"b", 2000}, {"c", 1550}, {"d", 1990}, {"e", 1700}} {
		if err := sh[i%2].Queue.Join(ctx, lobby.Seeker{Player: j.p, Name: "n-" + j.p, Variant: "classic", Rating: j.rating}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sh[0].Queue.Join(ctx, lobby.Seeker{Player: "s", Variant: "strict", Rating: 1500}); err != nil {
		t.Fatal(err)
	}
	m, err := sh[1].Queue.Pair(ctx)
	if err != nil || len(m) != 2 {
		t.Fatalf("pairs %+v, %v", m, err)
	}
	if m[0].A.Player != "a" || m[0].B.Player != "c" || m[0].Variant != "classic" || m[0].A.Name != "n-a" || m[0].B.Name != "n-c" || m[0].B.Rating != 1550 {
		t.Fatalf("first pair %+v", m[0])
	}
	if m[1].A.Player != "b" || m[1].B.Player != "d" {
		t.Fatalf("second pair %+v", m[1])
	}
	// Paired: out of the queue, so that leaving (taking the computer
	// instead) fails.
	if left, _ := sh[0].Queue.Leave(ctx, "a"); left {
		t.Fatal("a paired player left the queue")
	}
	if _, ok, _ := sh[0].Queue.Queued(ctx, "e"); !ok {
		t.Fatal("e, unpaired, is not queued")
	}
	if m, _ := sh[0].Queue.Pair(ctx); len(m) != 0 {
		t.Fatalf("paired again %+v", m)
	}
}

func queueThreeInstances(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	clock := start()
	sh := newInstances(t, clock, 4)
	const players = 90
	var (
		mu     sync.Mutex
		seen   = make(map[string]int)
		wg     sync.WaitGroup
		joined = make(chan struct{})
	)
	go func() {
		defer close(joined)
		for i := range players {
			if err := sh[3].Queue.Join(ctx, lobby.Seeker{Player: fmt.Sprint("p", i), Variant: "classic", Rating: 1500 + float64(i%7)*40}); err != nil {
				t.Error(err)
				return
			}
			if i%10 == 0 {
				clock.Advance(10 * time.Second) // widen the gaps as we go
			}
		}
	}()
	count := func(m []lobby.Pair) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range m {
			seen[p.A.Player]++
			seen[p.B.Player]++
		}
	}
	for _, s := range sh[:3] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := false; ; {
				select {
				case <-joined:
					done = true
				default:
				}
				m, err := s.Queue.Pair(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				count(m)
				if done && len(m) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	clock.Advance(time.Minute) // any gap now
	m, err := sh[0].Queue.Pair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	count(m)
	if len(seen) != players {
		t.Errorf("%d of %d players paired", len(seen), players)
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("%s paired %d times", p, n)
		}
	}
}

func challenge(id, player string) lobby.ChallengeInfo {
	return lobby.ChallengeInfo{ID: id, Player: player, Name: "n-" + player, Rating: 1500, Variant: "classic",
		TimeLimitSeconds: 300, BestOf: 3, Rated: true, Since: time.Unix(1_000_000, 0).UTC()}
}

func challengesOpenTake(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 3)
	a, b := sh[0].Challenges, sh[1].Challenges
	c1 := challenge("C1", "ann")
	if err := a.Open(ctx, c1); err != nil {
		t.Fatal(err)
	}
	if err := b.Open(ctx, challenge("C2", "ann")); race.ErrorCode(err) != lobby.CodeAlreadyQueued {
		t.Fatalf("a second challenge by ann: %v", err)
	}
	if err := b.Open(ctx, challenge("C3", "bob")); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Get(ctx, "C1"); err != nil || !ok || got != c1 {
		t.Fatalf("get on another instance: %+v %v %v", got, ok, err)
	}
	if id, ok, _ := b.Of(ctx, "ann"); !ok || id != "C1" {
		t.Fatalf("ann's challenge %q %v", id, ok)
	}
	if err := a.Keep(ctx, []string{"C1", "NOPE"}); err != nil {
		t.Fatal(err)
	}
	if l, err := sh[2].Challenges.List(ctx); err != nil || len(l) != 2 {
		t.Fatalf("list %+v %v", l, err)
	}
	// Three instances take C1 at once: one gets it.
	if won := racers(t, len(sh), func(i int) (bool, error) {
		got, ok, err := sh[i].Challenges.Take(ctx, "C1")
		if ok && got != c1 {
			t.Errorf("took %+v", got)
		}
		return ok, err
	}); won != 1 {
		t.Fatalf("C1 taken %d times", won)
	}
	if _, ok, _ := a.Of(ctx, "ann"); ok {
		t.Fatal("ann still has a challenge")
	}
	if _, ok, _ := a.Get(ctx, "C1"); ok {
		t.Fatal("C1 still open")
	}
	if err := b.Open(ctx, challenge("C2", "ann")); err != nil {
		t.Fatalf("ann's new challenge: %v", err)
	}
	if l, _ := a.List(ctx); len(l) != 2 {
		t.Fatalf("list %+v", l)
	}
}

func invitesOnce(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 3)
	inv := lobby.Invite{Code: "ABCDEFGHJK", Player: "ann", Name: "Ann", Options: lobby.RaceOptions{Choice: race.Choice{Variant: "classic", Deal: "7"}},
		Expires: time.Unix(1_000_000, 0).UTC()}
	if err := sh[0].Invites.Put(ctx, inv, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := sh[1].Invites.Get(ctx, inv.Code); err != nil || !ok || got != inv {
		t.Fatalf("get on another instance: %+v %v %v", got, ok, err)
	}
	if _, ok, _ := sh[1].Invites.Get(ctx, "NOSUCHCODE"); ok {
		t.Fatal("found a code never made")
	}
	if won := racers(t, len(sh), func(i int) (bool, error) { return sh[i].Invites.Take(ctx, inv.Code) }); won != 1 {
		t.Fatalf("invite used %d times", won)
	}
	if _, ok, _ := sh[0].Invites.Get(ctx, inv.Code); ok {
		t.Fatal("a used invite is still found")
	}
}

func seatsClaim(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 2)
	a, b := sh[0].Seats, sh[1].Seats
	if busy, err := a.Claim(ctx, []string{"ann", "bob"}, time.Minute); busy != "" || err != nil {
		t.Fatalf("claim: %q %v", busy, err)
	}
	if id, ok, _ := b.Racing(ctx, "bob"); !ok || id != "" {
		t.Fatalf("bob being paired: %q %v", id, ok)
	}
	if busy, _ := b.Claim(ctx, []string{"cat", "bob"}, time.Minute); busy != "bob" {
		t.Fatalf("claimed bob twice (busy %q)", busy)
	}
	if _, ok, _ := a.Racing(ctx, "cat"); ok {
		t.Fatal("a refused claim marked cat")
	}
	if err := a.Assign(ctx, "R1", []string{"ann", "bob"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if id, ok, _ := b.Racing(ctx, "ann"); !ok || id != "R1" {
		t.Fatalf("ann racing %q %v", id, ok)
	}
	// Freeing another race, or a claim, leaves R1 alone.
	if err := b.Free(ctx, "R2", []string{"ann", "bob"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Free(ctx, "", []string{"ann"}); err != nil {
		t.Fatal(err)
	}
	if id, ok, _ := a.Racing(ctx, "ann"); !ok || id != "R1" {
		t.Fatalf("ann racing %q %v after freeing others", id, ok)
	}
	if err := b.Free(ctx, "R1", []string{"ann", "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Racing(ctx, "ann"); ok {
		t.Fatal("ann still racing")
	}
	if _, ok, _ := a.Racing(ctx, "bob"); ok {
		t.Fatal("bob still racing")
	}
	// A claim whose race was not made is freed with "".
	_, _ = a.Claim(ctx, []string{"dan"}, time.Minute)
	if err := b.Free(ctx, "", []string{"dan"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Racing(ctx, "dan"); ok {
		t.Fatal("dan still claimed")
	}
}

// seatsConcurrent has three instances claim overlapping pairs of players
// at once: nobody is claimed twice.
func seatsConcurrent(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 3)
	const players = 30
	var mu sync.Mutex
	claims := make(map[string]int)
	var wg sync.WaitGroup
	for i, s := range sh {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range players {
				pair := []string{fmt.Sprint("p", (j+i)%players), fmt.Sprint("p", (j+i+1)%players)}
				busy, err := s.Seats.Claim(ctx, pair, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if busy == "" {
					mu.Lock()
					for _, p := range pair {
						claims[p]++
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for p, n := range claims {
		if n != 1 {
			t.Errorf("%s claimed %d times", p, n)
		}
	}
	if len(claims) < players/3 { // a claimed pair blocks at most its two neighbours
		t.Errorf("only %d players claimed", len(claims))
	}
}

// claimUnqueues: claiming a queued player takes them out of the queue, and
// a player marked racing cannot join it, until freed.
func claimUnqueues(t *testing.T, newInstances Instances) {
	ctx := context.Background()
	sh := newInstances(t, start(), 2)
	if err := sh[0].Queue.Join(ctx, lobby.Seeker{Player: "ann", Variant: "classic", Rating: 1500}); err != nil {
		t.Fatal(err)
	}
	if busy, err := sh[1].Seats.Claim(ctx, []string{"ann", "bob"}, time.Minute); busy != "" || err != nil {
		t.Fatalf("claim: %q %v", busy, err)
	}
	if _, ok, _ := sh[0].Queue.Queued(ctx, "ann"); ok {
		t.Fatal("a claimed player is still queued")
	}
	if err := sh[0].Queue.Join(ctx, lobby.Seeker{Player: "bob", Variant: "strict", Rating: 1500}); race.ErrorCode(err) != lobby.CodeInRace {
		t.Fatalf("a claimed player joined the queue: %v", err)
	}
	if err := sh[1].Seats.Assign(ctx, "R", []string{"ann", "bob"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := sh[1].Queue.Join(ctx, lobby.Seeker{Player: "ann", Variant: "classic", Rating: 1500}); race.ErrorCode(err) != lobby.CodeInRace {
		t.Fatalf("a racing player joined the queue: %v", err)
	}
	if err := sh[0].Seats.Free(ctx, "R", []string{"ann", "bob"}); err != nil {
		t.Fatal(err)
	}
	if err := sh[1].Queue.Join(ctx, lobby.Seeker{Player: "ann", Variant: "classic", Rating: 1500}); err != nil {
		t.Fatalf("a freed player cannot queue: %v", err)
	}
}

// racers runs take(0) to take(n-1) at once and returns how many succeeded;
// an error fails the test.
func racers(t *testing.T, n int, take func(i int) (bool, error)) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := take(i)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return won
}
