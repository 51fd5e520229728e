package web

import (
	"net/http"

	"sirtommy/engine"
)

// VariantInfo describes a variant for clients (GET /api/variants).
type VariantInfo struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Cards is how many cards are played (48 when the Kings are removed).
	Cards int `json:"cards"`
}

// variantInfos lists every variant, the default first.
func variantInfos() []VariantInfo {
	var out []VariantInfo
	for _, r := range engine.Variants() {
		out = append(out, VariantInfo{Name: r.Name, Summary: r.Summary, Cards: r.Deck()})
	}
	return out
}

func handleVariants() http.HandlerFunc {
	list := variantInfos() // the rules never change while the server runs
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		writeJSON(w, http.StatusOK, list)
	}
}
