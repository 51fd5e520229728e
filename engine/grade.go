package engine

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
)

// Deal grades: how hard a deal is for a player who does not know the
// stock, from what the hard bot (NewBot(Hard, deal), as `odds --bot hard`
// plays it) achieves on it. The grades of a range of deals are computed by
// `sirtommy grade` and shipped in grades/ (see docs/solver.md).

// Grade is a deal's difficulty.
type Grade uint8

// The grades, easiest first.
const (
	// GradeEasy: the hard bot wins the deal.
	GradeEasy Grade = iota + 1
	// GradeMedium: it loses with at least GradeMediumScore cards up.
	GradeMedium
	// GradeHard: it loses with fewer.
	GradeHard
)

// GradeMediumScore is the score from which a deal the hard bot loses is
// medium rather than hard. Of classic deals 1-3,000, 830 are easy (27.7%),
// 1,301 medium (43.4%) and 869 hard (29.0%).
const GradeMediumScore = 40

var gradeNames = [...]string{GradeEasy: "easy", GradeMedium: "medium", GradeHard: "hard"}

// Grades lists the grades, easiest first.
func Grades() []Grade { return []Grade{GradeEasy, GradeMedium, GradeHard} }

// String is the grade's name: "easy", "medium" or "hard".
func (g Grade) String() string {
	if g >= GradeEasy && g <= GradeHard {
		return gradeNames[g]
	}
	return fmt.Sprintf("Grade(%d)", uint8(g))
}

// letter is the grade's letter in the grade files: e, m or h.
func (g Grade) letter() byte { return gradeNames[g][0] }

// ParseGrade reads a grade's name, case-insensitively.
func ParseGrade(s string) (Grade, error) {
	for _, g := range Grades() {
		if strings.EqualFold(s, gradeNames[g]) {
			return g, nil
		}
	}
	return 0, fmt.Errorf("engine: unknown grade %q (known: easy, medium, hard)", s)
}

// GradeOf is how the hard bot grades a game it played: easy if won, medium
// if lost with at least GradeMediumScore cards up, else hard.
func GradeOf(won bool, score int) Grade {
	switch {
	case won:
		return GradeEasy
	case score >= GradeMediumScore:
		return GradeMedium
	}
	return GradeHard
}

// GradeDeal plays deal with the hard bot, seeded with the deal number, and
// grades it, with the bot's final game: what `sirtommy grade --deal N`
// prints, and what the shipped grades were computed with.
func GradeDeal(rules *Rules, deal uint64) (Grade, Game) {
	g, _ := PlayBot(rules, deal, NewBot(Hard, deal))
	return GradeOf(g.Status() == Won, g.Score()), g
}

//go:embed grades/*.txt
var gradeFiles embed.FS

// GradeTable is the shipped grades of one variant's deals First to
// First+len(Grades)-1.
type GradeTable struct {
	Variant string
	First   uint64
	Grades  []Grade
}

// Deals lists the deal numbers of grade g, in order.
func (t *GradeTable) Deals(g Grade) []uint64 {
	var ds []uint64
	for i, x := range t.Grades {
		if x == g {
			ds = append(ds, t.First+uint64(i))
		}
	}
	return ds
}

// Grade is deal's grade, or false outside the table.
func (t *GradeTable) Grade(deal uint64) (Grade, bool) {
	if deal < t.First || deal-t.First >= uint64(len(t.Grades)) {
		return 0, false
	}
	return t.Grades[deal-t.First], true
}

// String writes the table as a grade file: comment lines, a line
// "VARIANT FIRST COUNT", then the grades' letters, 60 to a line.
func (t *GradeTable) String() string {
	var b strings.Builder
	last := t.First + uint64(len(t.Grades)) - 1
	fmt.Fprintf(&b, "# Deal grades, %s deals %d-%d: e (the hard bot, seeded with the deal number, wins),\n", t.Variant, t.First, last)
	fmt.Fprintf(&b, "# m (it loses with %d or more cards up), h (it loses with fewer). Rebuilt with\n", GradeMediumScore)
	fmt.Fprintf(&b, "# go run ./cmd/sirtommy grade --variant %s --deals %d-%d > engine/grades/%s.txt\n", t.Variant, t.First, last, t.Variant)
	fmt.Fprintf(&b, "%s %d %d\n", t.Variant, t.First, len(t.Grades))
	for i, g := range t.Grades {
		b.WriteByte(g.letter())
		if (i+1)%60 == 0 || i == len(t.Grades)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ParseGradeTable reads a grade file (see String).
func ParseGradeTable(text string) (*GradeTable, error) {
	var t *GradeTable
	want := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if t == nil {
			f := strings.Fields(line)
			if len(f) != 3 {
				return nil, fmt.Errorf("engine: grade file: header %q is not VARIANT FIRST COUNT", line)
			}
			first, err1 := strconv.ParseUint(f[1], 10, 64)
			n, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil || n <= 0 {
				return nil, fmt.Errorf("engine: grade file: bad header %q", line)
			}
			t, want = &GradeTable{Variant: f[0], First: first, Grades: make([]Grade, 0, n)}, n
			continue
		}
		for i := range len(line) {
			g := Grade(0)
			for _, x := range Grades() {
				if x.letter() == line[i] {
					g = x
				}
			}
			if g == 0 {
				return nil, fmt.Errorf("engine: grade file: %q is no grade", line[i])
			}
			t.Grades = append(t.Grades, g)
		}
	}
	if t == nil || len(t.Grades) != want {
		return nil, fmt.Errorf("engine: grade file: wrong number of grades")
	}
	return t, nil
}

// Graded is the shipped grade table of the variant, or false when its
// deals are not graded.
func Graded(variant string) (*GradeTable, bool) {
	rules, err := Variant(variant)
	if err != nil {
		return nil, false
	}
	b, err := gradeFiles.ReadFile("grades/" + rules.Name + ".txt")
	if err != nil {
		return nil, false
	}
	t, err := ParseGradeTable(string(b))
	if err != nil || t.Variant != rules.Name {
		panic("engine: the shipped grades of " + rules.Name + " do not read: " + fmt.Sprint(err))
	}
	return t, true
}

// GradedVariants lists the variants whose deals are graded.
func GradedVariants() []string {
	var names []string
	for _, n := range VariantNames() {
		if _, ok := Graded(n); ok {
			names = append(names, n)
		}
	}
	return names
}
