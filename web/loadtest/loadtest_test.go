package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/lobby/memlobby"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLegalFromViewMatchesEngine: in classic and four-at-a-time, the moves
// read off the View are exactly the engine's legal moves, all through games
// played at random.
func TestLegalFromViewMatchesEngine(t *testing.T) {
	for _, name := range []string{"classic", "four-at-a-time"} {
		t.Run(name, func(t *testing.T) { legalFromViewMatches(t, name) })
	}
}

func legalFromViewMatches(t *testing.T, variant string) {
	rules, err := engine.Variant(variant)
	if err != nil {
		t.Fatal(err)
	}
	key := func(ms []engine.Move) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.String()
		}
		slices.Sort(out)
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for deal := range uint64(200) {
		g := engine.New(rules, deal)
		for g.Status() == engine.Playing {
			v := g.View()
			want, got := key(g.Moves()), key(legalFromView(&v))
			if !slices.Equal(got, want) {
				t.Fatalf("deal %d after %d moves: from the view %v, engine %v", deal, v.Moves, got, want)
			}
			ms := g.Moves()
			if err := g.Apply(ms[rng.IntN(len(ms))]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// newServer runs the service as serve does (races, lobby, websockets) on
// a test listener.
func newServer(t *testing.T) string {
	t.Helper()
	return newServerWith(t, lobby.Config{})
}

// newServerWith is newServer with the lobby's configuration cfg.
func newServerWith(t *testing.T, cfg lobby.Config) string {
	t.Helper()
	clock := race.SystemClock{}
	races := race.NewService(race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: memrace.NewBus()})
	tokens, err := lobby.NewTokens(lobby.NewSecret(), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	lob := lobby.New(cfg, lobby.Deps{
		Clock: clock, Log: zerolog.Nop(), Races: races, Tokens: tokens,
		Stores: memlobby.NewStores(lobby.MatchConfig{}, clock),
	})
	srv := web.NewServer(web.Deps{Log: zerolog.Nop(), Races: races, Lobby: lob})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		now, cancelNow := context.WithCancel(context.Background())
		cancelNow()
		races.Drain(now) // abort the races still running at once
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.CloseConns(ctx)
		ts.Close()
		lob.Close()
	})
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
}

// TestRunPlaysRaces runs a short load through the lobby: both races start,
// players move and see each other's moves, spectators get boards, and the
// server refuses nothing and drops nobody. (The countdown is 3 s of real
// time, so this test takes a few seconds.)
func TestRunPlaysRaces(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real countdowns take seconds")
	}
	url := newServer(t)
	rep, err := Run(context.Background(), Config{
		URLs: []string{url}, Races: 2, Spectators: 2, Duration: 6 * time.Second, Level: engine.Easy, Rate: 10,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RacesStarted < 2 {
		t.Errorf("races started %d, want 2", rep.RacesStarted)
	}
	if rep.Moves == 0 || rep.OwnReply.Count != rep.Moves || rep.OpponentSeen.Count == 0 {
		t.Errorf("moves %d, own replies %d, opponent updates %d", rep.Moves, rep.OwnReply.Count, rep.OpponentSeen.Count)
	}
	if len(rep.Errors) != 0 || rep.Dropped != 0 {
		t.Errorf("errors %v, dropped %d", rep.Errors, rep.Dropped)
	}
	if rep.Connections != 6 {
		t.Errorf("connections %d, want 6", rep.Connections)
	}
}

// TestRunRacesOfFour: races of four seats are made over the API and
// every racer sees every other's moves: each move is seen three times.
func TestRunRacesOfFour(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real countdowns take seconds")
	}
	url := newServer(t)
	rep, err := Run(context.Background(), Config{
		URLs: []string{url}, Races: 2, Seats: 4, Spectators: 2, Duration: 6 * time.Second, Level: engine.Easy, Rate: 10,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Seats != 4 || rep.RacesStarted < 2 || rep.Connections != 10 {
		t.Errorf("seats %d, races started %d, connections %d; want 4, 2 or more, 10", rep.Seats, rep.RacesStarted, rep.Connections)
	}
	if rep.Moves == 0 || rep.OpponentSeen.Count < 2*rep.Moves {
		t.Errorf("moves %d, updates seen by the others %d: want about three for each", rep.Moves, rep.OpponentSeen.Count)
	}
	if len(rep.Errors) != 0 || rep.Dropped != 0 || rep.BoardUpdates == 0 {
		t.Errorf("errors %v, dropped %d, boards %d", rep.Errors, rep.Dropped, rep.BoardUpdates)
	}
}

// TestRunWithAFlooder: a flooding client is closed for its rate (1008)
// and comes back, again and again, while the players play on without
// errors; its figures are apart from theirs. A Direct run with a second
// URL (the same server) exercises races made over the API and the
// across-instances figure.
func TestRunWithAFlooder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real countdowns take seconds")
	}
	url := newServer(t)
	rep, err := Run(context.Background(), Config{
		URLs: []string{url, url}, Races: 1, Duration: 5 * time.Second, Level: engine.Easy, Rate: 10,
		Flooders: 1, FloodRate: 2000, Direct: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Flood
	if f == nil || f.Sent == 0 || f.Ends["closed-1008"] < 2 || f.Connections < 2 {
		t.Errorf("flood report %+v", f)
	}
	if rep.RacesStarted != 1 || rep.Moves == 0 || len(rep.Errors) != 0 || rep.Dropped != 0 || rep.Connections != 2 {
		t.Errorf("players: races %d, moves %d, errors %v, dropped %d, connections %d", rep.RacesStarted, rep.Moves, rep.Errors, rep.Dropped, rep.Connections)
	}
	if rep.OpponentCross == nil || rep.OpponentCross.Count != rep.OpponentSeen.Count || rep.OpponentLocal == nil || rep.OpponentLocal.Count != 0 {
		t.Errorf("across instances %+v, on one %+v, all %+v", rep.OpponentCross, rep.OpponentLocal, rep.OpponentSeen)
	}
}

// TestLocalShare: the races whose players share their race's URL are the
// share asked, spread evenly over the URLs; the others keep one player
// on each.
func TestLocalShare(t *testing.T) {
	urls := []string{"ws://a/ws", "ws://b/ws"}
	for _, tc := range []struct {
		cfg        Config
		wantLocal  int
		wantPerURL int
	}{
		{Config{URLs: urls, Direct: true}, 0, 0},
		{Config{URLs: urls, Direct: true, LocalShare: 0.5}, 50, 25},
		{Config{URLs: urls, Direct: true, LocalShare: 0.25}, 24, 12}, // 12 of 50 rounds of two
		{Config{URLs: urls, Direct: true, LocalShare: 1}, 100, 50},
		{Config{URLs: urls, LocalShare: 0.5}, 0, 0}, // quick play: not placed
	} {
		local, perURL := 0, make(map[int]int)
		for k := range 100 {
			a, b := tc.cfg.playerURL(2*k), tc.cfg.playerURL(2*k+1)
			if a == b {
				if a != k%len(urls) {
					t.Errorf("share %v: race %d's players both on URL %d, not the race's own", tc.cfg.LocalShare, k, a)
				}
				local++
				perURL[a]++
			}
		}
		if local != tc.wantLocal || perURL[0] < tc.wantPerURL || perURL[1] < tc.wantPerURL {
			t.Errorf("share %v (direct %v): %d local races, by URL %v; want %d, at least %d each",
				tc.cfg.LocalShare, tc.cfg.Direct, local, perURL, tc.wantLocal, tc.wantPerURL)
		}
	}
	if _, err := Run(context.Background(), Config{URLs: urls, Races: 1, Duration: time.Second, LocalShare: 0.5}, nil); err == nil {
		t.Error("a local share without direct races was accepted")
	}
}

// TestAway: with Away, both players of each race not among the local
// share dial the URL after their race's own.
func TestAway(t *testing.T) {
	urls := []string{"ws://a/ws", "ws://b/ws", "ws://c/ws"}
	for _, share := range []float64{0, 0.5} {
		cfg := Config{URLs: urls, Direct: true, LocalShare: share, Away: true}
		away := 0
		for k := range 90 {
			a, b := cfg.playerURL(2*k), cfg.playerURL(2*k+1)
			switch {
			case a != b:
				t.Errorf("share %v: race %d's players on URLs %d and %d; want one", share, k, a, b)
			case a == (k+1)%len(urls):
				away++
			case a != k%len(urls):
				t.Errorf("share %v: race %d's players on URL %d, neither the race's own nor the next", share, k, a)
			}
		}
		if want := int(90 * (1 - share)); away != want {
			t.Errorf("share %v: %d races away; want %d", share, away, want)
		}
	}
	if _, err := Run(context.Background(), Config{URLs: urls[:1], Races: 1, Duration: time.Second, Direct: true, Away: true}, nil); err == nil {
		t.Error("players away from their races on one URL were accepted")
	}
}

// TestRunSplitsLatencyByPlacement: with a local share, one run reports
// the move→opponent latency of the races on one instance and of those
// across instances apart, and together they are all of it.
func TestRunSplitsLatencyByPlacement(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real countdowns take seconds")
	}
	url := newServer(t)
	rep, err := Run(context.Background(), Config{
		URLs: []string{url, url}, Races: 4, Duration: 6 * time.Second, Level: engine.Easy, Rate: 10,
		Direct: true, LocalShare: 0.5,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RacesStarted < 4 || len(rep.Errors) != 0 {
		t.Fatalf("races started %d, errors %v", rep.RacesStarted, rep.Errors)
	}
	cross, local := rep.OpponentCross, rep.OpponentLocal
	if cross == nil || local == nil || cross.Count == 0 || local.Count == 0 || cross.Count+local.Count != rep.OpponentSeen.Count {
		t.Errorf("across %+v, on one instance %+v, all %+v", cross, local, rep.OpponentSeen)
	}
}

// TestRunEcho drives the echo server: every message comes back.
func TestRunEcho(t *testing.T) {
	ts := httptest.NewServer(EchoHandler())
	defer ts.Close()
	rep, err := RunEcho(context.Background(), EchoConfig{
		URL: "ws" + strings.TrimPrefix(ts.URL, "http"), Conns: 6, Senders: 4, Rate: 20, Duration: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Messages == 0 || rep.RoundTrip.Count != rep.Messages || len(rep.Errors) != 0 || rep.Dropped != 0 {
		t.Errorf("echo report %+v", rep)
	}
	if rep.Connections != 6 {
		t.Errorf("connections %d, want 6", rep.Connections)
	}
}

// TestPairEcho: the pair echo sends a message back to its sender and a
// copy to the sender's partner, the connection that arrived next to it;
// once the partner has left, only the echo.
func TestPairEcho(t *testing.T) {
	ts := httptest.NewServer(PairEchoHandler())
	defer ts.Close()
	url := "ws" + strings.TrimPrefix(ts.URL, "http")
	dial := func() *websocket.Conn {
		ws, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ws.Close() })
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		return ws
	}
	read := func(ws *websocket.Conn) string {
		t.Helper()
		_, b, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	send := func(ws *websocket.Conn, msg string) {
		t.Helper()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// The server pairs a connection before it reads from it: once a's
	// message is back, a waits for a partner, and b, the next, is it.
	a := dial()
	send(a, "alone")
	if got := read(a); got != "alone" {
		t.Fatalf("a got %q back, want alone", got)
	}
	b := dial()
	send(b, "hello")
	if got := read(b); got != "hello" {
		t.Errorf("b got %q back, want hello", got)
	}
	if got := read(a); got != string(pairCopy) {
		t.Errorf("a got %q, want the copy of b's", got)
	}
	send(a, "one")
	if got := read(a); got != "one" {
		t.Errorf("a got %q back, want one", got)
	}
	if got := read(b); got != string(pairCopy) {
		t.Errorf("b got %q, want the copy", got)
	}
	// b leaves: a's messages still come back (a copy to a partner that
	// left is dropped).
	_ = b.Close()
	for i := range 3 {
		msg := fmt.Sprint("after ", i)
		send(a, msg)
		if got := read(a); got != msg {
			t.Fatalf("a got %q back, want %q", got, msg)
		}
	}
}

// TestRunPairEchoCountsRoundTrips: driven by the load client, the pair
// echo's copies are not counted as round trips: a sender completes at
// most one a tick.
func TestRunPairEchoCountsRoundTrips(t *testing.T) {
	ts := httptest.NewServer(PairEchoHandler())
	defer ts.Close()
	rep, most := runEchoBriefly(t, ts.URL, 4)
	if rep.Messages == 0 || rep.Messages > most || rep.RoundTrip.Count != rep.Messages || len(rep.Errors) != 0 {
		t.Errorf("pair echo report %+v: want 1 to %d round trips, no errors", rep, most)
	}
}

// TestRunEchoCountsOnlyItsAnswers: a message with no id, which comes
// while a sender has nothing in flight, is no round trip of its.
func TestRunEchoCountsOnlyItsAnswers(t *testing.T) {
	up := websocket.Upgrader{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			typ, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			// The answer, then a message with no id, after which the
			// sender has nothing in flight.
			if ws.WriteMessage(typ, b) != nil || ws.WriteMessage(websocket.TextMessage, []byte(`{"v":1,"type":"note"}`)) != nil {
				return
			}
		}
	}))
	defer ts.Close()
	rep, most := runEchoBriefly(t, ts.URL, 2)
	if rep.Messages == 0 || rep.Messages > most || rep.RoundTrip.Count != rep.Messages {
		t.Errorf("echo report %+v: want 1 to %d round trips, each timed", rep, most)
	}
}

// runEchoBriefly drives the echo server at url (http://…) with senders
// connections, each sending 20 messages a second for 2 s, and returns the
// report and the most round trips the run can count (one a tick a sender).
func runEchoBriefly(t *testing.T, url string, senders int) (EchoReport, int64) {
	t.Helper()
	const rate, duration = 20, 2 * time.Second
	rep, err := RunEcho(context.Background(), EchoConfig{
		URL: "ws" + strings.TrimPrefix(url, "http"), Conns: senders, Senders: senders, Rate: rate, Duration: duration,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep, int64(float64(senders) * (rate*duration.Seconds() + 1))
}

// TestRunIdleReadsMemory: an idle run reads the server's memory before the
// first dial and again with every connection held, and divides the
// difference by the connections held (here the reading is this process's,
// client and server both, which hold at least a goroutine a connection).
func TestRunIdleReadsMemory(t *testing.T) {
	url := newServer(t)
	readings := 0
	rep := RunIdle(context.Background(), IdleConfig{URL: url, Conns: 20, Duration: 6 * time.Second,
		Memory: func(context.Context) (Memory, error) {
			readings++
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return Memory{Heap: float64(ms.HeapInuse), Stacks: float64(ms.StackInuse), Goroutines: float64(runtime.NumGoroutine())}, nil
		}})
	if rep.MemoryError != "" || readings != 2 {
		t.Fatalf("memory error %q after %d readings, want none after 2", rep.MemoryError, readings)
	}
	if rep.Held != 20 || rep.Connections != 20 || rep.Dropped != 0 {
		t.Errorf("held %d of %d connections, %d dropped; want all 20", rep.Held, rep.Connections, rep.Dropped)
	}
	if rep.PerConn.Goroutines < 1 || rep.During.Goroutines-rep.Before.Goroutines != rep.PerConn.Goroutines*20 {
		t.Errorf("goroutines %v → %v, %v a connection", rep.Before.Goroutines, rep.During.Goroutines, rep.PerConn.Goroutines)
	}
}

// TestWarmupIsLeftOut: a latency whose message was sent before the
// warm-up ended is not recorded; one sent after it is; a warm-up as long
// as the run is refused.
func TestWarmupIsLeftOut(t *testing.T) {
	l := newLatency()
	now := time.Now()
	l.recordSince(now.Add(-time.Second), now)
	if n := l.quantiles().Count; n != 0 {
		t.Fatalf("a message sent in the warm-up was recorded (%d)", n)
	}
	l.recordSince(now, now.Add(-time.Second))
	l.recordSince(now, now)
	if n := l.quantiles().Count; n != 2 {
		t.Fatalf("recorded %d after the warm-up, want 2", n)
	}
	_, err := Run(context.Background(), Config{URLs: []string{"ws://127.0.0.1:1/ws"}, Races: 1, Duration: time.Second, Warmup: time.Second}, nil)
	if err == nil {
		t.Fatal("a warm-up as long as the run was taken")
	}
}

// TestRunArena runs an arena's load: the players join it, are paired,
// race (races of 4 s, 3 s of countdown), and are paired again at their
// races' ends; the watchers and players get its leaderboard; nobody is
// refused or dropped.
func TestRunArena(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: real countdowns take seconds")
	}
	spec := lobby.ArenaSpec{Name: "Load", Variant: "classic", TimeLimit: 4 * time.Second, Duration: 3 * time.Hour}
	url := newServerWith(t, lobby.Config{Tick: 200 * time.Millisecond,
		Arenas: []lobby.ArenaSchedule{{Spec: spec, Every: 3 * time.Hour}}})
	rep, err := Run(context.Background(), Config{
		URLs: []string{url}, Races: 3, Spectators: 2, Duration: 14 * time.Second, Level: engine.Easy, Rate: 5, Arena: "Load",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Arena
	if a == nil || !strings.HasPrefix(a.Arena, "load-") || a.Players != 6 || a.Watchers != 2 {
		t.Fatalf("arena report %+v", a)
	}
	if a.FirstPairing.Count != 6 {
		t.Errorf("players paired after joining: %d, want 6", a.FirstPairing.Count)
	}
	if a.Repairing.Count == 0 || rep.RacesStarted <= 3 || rep.RacesFinished == 0 {
		t.Errorf("paired again after a race %d times; races started %d, finished %d", a.Repairing.Count, rep.RacesStarted, rep.RacesFinished)
	}
	if a.Updates == 0 || a.Gaps.Count == 0 {
		t.Errorf("leaderboard updates %d, gaps %d", a.Updates, a.Gaps.Count)
	}
	if rep.Moves == 0 || len(rep.Errors) != 0 || rep.Dropped != 0 {
		t.Errorf("moves %d, errors %v, dropped %d", rep.Moves, rep.Errors, rep.Dropped)
	}
}

// TestRunArenaRefusesBadShapes: an arena pairs two by two, and must be
// one the lobby lists.
func TestRunArenaRefusesBadShapes(t *testing.T) {
	defer func(d time.Duration) { resolveTimeout = d }(resolveTimeout)
	resolveTimeout = time.Second
	url := newServer(t)
	for _, cfg := range []Config{
		{URLs: []string{url}, Races: 1, Duration: time.Second, Arena: "Load", Seats: 3},
		{URLs: []string{url}, Races: 1, Duration: time.Second, Arena: "Load", Direct: true},
		{URLs: []string{url}, Races: 1, Duration: time.Second, Arena: "none such"},
	} {
		if _, err := Run(context.Background(), cfg, nil); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
