package engine

// The shuffle below must never change: deal numbers are published, raced,
// replayed and checked against commitments. docs/engine.md states it precisely
// enough to re-implement, and deal_test.go pins it with test vectors.

// splitMix64 is the SplitMix64 generator (Steele, Lea and Flood, 2014) as
// published by Vigna: tiny, fast, with a 64-bit state that is just the seed,
// so any deal number is a valid seed and any language can reproduce it.
type splitMix64 struct{ state uint64 }

func (g *splitMix64) next() uint64 {
	g.state += 0x9E3779B97F4A7C15
	z := g.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// below returns a uniform number in [0, n) by rejection: a draw x is kept
// only if x < 2^64 - (2^64 mod n), so that x mod n has no bias.
func (g *splitMix64) below(n uint64) uint64 {
	rem := (^uint64(0)%n + 1) % n // 2^64 mod n
	for {
		x := g.next()
		if rem == 0 || x < -rem { // -rem is 2^64 - rem in uint64 arithmetic
			return x % n
		}
	}
}

// shuffle puts cards in a uniformly random order by Fisher-Yates, from the
// last position down: for i = n-1 down to 1, swap cards[i] with cards[below(i+1)].
func (g *splitMix64) shuffle(cards []Card) {
	for i := len(cards) - 1; i > 0; i-- {
		j := g.below(uint64(i + 1))
		cards[i], cards[j] = cards[j], cards[i]
	}
}

// Deal is the order of the 52 cards for deal number n, top of the stock
// (the first card turned) first. It starts from a new deck (AS..KS, AH..KH,
// AD..KD, AC..KC) and shuffles it with SplitMix64 seeded with n.
func Deal(n uint64) [52]Card {
	order, _ := dealWithGenerator(n)
	return order
}

// dealWithGenerator also returns the generator as the shuffle left it: the
// variants that shuffle on a redeal keep drawing from it.
func dealWithGenerator(n uint64) ([52]Card, splitMix64) {
	var order [52]Card
	for i := range order {
		order[i] = CardAt(i)
	}
	g := splitMix64{state: n}
	g.shuffle(order[:])
	return order, g
}
