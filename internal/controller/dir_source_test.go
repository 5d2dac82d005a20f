package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haptic-io/haptic/store"
)

var testResources = map[string]store.WatchedResource{
	"routes":   {APIVersion: "test.haptic.io/v1", Resource: "routes"},
	"services": {APIVersion: "v1", Resource: "services"},
}

func routeYAML(name, host string) string {
	return "apiVersion: test.haptic.io/v1\nkind: Route\nmetadata: {namespace: default, name: " + name + "}\nspec: {host: " + host + ", address: 127.0.0.1, port: 9001}\n"
}

// writeAtomic writes a file through a hidden temporary and a rename.
func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// startDirSource runs a DirSource on dir and returns its event channel.
func startDirSource(t *testing.T, dir string) <-chan Event {
	t.Helper()
	s, err := NewDirSource(DirSourceConfig{Dir: dir, Resources: testResources, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan Event)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, events) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("DirSource.Run did not return after cancel")
		}
	})
	return events
}

func nextEvent(t *testing.T, events <-chan Event) Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(waitTimeout):
		t.Fatal("no event from the dir source")
		return Event{}
	}
}

// summary is an event as strings: its changes, its error and whether it
// ends the listing.
func summary(ev Event) []string {
	var s []string
	for _, c := range ev.Changes {
		s = append(s, c.String())
	}
	if ev.Err != nil {
		s = append(s, "error")
	}
	if ev.Initialized {
		s = append(s, "initialized")
	}
	return s
}

func TestDirSourceListsTheDirectoryThenSaysInitialized(t *testing.T) {
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, "a.yaml"), routeYAML("a", "a.example")+"---\n"+routeYAML("a2", "a2.example"))
	writeAtomic(t, filepath.Join(dir, "sub", "b.json"), `{"apiVersion":"v1","kind":"Service","metadata":{"namespace":"default","name":"b"}}`)
	writeAtomic(t, filepath.Join(dir, "notes.txt"), routeYAML("txt", "txt.example"))
	writeAtomic(t, filepath.Join(dir, ".hidden.yaml"), routeYAML("hidden", "hidden.example"))
	writeAtomic(t, filepath.Join(dir, "other.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n")
	events := startDirSource(t, dir)

	var got [][]string
	for {
		ev := nextEvent(t, events)
		got = append(got, summary(ev))
		if ev.Initialized {
			break
		}
	}
	want := [][]string{
		{"upsert routes default/a", "upsert routes default/a2"},
		{"upsert services default/b"},
		{"initialized"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestDirSourceSendsOneEventPerFileChange(t *testing.T) {
	dir := t.TempDir()
	events := startDirSource(t, dir)
	if ev := nextEvent(t, events); !ev.Initialized {
		t.Fatalf("first event of an empty dir: %v, want initialized", summary(ev))
	}
	file := filepath.Join(dir, "r.yaml")
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"a new file adds its objects at once",
			func() { writeAtomic(t, file, routeYAML("a", "a.example")+"---\n"+routeYAML("b", "b.example")) },
			[]string{"upsert routes default/a", "upsert routes default/b"}},
		{"a changed file sends only what changed",
			func() { writeAtomic(t, file, routeYAML("a", "a.example")+"---\n"+routeYAML("b", "b2.example")) },
			[]string{"upsert routes default/b"}},
		{"an object left out of the file is deleted",
			func() { writeAtomic(t, file, routeYAML("b", "b2.example")) },
			[]string{"delete routes default/a"}},
		{"a file that does not parse is an error and keeps the objects",
			func() { writeAtomic(t, file, "apiVersion: [unclosed\n") },
			[]string{"error"}},
		{"the next good version is compared with the last good one",
			func() { writeAtomic(t, file, routeYAML("b", "b2.example")+"---\n"+routeYAML("c", "c.example")) },
			[]string{"upsert routes default/c"}},
		{"an object defined in a second file is an error and ignored",
			func() {
				writeAtomic(t, filepath.Join(dir, "s.yaml"), routeYAML("c", "other.example")+"---\n"+routeYAML("d", "d.example"))
			},
			[]string{"upsert routes default/d", "error"}},
		{"a removed file deletes its objects",
			func() {
				if err := os.Remove(file); err != nil {
					t.Fatal(err)
				}
			},
			[]string{"delete routes default/b", "delete routes default/c"}},
		{"a file in a new directory is picked up",
			func() { writeAtomic(t, filepath.Join(dir, "new", "deeper", "e.yaml"), routeYAML("e", "e.example")) },
			[]string{"upsert routes default/e"}},
		{"a removed directory deletes the objects of its files",
			func() {
				if err := os.RemoveAll(filepath.Join(dir, "new")); err != nil {
					t.Fatal(err)
				}
			},
			[]string{"delete routes default/e"}},
	}
	for _, s := range steps {
		s.do()
		ev := nextEvent(t, events)
		if diff := cmp.Diff(s.want, summary(ev)); diff != "" {
			t.Fatalf("%s: event (-want +got):\n%s\n(error: %v)", s.name, diff, ev.Err)
		}
	}
}

func TestDirSourceErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, "bad.yaml"), "kind: Route\napiVersion: test.haptic.io/v1\nmetadata: {namespace: default}\n")
	events := startDirSource(t, dir)
	ev := nextEvent(t, events)
	if ev.Err == nil || !strings.Contains(ev.Err.Error(), "bad.yaml") || !strings.Contains(ev.Err.Error(), "no metadata.name") {
		t.Errorf("event for an object without a name: error %v, want one naming bad.yaml and the missing name", ev.Err)
	}
}

func TestNewDirSourceChecksItsConfig(t *testing.T) {
	if _, err := NewDirSource(DirSourceConfig{Resources: testResources}); err == nil || !strings.Contains(err.Error(), "Dir") {
		t.Errorf("no Dir: error %v, want one naming Dir", err)
	}
	if _, err := NewDirSource(DirSourceConfig{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "Resources") {
		t.Errorf("no Resources: error %v, want one naming Resources", err)
	}
	s, err := NewDirSource(DirSourceConfig{Dir: filepath.Join(t.TempDir(), "missing"), Resources: testResources})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), make(chan Event, 1)); err == nil {
		t.Error("Run on a missing directory returned nil")
	}
}
