package rendergate

import "container/list"

// verdicts remembers the verdicts of the last n plan IDs used, evicting the
// least recently used. It is not safe for concurrent use.
type verdicts struct {
	n     int
	order *list.List // of *verdictEntry, most recently used first
	byID  map[string]*list.Element
}

type verdictEntry struct {
	id string
	v  Verdict
}

func newVerdicts(n int) *verdicts {
	return &verdicts{n: n, order: list.New(), byID: make(map[string]*list.Element, n)}
}

// get returns the verdict remembered for id (VerdictUnknown if none) and
// marks it used.
func (m *verdicts) get(id string) Verdict {
	e, ok := m.byID[id]
	if !ok {
		return VerdictUnknown
	}
	m.order.MoveToFront(e)
	return e.Value.(*verdictEntry).v
}

// peek returns the verdict remembered for id without marking it used.
func (m *verdicts) peek(id string) Verdict {
	if e, ok := m.byID[id]; ok {
		return e.Value.(*verdictEntry).v
	}
	return VerdictUnknown
}

// put remembers v for id, evicting the least recently used IDs beyond n.
func (m *verdicts) put(id string, v Verdict) {
	if e, ok := m.byID[id]; ok {
		e.Value.(*verdictEntry).v = v
		m.order.MoveToFront(e)
		return
	}
	m.byID[id] = m.order.PushFront(&verdictEntry{id: id, v: v})
	for m.order.Len() > m.n {
		oldest := m.order.Back()
		m.order.Remove(oldest)
		delete(m.byID, oldest.Value.(*verdictEntry).id)
	}
}
