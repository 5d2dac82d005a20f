package propagation_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haptic-io/haptic/internal/propagation"
)

// svgElement is one element of a parsed picture.
type svgElement struct {
	Name  string
	Attr  map[string]string
	Text  string
	Class string // of the nearest <g> or its own
}

// parseSVG checks that the picture is well-formed XML with an <svg> root
// and returns its elements in document order.
func parseSVG(t *testing.T, b []byte) []svgElement {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var out []svgElement
	var groups []string
	var open []int // indexes into out of the open elements
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the picture is not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tk.Name.Local
			}
			e := svgElement{Name: tk.Name.Local, Attr: map[string]string{}}
			for _, a := range tk.Attr {
				e.Attr[a.Name.Local] = a.Value
			}
			e.Class = e.Attr["class"]
			if e.Class == "" && len(groups) > 0 {
				e.Class = groups[len(groups)-1]
			}
			if e.Name == "g" {
				groups = append(groups, e.Class)
			}
			out = append(out, e)
			open = append(open, len(out)-1)
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].Text += string(tk)
			}
		case xml.EndElement:
			if out[open[len(open)-1]].Name == "g" {
				groups = groups[:len(groups)-1]
			}
			open = open[:len(open)-1]
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return out
}

func attrFloat(t *testing.T, e svgElement, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.Attr[name], 64)
	if err != nil {
		t.Fatalf("<%s class=%q> attribute %s=%q: %v", e.Name, e.Class, name, e.Attr[name], err)
	}
	return v
}

// yScale reads the y axis from its tick labels: the pixel row of 0 ms and
// the pixels per ms.
func yScale(t *testing.T, els []svgElement) (zero, perMs float64) {
	t.Helper()
	var vals, ys []float64
	for _, e := range els {
		if e.Class == "y-labels" && e.Name == "text" {
			vals = append(vals, attrFloat(t, e, "data-value"))
			ys = append(ys, attrFloat(t, e, "y"))
		}
	}
	if len(vals) < 3 || vals[0] != 0 {
		t.Fatalf("y ticks %v: want at least three, from 0", vals)
	}
	perMs = (ys[len(ys)-1] - ys[0]) / (vals[len(vals)-1] - vals[0])
	for i := range vals {
		if want := ys[0] + perMs*vals[i]; math.Abs(ys[i]-want) > 0.15 {
			t.Fatalf("y tick %v at %v, want %v: the axis is not linear", vals[i], ys[i], want)
		}
	}
	return ys[0], perMs
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func TestWriteSVGDrawsEachRouteAndTheQuantileLinesWhereTheNumbersSay(t *testing.T) {
	// 100 routes: 1..100 ms in a shuffled order; p50 = 50 ms, p99 = 99 ms.
	var lat []time.Duration
	for i := range 100 {
		lat = append(lat, ms(float64((i*37)%100+1)))
	}
	var b bytes.Buffer
	if err := propagation.WriteSVG(&b, propagation.Plot{Title: "route add <local>", Subtitle: "HAProxy 3.4 & more", Latencies: lat, First: 200}); err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, b.Bytes())
	zero, perMs := yScale(t, els)
	// The tick labels sit 4 px below their line; the lines carry no label.
	lineY := func(v float64) float64 { return zero - 4 + perMs*v }

	quantiles := map[string]float64{}
	dots := 0
	var firstDot, lastDot svgElement
	for _, e := range els {
		switch {
		case e.Name == "line" && (e.Class == "p50" || e.Class == "p99"):
			y1, y2 := attrFloat(t, e, "y1"), attrFloat(t, e, "y2")
			v := attrFloat(t, e, "data-value")
			if y1 != y2 || math.Abs(y1-lineY(v)) > 0.15 {
				t.Errorf("%s line at y %v..%v, want %v for %v ms", e.Class, y1, y2, lineY(v), v)
			}
			quantiles[e.Class] = v
		case e.Name == "circle" && e.Class == "routes":
			if dots == 0 {
				firstDot = e
			}
			lastDot = e
			dots++
		}
	}
	if quantiles["p50"] != 50 || quantiles["p99"] != 99 {
		t.Errorf("quantile lines %v, want p50 50 and p99 99", quantiles)
	}
	if dots != 100 {
		t.Errorf("%d dots, want one per route (100)", dots)
	}
	// The first route (index 201) took 1 ms, the last (index 300) 64 ms.
	if got := attrFloat(t, firstDot, "cy"); math.Abs(got-lineY(1)) > 0.15 {
		t.Errorf("first dot at y %v, want %v (1 ms)", got, lineY(1))
	}
	if got := attrFloat(t, lastDot, "cy"); math.Abs(got-lineY(64)) > 0.15 {
		t.Errorf("last dot at y %v, want %v (64 ms)", got, lineY(64))
	}
	var xTicks []string
	for _, e := range els {
		if e.Class == "x-labels" && e.Name == "text" {
			xTicks = append(xTicks, e.Attr["data-value"])
		}
	}
	if len(xTicks) < 3 || xTicks[0] != "220" {
		t.Errorf("x ticks %v: want them to start at the first round index past 201", xTicks)
	}
	if !bytes.Contains(b.Bytes(), []byte("route add &lt;local&gt;")) || !bytes.Contains(b.Bytes(), []byte("3.4 &amp; more")) {
		t.Errorf("title and subtitle not escaped into the picture")
	}
}

func TestWriteSVGDrawsAStallOnTheTopEdgeRatherThanFlatteningTheCurve(t *testing.T) {
	var lat []time.Duration
	for i := range 200 {
		lat = append(lat, ms(5+float64(i%10)))
	}
	lat[150] = ms(1300) // one stall
	var b bytes.Buffer
	if err := propagation.WriteSVG(&b, propagation.Plot{Title: "t", Latencies: lat}); err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, b.Bytes())
	var top float64
	clipped, dots := 0, 0
	for _, e := range els {
		switch {
		case e.Class == "y-labels" && e.Name == "text":
			top = attrFloat(t, e, "data-value")
		case e.Class == "clipped" && e.Name == "path":
			clipped++
		case e.Class == "clipped" && e.Name == "title":
			if !strings.Contains(e.Text, "route 151: 1,300 ms") {
				t.Errorf("clipped route's title %q, want its index and latency", e.Text)
			}
		case e.Class == "routes" && e.Name == "circle":
			dots++
		}
	}
	if top >= 100 {
		t.Errorf("y axis ends at %v ms: a single 1.3 s stall flattened the curve", top)
	}
	if clipped != 1 || dots != 199 {
		t.Errorf("%d clipped and %d dots, want 1 and 199", clipped, dots)
	}
	for _, e := range els {
		if e.Class == "note" && !strings.Contains(e.Text, "1 above") {
			t.Errorf("note %q does not say a route is above the axis", e.Text)
		}
	}
}

func TestWriteSVGRefusesAnEmptyProbe(t *testing.T) {
	if err := propagation.WriteSVG(io.Discard, propagation.Plot{}); err == nil {
		t.Error("WriteSVG of no routes: want an error")
	}
}

func TestWriteSVGOfOneRouteIsWellFormed(t *testing.T) {
	var b bytes.Buffer
	if err := propagation.WriteSVG(&b, propagation.Plot{Latencies: []time.Duration{0}}); err != nil {
		t.Fatal(err)
	}
	parseSVG(t, b.Bytes())
	if bytes.Contains(b.Bytes(), []byte("NaN")) || bytes.Contains(b.Bytes(), []byte("Inf")) {
		t.Errorf("picture of one 0 ms route holds NaN or Inf:\n%s", b.String())
	}
}
