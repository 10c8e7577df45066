package agentlib

import (
	_ "embed" // for go:embed
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/itchyny/gojq"
)

// PricesJSON is the price table agentjq ships: Anthropic's published
// per-model prices, dated, with their source (see its "about").
//
//go:embed prices.json
var PricesJSON []byte

// Price is one model's prices in USD per million tokens.
type Price struct {
	Input        float64 `json:"input"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
	Output       float64 `json:"output"`
}

// Prices is a price table: prices.json's shape.
type Prices struct {
	AsOf   string           `json:"as_of"`
	Source string           `json:"source"`
	Models map[string]Price `json:"models"`
}

// DefaultPrices is the shipped table.
func DefaultPrices() *Prices {
	p, err := ParsePrices(PricesJSON, "prices.json")
	if err != nil {
		panic("agentlib: " + err.Error())
	}
	return p
}

// ParsePrices reads a price table; errors name the file.
func ParsePrices(b []byte, name string) (*Prices, error) {
	var p Prices
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var raw struct {
		AsOf   string                     `json:"as_of"`
		Source string                     `json:"source"`
		Unit   string                     `json:"unit"`
		About  string                     `json:"about"`
		Models map[string]json.RawMessage `json:"models"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(raw.Models) == 0 {
		return nil, fmt.Errorf(`%s: no "models"`, name)
	}
	p.AsOf, p.Source, p.Models = raw.AsOf, raw.Source, map[string]Price{}
	for m, v := range raw.Models {
		var pr Price
		d := json.NewDecoder(strings.NewReader(string(v)))
		d.DisallowUnknownFields()
		if err := d.Decode(&pr); err != nil {
			return nil, fmt.Errorf("%s: model %q: %w", name, m, err)
		}
		p.Models[m] = pr
	}
	return &p, nil
}

// With returns the table with o's models added or replacing these, and
// o's date and source when it names them.
func (p *Prices) With(o *Prices) *Prices {
	out := &Prices{AsOf: p.AsOf, Source: p.Source, Models: maps.Clone(p.Models)}
	if o.AsOf != "" {
		out.AsOf = o.AsOf
	}
	if o.Source != "" {
		out.Source = o.Source
	}
	maps.Copy(out.Models, o.Models)
	return out
}

var dated = regexp.MustCompile(`-(\d{8}|latest)$`)

// Lookup finds a model by its id, else without a "[1m]" suffix and a
// -YYYYMMDD date (claude-sonnet-4-20250514 is claude-sonnet-4).
func (p *Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p.Models[model]; ok {
		return pr, true
	}
	m := strings.TrimSuffix(model, "[1m]")
	m = dated.ReplaceAllString(m, "")
	pr, ok := p.Models[m]
	return pr, ok
}

// InputsFunction is _inputs, the rest of the input, as jq's inputs, for
// the whole-input definitions of agent.jq (daily_report...): gojq does not
// compile a definition calling inputs without an input iterator, and
// agent.jq is part of every program, so it calls _inputs, which yields
// nothing where there is no stream (nil).
func InputsFunction(in gojq.Iter) gojq.CompilerOption {
	return gojq.WithIterFunction("_inputs", 0, 0, func(any, []any) gojq.Iter {
		if in == nil {
			return gojq.NewIter[any]()
		}
		return in
	})
}

// PriceFunctions are _price(model), a model's prices as an object (null
// when the table has none), and _prices, the table, for agent.jq.
func PriceFunctions(p *Prices) []gojq.CompilerOption {
	return []gojq.CompilerOption{
		gojq.WithFunction("_price", 1, 1, func(_ any, args []any) any {
			model, _ := args[0].(string)
			pr, ok := p.Lookup(model)
			if !ok {
				return nil
			}
			return map[string]any{"input": pr.Input, "cache_write_5m": pr.CacheWrite5m, "cache_write_1h": pr.CacheWrite1h,
				"cache_read": pr.CacheRead, "output": pr.Output}
		}),
		gojq.WithFunction("_prices", 0, 0, func(any, []any) any {
			models := map[string]any{}
			for m, pr := range p.Models {
				models[m] = map[string]any{"input": pr.Input, "cache_write_5m": pr.CacheWrite5m, "cache_write_1h": pr.CacheWrite1h,
					"cache_read": pr.CacheRead, "output": pr.Output}
			}
			return map[string]any{"as_of": p.AsOf, "source": p.Source, "models": models}
		}),
	}
}
