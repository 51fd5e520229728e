package engine

import (
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"
)

// dealVectors are the published orders of three deals, top of the stock
// first. They were computed by an independent re-implementation of the
// "Deals" section of docs/engine.md (not by this package) and agree with
// Deal; they must never change, and docs/engine.md shows the same lines.
var dealVectors = []struct {
	n     uint64
	order string
}{
	{1, "7H 9S 4H 8D 8H 5C JH 6H 9C JS 5H KH 3S 2H JD 5D 7D 4D 2S AH 6C KS KD TD TC JC " +
		"TH 8C QS 4C 6S 7S AC 5S AD KC 6D QC QD QH 9H 3H 3C AS 4S 2D 8S TS 3D 2C 9D 7C"},
	{2, "QD 3C 4S 5D 7D 2H KD TH AS 6S 7C 3S QS 7H 6D JD TS 9C JH 8S 4H 5C 2C 4D AH QH " +
		"6C 8D 3D 9H 6H JC AC 5S JS AD KS 2D 7S 4C 9S TD 5H TC QC KC 8C KH 3H 2S 8H 9D"},
	{18446744073709551615, "JS KC 7C 4S AH JD 5H 2D AD 7H 6H 6C 4H AC 4C 7D 3H 2H 9D QD 8H 3C 5C 9C AS 8C " +
		"QH TH 7S QC 9S 4D JH KD KS 6D 9H 8D 8S TD 6S KH 2C 3D QS JC 3S 5D TC 2S TS 5S"},
}

func TestDealVectors(t *testing.T) {
	for _, v := range dealVectors {
		t.Run(big.NewInt(0).SetUint64(v.n).String(), func(t *testing.T) {
			d := Deal(v.n)
			if got := FormatCards(d[:]); got != v.order {
				t.Fatalf("Deal(%d):\n got %s\nwant %s", v.n, got, v.order)
			}
			if again := Deal(v.n); again != d {
				t.Fatalf("Deal(%d) is not deterministic", v.n)
			}
		})
	}
}

// TestDealVectorsInDocs checks that docs/engine.md publishes the same
// orders as the test, so that the document and the code cannot drift apart.
func TestDealVectorsInDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/engine.md")
	if err != nil {
		t.Fatalf("docs/engine.md not found: %v", err)
	}
	text := string(b)
	if strings.Contains(text, "DEAL_VECTORS") {
		t.Fatal("docs/engine.md still has the DEAL_VECTORS placeholder")
	}
	for _, v := range dealVectors {
		// The deal's line, possibly wrapped: "N: card card ...", up to the
		// next deal or the end of the fenced block.
		re := regexp.MustCompile(`(?m)^` + big.NewInt(0).SetUint64(v.n).String() + `:((?:\s+[0-9AJQKT][SHDC])+)`)
		m := re.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("docs/engine.md has no vector for deal %d", v.n)
			continue
		}
		if got := strings.Join(strings.Fields(m[1]), " "); got != v.order {
			t.Errorf("docs/engine.md deal %d:\n got %s\nwant %s", v.n, got, v.order)
		}
	}
}

func TestDealIsPermutation(t *testing.T) {
	deals := []uint64{0, 1<<63 - 1, 1 << 63, 1<<63 + 1, 1<<64 - 2, 1<<64 - 1, 0x9E3779B97F4A7C15}
	for n := uint64(0); n < 3000; n++ {
		deals = append(deals, n, n*0x9E3779B97F4A7C15+12345)
	}
	for _, n := range deals {
		d := Deal(n)
		var seen [52]bool
		for i, c := range d {
			if !c.Valid() {
				t.Fatalf("Deal(%d)[%d] = %#x is not a card", n, i, uint8(c))
			}
			if seen[c.Index()] {
				t.Fatalf("Deal(%d) has %v twice", n, c)
			}
			seen[c.Index()] = true
		}
	}
}

// TestDealSpread is a coarse check that the shuffle is not biased in an
// obvious way (such as Sattolo's variant, where no card can stay in place):
// over many deals every card comes first, and last, about 1 time in 52.
func TestDealSpread(t *testing.T) {
	const deals = 52 * 1000
	var first, last, stays [52]int
	for n := uint64(0); n < deals; n++ {
		d := Deal(n)
		first[d[0].Index()]++
		last[d[51].Index()]++
		stays[51] += b2i(d[51].Index() == 51)
		stays[0] += b2i(d[0].Index() == 0)
	}
	// Expected 1000 each, standard deviation about 31: 800..1200 is over
	// six deviations, so a fair shuffle never fails it.
	for i := range 52 {
		if first[i] < 800 || first[i] > 1200 || last[i] < 800 || last[i] > 1200 {
			t.Errorf("card %v: first %d times, last %d times in %d deals (want about 1000)", CardAt(i), first[i], last[i], deals)
		}
	}
	if stays[0] < 800 || stays[51] < 800 {
		t.Errorf("AS stays first %d times, KC stays last %d times (want about 1000)", stays[0], stays[51])
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSplitMix64Reference(t *testing.T) {
	// The published SplitMix64 outputs for seed 0.
	want := []uint64{0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F}
	g := splitMix64{state: 0}
	for i, w := range want {
		if got := g.next(); got != w {
			t.Fatalf("draw %d from seed 0 = %#016x, want %#016x", i+1, got, w)
		}
	}
	if gamma := uint64(golden); g.state != 3*gamma {
		t.Fatalf("state after 3 draws = %#x, want 3 times the golden gamma", g.state)
	}
}

const golden = 0x9E3779B97F4A7C15

// seedFor returns a generator whose next draw is exactly x, by inverting
// SplitMix64's output function (a bijection on 64-bit words).
func seedFor(t *testing.T, x uint64) splitMix64 {
	t.Helper()
	unxor := func(y uint64, k uint) uint64 { // inverse of y ^= y >> k
		r := y
		for s := k; s < 64; s += k {
			r ^= y >> s
		}
		return r
	}
	inv := func(a uint64) uint64 { // inverse of an odd a modulo 2^64
		r := a
		for range 6 {
			r *= 2 - a*r
		}
		return r
	}
	z := unxor(x, 31)
	z *= inv(0x94D049BB133111EB)
	z = unxor(z, 27)
	z *= inv(0xBF58476D1CE4E5B9)
	z = unxor(z, 30)
	g := splitMix64{state: z - golden}
	if probe := g; probe.next() != x {
		t.Fatalf("seedFor(%#x): inversion is wrong", x)
	}
	return g
}

func TestBelowRejection(t *testing.T) {
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	// limit is 2^64 - (2^64 mod k), worked out with big numbers so as not
	// to repeat the code under test: draws below it are kept.
	limit := func(k uint64) uint64 {
		kb := new(big.Int).SetUint64(k)
		rem := new(big.Int).Mod(two64, kb)
		l := new(big.Int).Sub(two64, rem)
		if l.Cmp(two64) == 0 {
			return 0 // every draw is kept; 0 stands for 2^64
		}
		return l.Uint64()
	}
	ks := []uint64{2, 3, 7, 52, 51, 1 << 32, 1<<63 + 1, 10000000000000000000, 1<<64 - 1}
	for _, k := range ks {
		lim := limit(k)
		t.Run(big.NewInt(0).SetUint64(k).String(), func(t *testing.T) {
			// The largest kept draw is kept, after one draw.
			g := seedFor(t, lim-1)
			start := g.state
			if got := g.below(k); got != (lim-1)%k {
				t.Errorf("below(%d) on draw limit-1 = %d, want %d", k, got, (lim-1)%k)
			}
			if g.state != start+golden {
				t.Errorf("below(%d) on a kept draw used %d draws, want 1", k, (g.state-start)/golden)
			}
			if lim == 0 {
				return // k is a power of two: no draw is ever rejected
			}
			// The smallest rejected draw is rejected: the answer comes from
			// the first later draw below the limit.
			g = seedFor(t, lim)
			start = g.state
			after := splitMix64{state: start + golden}
			draws, x := 2, after.next()
			for x >= lim {
				draws, x = draws+1, after.next()
			}
			if got := g.below(k); got != x%k {
				t.Errorf("below(%d) after rejecting %#x = %d, want %d (from draw %d, %#x)", k, lim, got, x%k, draws, x)
			}
			if g.state != start+uint64(draws)*golden {
				t.Errorf("below(%d) used %d draws, want %d", k, (g.state-start)/golden, draws)
			}
			// The largest draw of all is rejected too.
			g = seedFor(t, 1<<64-1)
			start = g.state
			g.below(k)
			if g.state == start+golden {
				t.Errorf("below(%d) kept the draw 2^64-1", k)
			}
		})
	}
	t.Run("power of two keeps every draw", func(t *testing.T) {
		g := seedFor(t, 1<<64-1)
		start := g.state
		if got := g.below(1 << 63); got != 1<<63-1 {
			t.Errorf("below(2^63) on draw 2^64-1 = %d", got)
		}
		if g.state != start+golden {
			t.Errorf("below(2^63) rejected a draw")
		}
	})
	t.Run("seed 0", func(t *testing.T) {
		// With seed 0 the first draw (0xE220...) is at least 2^63 + 1 and is
		// rejected for k = 2^63 + 1; the second (0x6E78...) is kept.
		g := splitMix64{state: 0}
		if got := g.below(1<<63 + 1); got != 0x6E789E6AA1B965F4 {
			t.Errorf("below(2^63+1) from seed 0 = %#x, want 0x6E789E6AA1B965F4", got)
		}
		g = splitMix64{state: 0}
		if got := g.below(52); got != 0xE220A8397B1DCDAF%52 {
			t.Errorf("below(52) from seed 0 = %d, want %d", got, uint64(0xE220A8397B1DCDAF%52))
		}
		g = splitMix64{state: 0}
		if got := g.below(1); got != 0 || g.state != golden {
			t.Errorf("below(1) = %d using %d draws, want 0 using 1", got, g.state/golden)
		}
	})
}
