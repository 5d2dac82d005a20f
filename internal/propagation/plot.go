package propagation

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Plot is a picture of a probe: each route's latency (object written →
// first 200) against its index, with the p50 and p99 lines, as the public
// route-propagation reports draw their curves.
type Plot struct {
	// Title is the picture's heading; Subtitle the line below it (the
	// HAProxy version, the pace, the date).
	Title, Subtitle string
	// Latencies are the routes' latencies in the order they were created.
	Latencies []time.Duration
	// First is the index of the first route on the x axis: routes that
	// existed before (a preload) shift the curve to the right.
	First int
	// YLabel names what was timed, in ms; empty means "object written →
	// first 200 (ms)".
	YLabel string
}

// The picture's layout, in SVG user units (pixels at 100 %).
const (
	plotWidth   = 960
	plotHeight  = 540
	plotLeft    = 80  // the y axis
	plotRight   = 30  // room right of the plot area
	plotTop     = 84  // the title, subtitle and note above
	plotBottom  = 60  // the x axis labels below
	plotYTicks  = 6   // about this many y ticks
	plotXTicks  = 8   // about this many x ticks
	plotClipper = 3.0 // a max beyond this many p99s is drawn at the top edge
)

// quantile is the nearest-rank q-quantile of sorted, as
// [ProbeResult.Quantile] computes it.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// niceStep returns a round step (1, 2 or 5 times a power of ten) that
// cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// ticks returns from, from+step, … up to to, each rounded to the step's
// precision (no 0.30000000000000004).
func ticks(from, to, step float64) []float64 {
	scale := math.Pow(10, max(0, -math.Floor(math.Log10(step))))
	var out []float64
	for k := 0; ; k++ {
		v := from + float64(k)*step
		if v > to+step/1e6 {
			return out
		}
		out = append(out, math.Round(v*scale)/scale)
	}
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// num formats a tick or a value without trailing zeros ("0.5", "10",
// "1,200").
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if math.Abs(v) >= 10 {
		s = strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	// Thousands separators on the integer part.
	intPart, frac := s, ""
	for i, c := range s {
		if c == '.' {
			intPart, frac = s[:i], s[i:]
			break
		}
	}
	neg := false
	if len(intPart) > 0 && intPart[0] == '-' {
		neg, intPart = true, intPart[1:]
	}
	var out []byte
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, intPart[i])
	}
	if neg {
		return "-" + string(out) + frac
	}
	return string(out) + frac
}

// WriteSVG draws p as a standalone SVG document: a dot per route
// (latency by route index), dashed p50 and p99 lines with their values,
// axes with round ticks, and a note for routes slower than the y axis
// shows. The y axis ends at the slowest route, unless that one is more
// than three times the p99: then it ends above the p99 and the slower
// routes are drawn as triangles on the top edge, so that one stall does
// not flatten the curve.
func WriteSVG(w io.Writer, p Plot) error {
	n := len(p.Latencies)
	if n == 0 {
		return errors.New("propagation: nothing to plot")
	}
	sorted := slices.Clone(p.Latencies)
	slices.Sort(sorted)
	p50, p99, worst := msOf(quantile(sorted, 0.5)), msOf(quantile(sorted, 0.99)), msOf(sorted[n-1])

	yTop := worst
	clipped := false
	if p99 > 0 && worst > plotClipper*p99 {
		yTop, clipped = 1.5*p99, true
	}
	yStep := niceStep(yTop, plotYTicks)
	yMax := math.Ceil(yTop/yStep) * yStep
	if yMax <= 0 {
		yMax, yStep = 1, 0.2
	}
	xMin, xMax := float64(p.First+1), float64(p.First+n)
	xStep := niceStep(max(xMax-xMin, 1), plotXTicks)

	areaW := float64(plotWidth - plotLeft - plotRight)
	areaH := float64(plotHeight - plotTop - plotBottom)
	x := func(i float64) float64 {
		if xMax == xMin {
			return plotLeft + areaW/2
		}
		return plotLeft + (i-xMin)/(xMax-xMin)*areaW
	}
	y := func(v float64) float64 { return plotTop + (1-v/yMax)*areaH }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

	bw := bufio.NewWriter(w)
	pr := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	pr(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	pr(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="13">`+"\n", plotWidth, plotHeight, plotWidth, plotHeight)
	pr(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	pr(`<text x="%d" y="26" font-size="18" font-weight="bold">%s</text>`+"\n", plotLeft, html.EscapeString(p.Title))
	pr(`<text x="%d" y="46" fill="#555555">%s</text>`+"\n", plotLeft, html.EscapeString(p.Subtitle))

	// Grid and y ticks.
	yTicks := ticks(0, yMax, yStep)
	pr(`<g class="y-ticks" stroke="#e4e4e4">` + "\n")
	for _, v := range yTicks {
		pr(`<line x1="%d" x2="%s" y1="%s" y2="%s"/>`+"\n", plotLeft, f(plotLeft+areaW), f(y(v)), f(y(v)))
	}
	pr("</g>\n")
	pr(`<g class="y-labels" text-anchor="end" fill="#333333">` + "\n")
	for _, v := range yTicks {
		pr(`<text x="%d" y="%s" data-value="%s">%s</text>`+"\n", plotLeft-8, f(y(v)+4), strconv.FormatFloat(v, 'g', -1, 64), num(v))
	}
	pr("</g>\n")
	pr(`<g class="x-labels" text-anchor="middle" fill="#333333">` + "\n")
	for _, v := range ticks(math.Ceil(xMin/xStep)*xStep, xMax, xStep) {
		pr(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#333333"/>`+"\n", f(x(v)), f(x(v)), f(plotTop+areaH), f(plotTop+areaH+5))
		pr(`<text x="%s" y="%s" data-value="%s">%s</text>`+"\n", f(x(v)), f(plotTop+areaH+20), strconv.FormatFloat(v, 'g', -1, 64), num(v))
	}
	pr("</g>\n")
	// Axes and their titles.
	pr(`<path class="axes" d="M%d %s V%s H%s" fill="none" stroke="#333333"/>`+"\n", plotLeft, f(plotTop), f(plotTop+areaH), f(plotLeft+areaW))
	pr(`<text x="%s" y="%d" text-anchor="middle" fill="#333333">route index n (n − 1 routes already in place)</text>`+"\n", f(plotLeft+areaW/2), plotHeight-14)
	ylabel := p.YLabel
	if ylabel == "" {
		ylabel = "object written → first 200 (ms)"
	}
	pr(`<text transform="translate(22 %s) rotate(-90)" text-anchor="middle" fill="#333333">%s</text>`+"\n", f(plotTop+areaH/2), html.EscapeString(ylabel))

	// The routes: dots, and triangles on the top edge for those above it.
	pr(`<g class="routes" fill="#1f77b4" fill-opacity="0.75">` + "\n")
	over := 0
	for i, d := range p.Latencies {
		v, xi := msOf(d), x(float64(p.First+1+i))
		if v > yMax {
			over++
			continue
		}
		pr(`<circle cx="%s" cy="%s" r="1.8"/>`+"\n", f(xi), f(y(v)))
	}
	pr("</g>\n")
	if over > 0 {
		pr(`<g class="clipped" fill="#d62728">` + "\n")
		for i, d := range p.Latencies {
			if msOf(d) <= yMax {
				continue
			}
			xi := x(float64(p.First + 1 + i))
			pr(`<path d="M%s %s l-4 7 h8 z"><title>route %d: %s ms</title></path>`+"\n", f(xi), f(plotTop), p.First+1+i, num(math.Round(msOf(d)*10)/10))
		}
		pr("</g>\n")
	}

	// The quantile lines, labelled at the right end.
	line := func(class, color, label string, v float64) {
		pr(`<line class="%s" x1="%d" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="8 5" data-value="%s"/>`+"\n",
			class, plotLeft, f(plotLeft+areaW), f(y(v)), f(y(v)), color, strconv.FormatFloat(v, 'f', 3, 64))
		pr(`<text x="%s" y="%s" text-anchor="end" fill="%s" font-weight="bold" stroke="#ffffff" stroke-width="4" paint-order="stroke">%s %s ms</text>`+"\n", f(plotLeft+areaW-4), f(y(v)-6), color, label, num(math.Round(v*100)/100))
	}
	line("p99", "#d62728", "p99", p99)
	line("p50", "#2ca02c", "p50", p50)

	// The legend line: what is not on the picture.
	note := fmt.Sprintf("%s routes, max %s ms", num(float64(n)), num(math.Round(worst*10)/10))
	if clipped {
		note += fmt.Sprintf("; %d above %s ms drawn as triangles on the top edge", over, num(yMax))
	}
	pr(`<text class="note" x="%d" y="64" fill="#555555">%s</text>`+"\n", plotLeft, html.EscapeString(note))
	pr("</svg>\n")
	return bw.Flush()
}
