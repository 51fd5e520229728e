package redisrace

import (
	"slices"
	"testing"
)

// TestRunTakesOneKindInARow: the subscribe loop's run takes the changes
// waiting behind the first that are of its kind, in order, and stops at
// the first of the other kind (returned as next), at a renewal, at an
// empty queue, and at subscribeRunMax.
func TestRunTakesOneKindInARow(t *testing.T) {
	channels := func(ops []subOp) []string {
		var out []string
		for _, o := range ops {
			out = append(out, o.channel)
		}
		return out
	}
	b := &Bus{ops: make(chan subOp, subscribeRunMax+16)}
	for _, op := range []subOp{{channel: "b", sub: true}, {channel: "c", sub: true}, {channel: "d"}, {channel: "e"}, {renew: true, shard: 2}, {channel: "f", sub: true}} {
		b.ops <- op
	}
	ops, next := b.run(subOp{channel: "a", sub: true})
	if got := channels(ops); !slices.Equal(got, []string{"a", "b", "c"}) || next == nil || next.channel != "d" || next.sub {
		t.Fatalf("first run %v, next %+v; want a b c, then unsubscribe d", got, next)
	}
	ops, next = b.run(*next)
	if got := channels(ops); !slices.Equal(got, []string{"d", "e"}) || next == nil || !next.renew {
		t.Fatalf("second run %v, next %+v; want d e, then the renewal", got, next)
	}
	ops, next = b.run(subOp{channel: "f0", sub: true})
	if got := channels(ops); !slices.Equal(got, []string{"f0", "f"}) || next != nil {
		t.Fatalf("third run %v, next %+v; want f0 f and an empty queue", got, next)
	}
	for i := range subscribeRunMax + 5 {
		b.ops <- subOp{channel: string(rune('A' + i%26)), sub: true}
	}
	ops, next = b.run(subOp{channel: "first", sub: true})
	if len(ops) != subscribeRunMax || next != nil || len(b.ops) != 6 {
		t.Fatalf("a long run took %d, next %+v, left %d; want %d, none, 6", len(ops), next, len(b.ops), subscribeRunMax)
	}
}
