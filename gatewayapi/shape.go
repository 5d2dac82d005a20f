package gatewayapi

// The render context is handed to templates as JSON-shaped values
// (map[string]any, []any, string, int64, bool), built here directly:
// a JSON round trip costs a fifth of a Build. Every key is always
// present, so that templates (which fail on a missing key) can read any
// field of any element.

func (c *renderContext) shape() map[string]any {
	fes := make([]any, 0, len(c.Frontends))
	for _, f := range c.Frontends {
		fes = append(fes, f.shape())
	}
	maps := make(map[string]any, len(c.Maps))
	for n, es := range c.Maps {
		l := make([]any, 0, len(es))
		for _, e := range es {
			if e.shaped != nil {
				l = append(l, e.shaped)
			} else {
				l = append(l, e.shape(n))
			}
		}
		maps[n] = l
	}
	bes := make([]any, 0, len(c.Backends))
	weighted := []any{}
	for _, b := range c.Backends {
		sb := b.shaped
		if sb == nil {
			sb = b.shape()
		}
		bes = append(bes, sb)
		if len(b.Refs) != 1 || b.ErrorWeight > 0 {
			weighted = append(weighted, sb)
		}
	}
	// weightedBackends are the backends that are not one Service port
	// alone: the library renders them apart from the others, which it
	// renders item by item.
	return map[string]any{"namespace": c.Namespace, "name": c.Name, "frontends": fes, "maps": maps, "backends": bes, "weightedBackends": weighted}
}

func (f *frontendIR) shape() map[string]any {
	ls := make([]any, 0, len(f.Listeners))
	for _, l := range f.Listeners {
		ls = append(ls, l)
	}
	certs := make([]any, 0, len(f.Certs))
	for _, c := range f.Certs {
		sni := make([]any, 0, len(c.SNI))
		for _, s := range c.SNI {
			sni = append(sni, s)
		}
		certs = append(certs, map[string]any{"name": c.Name, "namespace": c.Namespace, "secret": c.Secret, "pem": c.PEM, "sni": sni})
	}
	groups := make([]any, 0, len(f.Groups))
	for _, g := range f.Groups {
		if g.shaped != nil {
			groups = append(groups, g.shaped)
		} else {
			groups = append(groups, g.shape())
		}
	}
	sels := make([]any, 0, len(f.Selectors))
	for _, s := range f.Selectors {
		if s.shaped != nil {
			sels = append(sels, s.shaped)
		} else {
			sels = append(sels, s.shape())
		}
	}
	return map[string]any{
		"name": f.Name, "port": int64(f.Port), "protocol": f.Protocol, "terminate": f.Terminate, "mixed": f.Mixed, "listeners": ls,
		"certs": certs, "groups": groups, "selectors": sels,
	}
}

// shape is the entry of map mapName; it names its map, so that a
// template can hand the entries to renderEach one by one.
func (e mapEntryIR) shape(mapName string) map[string]any {
	return map[string]any{"key": e.Key, "value": e.Value, "map": mapName}
}

func (g *groupIR) shape() map[string]any {
	cands := make([]any, 0, len(g.Candidates))
	for _, c := range g.Candidates {
		cands = append(cands, map[string]any{
			"selector": c.Selector, "method": c.Method, "pathRegex": c.PathRegex,
			"headers": matchesShape(c.Headers), "query": matchesShape(c.Query),
		})
	}
	return map[string]any{"id": g.ID, "candidates": cands}
}

func (s *selectorIR) shape() map[string]any {
	choices := make([]any, 0, len(s.Choices))
	for _, c := range s.Choices {
		choices = append(choices, map[string]any{"backend": c.Backend, "lo": c.Lo, "hi": c.Hi})
	}
	return map[string]any{"id": s.ID, "backend": s.Backend, "actions": actionsShape(s.Actions), "choices": choices, "total": s.Total}
}

func matchesShape(ms []valueMatch) []any {
	out := make([]any, 0, len(ms))
	for _, m := range ms {
		out = append(out, map[string]any{"name": m.Name, "value": m.Value, "regex": m.Regex})
	}
	return out
}

func (b *backendSet) shape() map[string]any {
	refs := make([]any, 0, len(b.Refs))
	for _, r := range b.Refs {
		refs = append(refs, map[string]any{"namespace": r.Namespace, "service": r.Service, "port": r.Port, "weight": r.Weight})
	}
	return map[string]any{"name": b.Name, "mode": b.Mode, "h2": b.H2, "refs": refs, "errorWeight": b.ErrorWeight, "timeoutMS": b.TimeoutMS,
		"retryOn": b.RetryOn, "retries": b.Retries, "actions": actionsShape(b.Actions)}
}

func actionsShape(as []*actionIR) []any {
	out := make([]any, 0, len(as))
	for _, a := range as {
		hs := make([]any, 0, len(a.Headers))
		for _, h := range a.Headers {
			hs = append(hs, map[string]any{"key": h.Key, "value": h.Value})
		}
		out = append(out, map[string]any{"kind": a.Kind, "name": a.Name, "value": a.Value, "format": a.Format, "code": a.Code, "n": a.N, "headers": hs})
	}
	return out
}
