package engine

import (
	"slices"
	"testing"
)

// TestSort4 checks the sorting network against slices.Sort on every
// arrangement of four values drawn from 0-3, ties included.
func TestSort4(t *testing.T) {
	for n := range 256 {
		a := [4]uint64{uint64(n & 3), uint64(n >> 2 & 3), uint64(n >> 4 & 3), uint64(n >> 6 & 3)}
		want := a
		slices.Sort(want[:])
		got := a
		sort4(&got)
		if got != want {
			t.Fatalf("sort4(%v) = %v, want %v", a, got, want)
		}
	}
}
