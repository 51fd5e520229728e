package web_test

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"sirtommy/engine"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// connectCycles is how many times clients connect, ping and disconnect in
// TestConnectDisconnectCycles (the issue asks for 10,000); cycleWorkers run
// them side by side.
const (
	connectCycles = 10_000
	cycleWorkers  = 8
	// maxHeapGrowth bounds the heap in use after the cycles over the heap
	// after a warm-up: a leak of even 2 KiB a connection would pass 20 MiB.
	maxHeapGrowth = 16 << 20
	// warmupCycles settle pools and buffers before the baseline is taken.
	warmupCycles = 500
)

// TestConnectDisconnectCycles opens and closes many websockets: the server
// keeps no goroutine (goleak in TestMain) and no memory for them.
func TestConnectDisconnectCycles(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 10,000 connections take a while")
	}
	e := newEnv(t, nil)
	url := "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/ws"
	cycle := func() error {
		ws, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			return err
		}
		defer ws.Close()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"v":1,"type":"ping","id":"p"}`)); err != nil {
			return err
		}
		_ = ws.SetReadDeadline(time.Now().Add(safetyTimeout))
		if _, _, err := ws.ReadMessage(); err != nil {
			return err
		}
		return ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(safetyTimeout))
	}
	runCycles := func(n int) {
		t.Helper()
		var next atomic.Int64
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for range cycleWorkers {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					if err := cycle(); err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		if firstErr != nil {
			t.Fatalf("cycle: %v", firstErr)
		}
	}
	waitNoConns := func() {
		t.Helper()
		deadline := time.Now().Add(safetyTimeout)
		for e.srv.Stats.Conns.Load() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections still open", e.srv.Stats.Conns.Load())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	runCycles(warmupCycles)
	waitNoConns()
	before := heap()
	runCycles(connectCycles)
	waitNoConns()
	after := heap()
	t.Logf("heap in use: %d KiB after warm-up, %d KiB after %d cycles", before>>10, after>>10, connectCycles)
	if after > before && after-before > maxHeapGrowth {
		t.Errorf("heap grew by %d KiB over %d connections", (after-before)>>10, connectCycles)
	}
}

// floodMoves is how many moves each player makes during the flood: under
// the default burst, so the players themselves are never over budget.
const floodMoves = 30

// TestFloodDoesNotStarveOthers keeps one client flooding the server (it
// reconnects each time it is closed) while two players race under the
// default limits: every move they send is answered, and the flooder is
// refused and closed.
func TestFloodDoesNotStarveOthers(t *testing.T) {
	e := newEnv(t, func(d *web.Deps) { d.Limits = web.DefaultLimits() })
	_, a, b := e.startRace(1)
	url := "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/ws"
	stop := make(chan struct{})
	var closes atomic.Int64
	var flood sync.WaitGroup
	flood.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			ws, _, err := websocket.DefaultDialer.Dial(url, nil)
			if err != nil {
				return
			}
			go func() { // read until the server closes it, as a flooder would
				for {
					if _, _, err := ws.ReadMessage(); err != nil {
						return
					}
				}
			}()
			for i := 0; ; i++ {
				if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"v":1,"type":"move","move":"AS>F1","id":"f`+strconv.Itoa(i)+`"}`)); err != nil {
					closes.Add(1)
					break
				}
				select {
				case <-stop:
					ws.Close()
					return
				default:
				}
			}
			ws.Close()
		}
	})
	defer func() { close(stop); flood.Wait() }()
	// Wait until the flood is being refused before the players move.
	deadline := time.Now().Add(safetyTimeout)
	for e.srv.Stats.RateLimited.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the flood was never rate-limited")
		}
		time.Sleep(time.Millisecond)
	}
	ga, gb := newGame(1), newGame(1)
	for i := 0; i < floodMoves && ga.Status() == engine.Playing && gb.Status() == engine.Playing; i++ {
		for _, p := range []struct {
			c *client
			g *engine.Game
		}{{a, &ga}, {b, &gb}} {
			mv := racetest.Greedy(p.g)
			if err := p.g.Apply(mv); err != nil {
				t.Fatal(err)
			}
			if !p.c.move(mv, "m"+strconv.Itoa(i)) { // fails the test on any refusal
				t.Fatalf("race over after %d moves", i)
			}
		}
	}
	if e.srv.Stats.Flooded.Load()+e.srv.Stats.SlowDropped.Load() == 0 {
		t.Error("the flooder was never closed")
	}
}
