package main

import (
	"fmt"
	"strconv"
	"strings"
)

// maxObjects caps one benchmark size, so a typo cannot ask for billions of
// generated objects.
const maxObjects = 1_000_000

// parseObjects parses the --objects list: comma-separated positive integers
// ("100,1000,5000"), spaces around items allowed, at most 16 sizes, each at
// most maxObjects. The result keeps the given order; duplicates are errors.
func parseObjects(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("objects: empty list")
	}
	parts := strings.Split(s, ",")
	if len(parts) > 16 {
		return nil, fmt.Errorf("objects: %d sizes, at most 16", len(parts))
	}
	seen := make(map[int]bool, len(parts))
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("objects: %q is not an integer", p)
		}
		if n < 1 || n > maxObjects {
			return nil, fmt.Errorf("objects: %d out of range 1..%d", n, maxObjects)
		}
		if seen[n] {
			return nil, fmt.Errorf("objects: %d listed twice", n)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}
