package main

import (
	"testing"

	"sirtommy/engine"
)

// TestComputerPlaysAGameThroughTheRaceInterface checks the factory serve
// wires in: every level finishes a game with legal moves only, and an
// unknown level is refused.
func TestComputerPlaysAGameThroughTheRaceInterface(t *testing.T) {
	rules, _ := engine.Variant("classic")
	for _, level := range []string{"easy", "medium", "hard"} {
		p, err := newComputer(level, 3)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		g := engine.New(rules, 3)
		for moves := 0; g.Status() == engine.Playing; moves++ {
			if moves > 1000 {
				t.Fatalf("%s: no end after 1000 moves", level)
			}
			v := g.Memory()
			m, ok := p.Choose(&v, g.Moves())
			if !ok {
				t.Fatalf("%s: no move while playing", level)
			}
			if err := g.Apply(m); err != nil {
				t.Fatalf("%s: illegal move: %v", level, err)
			}
		}
	}
	if _, err := newComputer("genius", 1); err == nil {
		t.Fatal("an unknown level was accepted")
	}
}
