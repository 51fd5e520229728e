package web_test

import (
	"strconv"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/racetest"
)

// BenchmarkMovePath measures one move over a real websocket: the client
// sends it, the server decodes, validates and applies it, appends it to the
// log, replies "moved" to the mover and publishes "opponent" to the other
// player (whose client reads in the background); the loop waits for the
// reply before the next move.
func BenchmarkMovePath(b *testing.B) {
	e := newEnv(b, nil)
	var (
		a    *client
		g    engine.Game
		deal uint64
	)
	newRace := func() {
		deal++
		id := e.create(`{"deal":"` + strconv.FormatUint(deal, 10) + `"}`)
		a = e.dial()
		o := e.dial()
		a.join(id, "ann")
		o.join(id, "bob")
		e.clock.Advance(race.DefaultCountdown)
		a.untilState(race.Running)
		go func() { // the opponent only listens
			for {
				if _, _, err := o.ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
		g = newGame(deal)
	}
	newRace()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if g.Status() != engine.Playing {
			b.StopTimer()
			a.ws.Close()
			newRace()
			b.StartTimer()
		}
		mv := racetest.Greedy(&g)
		_ = g.Apply(mv)
		a.move(mv, "b")
		a.all = a.all[:0]
	}
}
