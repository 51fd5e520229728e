package engine

import (
	"slices"
	"testing"
)

func TestParseGrade(t *testing.T) {
	for _, g := range Grades() {
		if p, err := ParseGrade(g.String()); err != nil || p != g {
			t.Errorf("ParseGrade(%q) = %v, %v", g, p, err)
		}
	}
	for _, s := range []string{"", "brutal", "easy "} {
		if _, err := ParseGrade(s); err == nil {
			t.Errorf("ParseGrade(%q) succeeded", s)
		}
	}
	if GradeOf(true, 52) != GradeEasy || GradeOf(false, GradeMediumScore) != GradeMedium || GradeOf(false, GradeMediumScore-1) != GradeHard {
		t.Error("GradeOf does not follow its thresholds")
	}
}

// A grade table reads back as written; bad files are refused.
func TestGradeTableText(t *testing.T) {
	tb := &GradeTable{Variant: "classic", First: 7}
	for i := range 130 {
		tb.Grades = append(tb.Grades, Grades()[i%3])
	}
	back, err := ParseGradeTable(tb.String())
	if err != nil || back.Variant != tb.Variant || back.First != tb.First || !slices.Equal(back.Grades, tb.Grades) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if g, ok := back.Grade(7); !ok || g != GradeEasy {
		t.Errorf("deal 7: %v %v", g, ok)
	}
	if _, ok := back.Grade(6); ok {
		t.Error("deal 6 graded")
	}
	if _, ok := back.Grade(137); ok {
		t.Error("deal 137 graded")
	}
	if ds := back.Deals(GradeHard); len(ds) != 43 || ds[0] != 9 {
		t.Errorf("hard deals %v", ds)
	}
	for _, bad := range []string{"", "classic 1 2\ne\n", "classic 1 1\nx\n", "classic one 1\ne\n"} {
		if _, err := ParseGradeTable(bad); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}

// The shipped grades read, cover all three grades, and are what GradeDeal
// says for a few deals of each (the hard bot is deterministic).
func TestShippedGrades(t *testing.T) {
	names := GradedVariants()
	if !slices.Contains(names, "classic") {
		t.Fatalf("graded variants %v", names)
	}
	for _, name := range names {
		tb, _ := Graded(name)
		rules := mustVariant(t, name)
		for _, g := range Grades() {
			ds := tb.Deals(g)
			if len(ds) < len(tb.Grades)/10 {
				t.Errorf("%s: %d %v deals of %d", name, len(ds), g, len(tb.Grades))
				continue
			}
			for _, d := range ds[:scaled(4)] {
				if got, _ := GradeDeal(rules, d); got != g {
					t.Errorf("%s deal %d: shipped %v, GradeDeal %v", name, d, g, got)
				}
			}
		}
	}
}
