package web_test

import (
	"net/http"
	"testing"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/web"
)

func TestVariantsEndpointListsEveryVariant(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	var got []web.VariantInfo
	if st := e.get("/api/variants", &got); st != http.StatusOK {
		t.Fatalf("GET /api/variants: %d", st)
	}
	names := engine.VariantNames()
	if len(got) != len(names) {
		t.Fatalf("listed %d variants, the engine has %d", len(got), len(names))
	}
	for i, v := range got {
		r, err := engine.Variant(v.Name)
		if err != nil || v.Name != names[i] || v.Summary != r.Summary || v.Summary == "" || v.Cards != r.Deck() {
			t.Errorf("variant %d listed as %+v (%v)", i, v, err)
		}
	}
	if got[0].Name != "classic" {
		t.Errorf("the default comes first, got %q", got[0].Name)
	}
}
