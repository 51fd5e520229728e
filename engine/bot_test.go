package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseLevel(t *testing.T) {
	if got := Levels(); !slices.Equal(got, []Level{Easy, Medium, Hard, Expert}) {
		t.Fatalf("Levels() = %v", got)
	}
	for _, l := range Levels() {
		for _, s := range []string{l.String(), strings.ToUpper(l.String())} {
			p, err := ParseLevel(s)
			if err != nil || p != l {
				t.Errorf("ParseLevel(%q) = %v, %v; want %v", s, p, err, l)
			}
		}
		b, err := json.Marshal(map[string]Level{"level": l})
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]Level
		if err := json.Unmarshal(b, &back); err != nil || back["level"] != l {
			t.Errorf("JSON round trip of %v: %s -> %v, %v", l, b, back, err)
		}
	}
	for _, s := range []string{"", "master", "easy ", "0"} {
		if _, err := ParseLevel(s); err == nil {
			t.Errorf("ParseLevel(%q) succeeded", s)
		}
	}
	if s := Level(0).String(); s != "Level(0)" {
		t.Errorf("Level(0).String() = %q", s)
	}
	if _, err := Level(9).MarshalText(); err == nil {
		t.Error("Level(9) marshalled")
	}
	defer func() {
		if recover() == nil {
			t.Error("NewBot(0, 1) did not panic")
		}
	}()
	NewBot(0, 1)
}

func TestChooseWithNoMoves(t *testing.T) {
	rules, _ := Variant("classic")
	g := New(rules, 1)
	v := g.Memory()
	for _, l := range Levels() {
		if m, ok := NewBot(l, 1).Choose(&v, nil); ok {
			t.Errorf("%v chose %v from no moves", l, m)
		}
	}
}

// A View that is not a position of its variant gets a legal move back, not
// a panic.
func TestChooseOnBadViews(t *testing.T) {
	rules, _ := Variant("classic")
	g := New(rules, 3)
	for range 5 {
		g.Apply(g.Moves()[len(g.Moves())-1])
	}
	legal := g.Moves()
	bad := map[string]func(v *View){
		"unknown variant":  func(v *View) { v.Variant = "nope" },
		"negative stock":   func(v *View) { v.Stock = -3 },
		"stock too big":    func(v *View) { v.Stock += 5 },
		"card twice":       func(v *View) { v.Waste[2].Cards = append(v.Waste[2].Cards, v.Turned[0]); v.Waste[2].Count++ },
		"no such card":     func(v *View) { v.Turned[0] = NewCard(King, 7) },
		"too many turned":  func(v *View) { v.Turned = append(v.Turned, v.Turned...) },
		"negative count":   func(v *View) { v.Foundations[0] = FoundationView{Top: v.Turned[0], Count: -1} },
		"foundation rank":  func(v *View) { v.Foundations[1] = FoundationView{Top: NewCard(7, Clubs), Count: 2} },
		"fewer than shown": func(v *View) { v.Waste[0].Cards = []Card{NewCard(5, Spades)}; v.Waste[0].Count = 0 },
	}
	for name, spoil := range bad {
		v := g.Memory()
		spoil(&v)
		for _, l := range Levels() {
			m, ok := NewBot(l, 1).Choose(&v, legal)
			if !ok || !contains(legal, m) {
				t.Errorf("%s, %v: chose %v, %v", name, l, m, ok)
			}
		}
	}
}

// testBot is a bot of the given level; with quick, a hard bot tries fewer
// hypothetical stocks, and an expert fewer draws with a smaller solver
// budget, which changes how well they play but not which moves they may
// pick from (the candidates come from the same code).
func testBot(l Level, seed uint64, quick bool) *Bot {
	b := NewBot(l, seed)
	if quick {
		b.rounds = [2]int{1, 1}
		b.expert = quickExpert
	}
	return b
}

// quickExpert is the expert's configuration in the slow tests: the same
// code, a few draws and a small budget.
var quickExpert = expertConfig{samples: 2, nodes: 60, maxCands: 8, margin: 1}

// playChecked plays a whole game like PlayBot, checking each step: the
// bot's move is one of the legal moves and the engine accepts it.
func playChecked(t *testing.T, rules *Rules, deal uint64, b *Bot) (Game, []Move) {
	t.Helper()
	g := New(rules, deal)
	var moves []Move
	for g.Status() == Playing {
		if len(moves) >= MaxBotMoves {
			t.Fatalf("%s deal %d: %v bot still playing after %d moves", rules.Name, deal, b.level, len(moves))
		}
		legal := g.Moves()
		v := g.Memory()
		m, ok := b.Choose(&v, legal)
		if !ok {
			t.Fatalf("%s deal %d: %v bot found no move among %v", rules.Name, deal, b.level, legal)
		}
		if !contains(legal, m) {
			t.Fatalf("%s deal %d: %v bot chose %v, not among %v", rules.Name, deal, b.level, m, legal)
		}
		if err := g.Apply(m); err != nil {
			t.Fatalf("%s deal %d: %v bot: %v", rules.Name, deal, b.level, err)
		}
		moves = append(moves, m)
	}
	if s := g.Status(); s != Won && s != Stuck {
		t.Fatalf("%s deal %d: %v bot ended %v", rules.Name, deal, b.level, s)
	}
	return g, moves
}

// Every level plays every variant to its end with legal moves only, never
// near the move cap, and the same seed plays the same game.
func TestBotPlaysEveryVariant(t *testing.T) {
	deals, fullHard := 300, 20
	expertDeals, fullExpert, expertReplays := 6, 1, uint64(1)
	if testing.Short() || raceEnabled {
		deals, fullHard = 40, 2
		expertDeals, fullExpert, expertReplays = 1, 0, 0
	}
	for _, rules := range Variants() {
		for _, l := range Levels() {
			t.Run(rules.Name+"/"+l.String(), func(t *testing.T) {
				longest := 0
				seed := uint64(len(rules.Name))*31 + uint64(l)
				b := testBot(l, seed, l == Expert && fullExpert == 0)
				n := deals
				if l == Expert {
					n = expertDeals
				}
				for deal := range uint64(n) {
					if (l == Hard && deal == uint64(fullHard)) || (l == Expert && deal == uint64(fullExpert)) {
						b = testBot(l, seed, true)
					}
					_, moves := playChecked(t, rules, deal, b)
					longest = max(longest, len(moves))
				}
				// PlayBot plays the same game for the same seed, twice.
				replays := uint64(5)
				if l == Expert {
					replays = expertReplays
					if rules.Name == DefaultVariant {
						replays = 1
					}
				}
				for deal := range replays {
					quick := l == Hard || l == Expert
					g1, m1 := PlayBot(rules, deal, testBot(l, seed, quick))
					g2, m2 := PlayBot(rules, deal, testBot(l, seed, quick))
					_, m3 := playChecked(t, rules, deal, testBot(l, seed, quick))
					if !slices.Equal(m1, m2) || !slices.Equal(m1, m3) || g1.Status() != g2.Status() {
						t.Fatalf("deal %d: the same seed played different games", deal)
					}
					rec := RecordOf(&g1, m1)
					if _, err := rec.Replay(); err != nil {
						t.Fatalf("deal %d: replay: %v", deal, err)
					}
				}
				if longest >= MaxBotMoves/4 {
					t.Errorf("a game took %d moves, too close to the cap of %d", longest, MaxBotMoves)
				}
			})
		}
	}
}

// positions plays each variant's first deals with the medium bot and calls
// visit at every position where the player has a choice to make.
func positions(t *testing.T, deals int, visit func(g *Game)) {
	t.Helper()
	for _, rules := range Variants() {
		for deal := range uint64(deals) {
			g := New(rules, deal)
			b := NewBot(Medium, deal)
			for g.Status() == Playing {
				legal := g.Moves()
				if len(legal) > 1 {
					visit(&g)
				}
				v := g.Memory()
				m, _ := b.Choose(&v, legal)
				if err := g.Apply(m); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// The hypothetical game the bot thinks on shows exactly what the real game
// shows, has the same legal moves, and its unseen cards are, rank for rank
// (card for card in suit), the real game's face-down and hidden cards.
func TestGameFromView(t *testing.T) {
	n := 0
	positions(t, 20, func(g *Game) {
		for _, hide := range []bool{false, true} {
			v := g.view(hide)
			pool, ok := unseenCards(g.rules, &v)
			if !ok {
				t.Fatalf("%s: unseenCards refused %s", g.rules.Name, g)
			}
			legal := g.Moves()
			h := gameFromView(g.rules, &v, pool, 7)
			if hv := h.view(hide); !reflect.DeepEqual(hv, v) {
				t.Fatalf("%s: view %+v\nrebuilt as %+v", g.rules.Name, v, hv)
			}
			if hm := h.Moves(); !sameMoves(hm, legal) {
				t.Fatalf("%s: moves %v, rebuilt %v (%s)", g.rules.Name, legal, hm, g)
			}
			// The real unseen cards: the stock, and hidden waste cards.
			var real []Card
			real = append(real, g.stock[g.next:g.stockN]...)
			if hide {
				for p := range 4 {
					if n := int(g.wasteN[p]); n > 1 {
						real = append(real, g.waste[p][:n-1]...)
					}
				}
			}
			key := func(c Card) int {
				if g.rules.InSuit {
					return int(c)
				}
				return int(c.Rank())
			}
			var a, b []int
			for _, c := range pool {
				a = append(a, key(c))
			}
			for _, c := range real {
				b = append(b, key(c))
			}
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				t.Fatalf("%s: unseen %v, really %v", g.rules.Name, pool, real)
			}
			n++
		}
	})
	t.Logf("%d positions", n)
}

func sameMoves(a, b []Move) bool {
	if len(a) != len(b) {
		return false
	}
	for _, m := range a {
		if !contains(b, m) {
			return false
		}
	}
	return true
}

// hideStock returns a copy of g that looks the same to the player but whose
// face-down stock is in another order, shuffled redeals draw differently,
// and whose deal number differs: everything a player cannot see is changed.
// It reports false when there is nothing to change.
func hideStock(g *Game, rng *rand.Rand) (Game, bool) {
	h := *g
	st := h.stock[h.next:h.stockN]
	if len(st) < 2 {
		return h, false
	}
	for range 10 {
		rng.Shuffle(len(st), func(i, j int) { st[i], st[j] = st[j], st[i] })
		if !slices.Equal(st, g.stock[g.next:g.stockN]) {
			break
		}
	}
	h.rng = splitMix64{state: rng.Uint64()}
	h.deal = rng.Uint64()
	return h, true
}

// countPeeks plays choose on pairs of positions that look the same to the
// player but differ in what the player cannot see, and counts how often the
// choices differ, out of how many pairs.
func countPeeks(t *testing.T, deals int, choose func(g *Game) Move) (differ, pairs int) {
	return countPeeksEvery(t, deals, 1, choose)
}

// countPeeksEvery is countPeeks at every every-th position only.
func countPeeksEvery(t *testing.T, deals, every int, choose func(g *Game) Move) (differ, pairs int) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	positions(t, deals, func(g *Game) {
		if n++; (n-1)%every != 0 {
			return
		}
		h, ok := hideStock(g, rng)
		if !ok {
			return
		}
		if !reflect.DeepEqual(g.Memory(), h.Memory()) || !slices.Equal(g.Moves(), h.Moves()) {
			t.Fatalf("hideStock changed what the player sees")
		}
		pairs++
		if choose(g) != choose(&h) {
			differ++
		}
	})
	return differ, pairs
}

// The bot does not peek: shown two games that look the same (the same
// Memory, the same legal moves) but whose face-down stocks are in different
// orders, a bot of each level with the same seed makes the same choice. The
// check can fail: a player that does look at the stock (the same playouts
// as the hard bot, on the true stock) is caught by it.
func TestBotDoesNotPeek(t *testing.T) {
	deals := scaled(3)
	for _, l := range Levels() {
		every, min := 1, 100
		if l == Expert {
			every, min = 15, 100/15 // the expert is slower: one position in 15
		}
		differ, pairs := countPeeksEvery(t, deals, every, func(g *Game) Move {
			v := g.Memory()
			m, _ := testBot(l, 42, l == Expert).Choose(&v, g.Moves())
			return m
		})
		if pairs < min || differ != 0 {
			t.Errorf("%v: %d of %d pairs of identical-looking positions got different moves", l, differ, pairs)
		}
	}
	differ, pairs := countPeeks(t, deals, func(g *Game) Move {
		// A cheat: try each legal move and play on with the true stock.
		best, bestScore := Move{}, -1
		for _, m := range g.Moves() {
			h := *g
			if h.Apply(m) != nil {
				continue
			}
			h.playout()
			if h.Score() > bestScore {
				best, bestScore = m, h.Score()
			}
		}
		return best
	})
	if differ == 0 {
		t.Errorf("the check did not catch a player who reads the stock (%d pairs)", pairs)
	}
	t.Logf("a peeking player chose differently in %d of %d pairs", differ, pairs)
}

type levelStats struct {
	games, won, score int
	moves             int
	elapsed           time.Duration
}

func (s levelStats) String() string {
	return fmt.Sprintf("won %5.2f%%  average score %5.2f  %5.1f moves/game  %v/game",
		100*float64(s.won)/float64(s.games), float64(s.score)/float64(s.games),
		float64(s.moves)/float64(s.games), (s.elapsed / time.Duration(s.games)).Round(time.Microsecond))
}

func playLevel(rules *Rules, l Level, first, deals uint64, seed uint64) (levelStats, []int) {
	b := NewBot(l, seed)
	var s levelStats
	scores := make([]int, 0, deals)
	start := time.Now()
	for deal := first; deal < first+deals; deal++ {
		g, moves := PlayBot(rules, deal, b)
		s.games++
		s.score += g.Score()
		s.moves += len(moves)
		if g.Status() == Won {
			s.won++
		}
		scores = append(scores, g.Score())
	}
	s.elapsed = time.Since(start)
	return s, scores
}

// Better levels score more on average: medium beats easy over 2,000 classic
// deals, and hard beats medium on the first 200 of them (hard is slower; the
// gap, near 5 points, is several standard errors wide even at 100 deals).
func TestBotLevelsOrdered(t *testing.T) {
	rules, _ := Variant("classic")
	deals, hardDeals := uint64(2000), uint64(200)
	if testing.Short() || raceEnabled {
		deals, hardDeals = 500, 30
	}
	easy, _ := playLevel(rules, Easy, 0, deals, 1)
	medium, mediumScores := playLevel(rules, Medium, 0, deals, 1)
	hard, hardScores := playLevel(rules, Hard, 0, hardDeals, 1)
	t.Logf("easy   over %d classic deals: %v", deals, easy)
	t.Logf("medium over %d classic deals: %v", deals, medium)
	t.Logf("hard   over %d classic deals: %v", hardDeals, hard)
	if easy.score >= medium.score {
		t.Errorf("easy scored %d in all, medium %d", easy.score, medium.score)
	}
	mediumOnHardDeals := 0
	for _, s := range mediumScores[:hardDeals] {
		mediumOnHardDeals += s
	}
	hardTotal := 0
	for _, s := range hardScores {
		hardTotal += s
	}
	if hardTotal <= mediumOnHardDeals {
		t.Errorf("on the first %d deals hard scored %d in all, medium %d", hardDeals, hardTotal, mediumOnHardDeals)
	}
}

// TestBotReport prints each level's win rate and average score, when asked:
//
//	SIRTOMMY_BOT_REPORT=10000 go test ./engine -run TestBotReport -v -timeout 0
//
// plays deals 0 to 9999 of every variant (or of those listed, comma
// separated, in SIRTOMMY_BOT_VARIANTS) at every level (or those listed in
// SIRTOMMY_BOT_LEVELS), with seed 1.
func TestBotReport(t *testing.T) {
	n, _ := strconv.ParseUint(os.Getenv("SIRTOMMY_BOT_REPORT"), 10, 64)
	if n == 0 {
		t.Skip("set SIRTOMMY_BOT_REPORT to a number of deals")
	}
	names := VariantNames()
	if s := os.Getenv("SIRTOMMY_BOT_VARIANTS"); s != "" {
		names = strings.Split(s, ",")
	}
	levels := Levels()
	if s := os.Getenv("SIRTOMMY_BOT_LEVELS"); s != "" {
		levels = nil
		for _, name := range strings.Split(s, ",") {
			l, err := ParseLevel(name)
			if err != nil {
				t.Fatal(err)
			}
			levels = append(levels, l)
		}
	}
	for _, name := range names {
		rules, err := Variant(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range levels {
			s, _ := playLevel(rules, l, 0, n, 1)
			t.Logf("%-18s %-6v %d deals: %v", rules.Name, l, n, s)
		}
	}
}

// BenchmarkBotGame plays one whole classic game per op, a new deal each time.
func BenchmarkBotGame(b *testing.B) {
	rules, _ := Variant("classic")
	for _, l := range Levels() {
		b.Run(l.String(), func(b *testing.B) {
			bot := NewBot(l, 1)
			deal := uint64(0)
			for b.Loop() {
				PlayBot(rules, deal, bot)
				deal++
			}
		})
	}
}

// Between two turns of four-at-a-time the next four are face down: a bot
// chooses between waste moves and T without them. Shown two games that
// differ only in the next four (swapped with other cards of the stock), a
// bot of each level with the same seed makes the same choice, and so
// plays on the same; a player that looks at the next four is caught.
func TestBotDoesNotPeekBetweenTurns(t *testing.T) {
	rules := mustVariant(t, "four-at-a-time")
	rng := rand.New(rand.NewPCG(7, 8))
	// swapped is g with its next four exchanged with four later cards of
	// the stock, or false where the stock holds too few.
	swapped := func(g *Game) (Game, bool) {
		h := *g
		st := h.stock[h.next:h.stockN]
		if len(st) < 8 {
			return h, false
		}
		for i := range 4 {
			j := 4 + rng.IntN(len(st)-4)
			st[i], st[j] = st[j], st[i]
		}
		return h, !slices.Equal(st[:4], g.stock[g.next:g.next+4])
	}
	cheat := func(g *Game) Move {
		// Turns first when the next four hold a card that fits a
		// foundation, to keep a waste top's foundation for it.
		for _, c := range g.stock[g.next : g.next+4] {
			if g.fitsAny(c) {
				return TurnMove
			}
		}
		return g.Moves()[0]
	}
	for _, l := range Levels() {
		deals := uint64(scaled(40))
		if l == Expert {
			deals = uint64(scaled(4))
		}
		pairs, differ, cheats := 0, 0, 0
		for deal := range deals {
			g := New(rules, deal)
			b := testBot(l, deal, l == Expert)
			for g.Status() == Playing {
				legal := g.Moves()
				if g.handN == 0 && len(legal) > 1 {
					if h, ok := swapped(&g); ok {
						vg, vh := g.Memory(), h.Memory()
						if !reflect.DeepEqual(vg, vh) || !slices.Equal(legal, h.Moves()) {
							t.Fatalf("deal %d: swapping the next four changed what the player sees", deal)
						}
						if len(vg.Turned) != 0 {
							t.Fatalf("deal %d: between turns the view shows %v turned", deal, vg.Turned)
						}
						a := *b
						c := *b
						a.rng, c.rng = rand.New(rand.NewPCG(deal, uint64(pairs))), rand.New(rand.NewPCG(deal, uint64(pairs)))
						ma, _ := a.Choose(&vg, legal)
						mc, _ := c.Choose(&vh, h.Moves())
						pairs++
						if ma != mc {
							differ++
						}
						if cheat(&g) != cheat(&h) {
							cheats++
						}
					}
				}
				v := g.Memory()
				m, _ := b.Choose(&v, legal)
				if err := g.Apply(m); err != nil {
					t.Fatalf("deal %d: %v", deal, err)
				}
			}
		}
		minPairs := 20 // of 40 deals, or 10 under -short and -race
		if l == Expert {
			minPairs = 2 // of 4 deals, or 1
		}
		if pairs < minPairs || differ != 0 {
			t.Errorf("%v: %d of %d pairs differing only in the next four got different moves", l, differ, pairs)
		}
		if cheats == 0 {
			t.Errorf("%v: the check did not catch a player who reads the next four (%d pairs)", l, pairs)
		}
		t.Logf("%v: %d pairs between turns; a peeking player chose differently in %d", l, pairs, cheats)
	}
}
