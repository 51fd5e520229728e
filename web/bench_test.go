package web_test

import (
	"bytes"
	"strconv"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// benchRace makes a private race on deal, seats ann (returned) and bob,
// whose client only listens in the background, and calls watchers (if
// set) with the race's id before the countdown is run down.
func benchRace(e *env, deal uint64, watchers func(id string)) *client {
	id := e.create(`{"deal":"` + strconv.FormatUint(deal, 10) + `"}`)
	a, o := e.dial(), e.dial()
	a.join(id, "ann")
	o.join(id, "bob")
	go func() { // the opponent only listens
		for {
			if _, _, err := o.ws.ReadMessage(); err != nil {
				return
			}
		}
	}()
	if watchers != nil {
		watchers(id)
	}
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	return a
}

// BenchmarkMovePath measures one move over a real websocket: the client
// sends it, the server decodes, validates and applies it, appends it to the
// log, replies "moved" to the mover and publishes "opponent" to the other
// player (whose client reads in the background); the loop waits for the
// reply before the next move.
func BenchmarkMovePath(b *testing.B) {
	e := newEnv(b, nil)
	var deal uint64
	benchMoves(b, func() (*client, engine.Game) {
		deal++
		return benchRace(e, deal, nil), newGame(deal)
	}, nil)
}

// benchMoves times the loop of moves both benchmarks share: the mover
// newRace seats plays the greedy move of her game and reads her reply,
// then after (if set) waits for what else the move must reach; a game
// over makes a new race with newRace, off the clock.
func benchMoves(b *testing.B, newRace func() (*client, engine.Game), after func()) {
	a, g := newRace()
	b.ResetTimer()
	for b.Loop() {
		if g.Status() != engine.Playing {
			b.StopTimer()
			a.ws.Close()
			a, g = newRace()
			b.StartTimer()
		}
		mv := racetest.Greedy(&g)
		_ = g.Apply(mv)
		a.move(mv, "b")
		a.all = a.all[:0]
		if after != nil {
			after()
		}
	}
}

// BenchmarkFanout measures one move fanned out to n spectators over real
// websockets: the mover sends it and reads its "moved", and the loop waits
// until every spectator has read the seat's new "board" (a private race,
// so the feed has no delay). The spectators' clients read in the
// background and only look for the board's type and seat.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run("spectators="+strconv.Itoa(n), func(b *testing.B) { benchFanout(b, n) })
	}
}

func benchFanout(b *testing.B, n int) {
	e := newEnv(b, nil)
	boards := make(chan struct{}, 4*n)
	board := []byte(`"type":"board"`)
	seat0 := []byte(`,"seat":0,`)
	var deal uint64
	watch := func(id string) {
		for range n {
			s := e.dial()
			s.send(map[string]any{"type": "watch", "race": id})
			s.untilType("state")
			go func() {
				for {
					_, m, err := s.ws.ReadMessage()
					if err != nil {
						return
					}
					if bytes.Contains(m, board) && bytes.Contains(m, seat0) {
						boards <- struct{}{}
					}
				}
			}()
		}
	}
	newRace := func() (*client, engine.Game) {
		deal++
		return benchRace(e, deal, watch), newGame(deal)
	}
	benchMoves(b, newRace, func() {
		for range n {
			<-boards
		}
	})
}
