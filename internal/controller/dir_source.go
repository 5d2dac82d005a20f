package controller

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/fsnotify/fsnotify"
	"github.com/haptic-io/haptic/store"
)

// DirSourceConfig configures a [DirSource].
type DirSourceConfig struct {
	// Dir is the directory of manifests, watched recursively. Required.
	Dir string
	// Resources are the watched resources of the template config: an
	// object is filed under every alias whose apiVersion equals its
	// apiVersion and whose resource is [store.ResourceForKind] of its
	// kind, as [store.LoadDir] does. Required.
	Resources map[string]store.WatchedResource
	// Log receives a debug record per file event; nil discards.
	Log *slog.Logger
}

// DirSource is the [Source] of local mode: a directory of Kubernetes
// manifests (*.yaml, *.yml, *.json, multi-document, kind List, decoded by
// [store.DecodeManifests]), watched with fsnotify.
//
// Each file is one unit: when it changes, the source reads it whole and
// sends one [Event] with the objects it added, changed (by content) or
// dropped, so a file holding an Ingress with its Service reaches the store
// at once. A file that does not parse, or an object without a name, is an
// Event with Err, and the objects of that file keep their last good
// version. Two files defining the same object: the first one read keeps
// it, the other's copy is reported and ignored until that file changes
// again. Hidden files and directories (a leading ".") are ignored, so
// writing ".x.yaml" and renaming it to "x.yaml" changes a route in one
// event; a plain write may be seen half-written and then whole, which
// costs an extra render.
//
// A DirSource holds only its configuration; each Run keeps its own state.
// It is safe to share, but one directory should have one Run at a time.
type DirSource struct {
	dir       string
	resources map[string]store.WatchedResource
	aliases   []string
	log       *slog.Logger
}

var _ Source = (*DirSource)(nil)

// NewDirSource checks cfg and returns a source; it does not touch the
// directory until Run.
func NewDirSource(cfg DirSourceConfig) (*DirSource, error) {
	if cfg.Dir == "" {
		return nil, errors.New("dir source: Dir is required")
	}
	if len(cfg.Resources) == 0 {
		return nil, errors.New("dir source: Resources is empty")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("dir source: Dir: %w", err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	aliases := make([]string, 0, len(cfg.Resources))
	for a := range cfg.Resources {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	return &DirSource{dir: dir, resources: cfg.Resources, aliases: aliases, log: cfg.Log}, nil
}

// Run watches the directory, sends one event per manifest file of the
// initial listing (in lexical order) and then the Initialized event, and
// afterwards one event per file change, until ctx ends. It returns
// ctx.Err() then, or an error when the directory cannot be watched.
func (s *DirSource) Run(ctx context.Context, events chan<- Event) error {
	fi, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("dir source: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("dir source: %s is not a directory", s.dir)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("dir source: %w", err)
	}
	defer func() { _ = w.Close() }()

	st := &dirState{src: s, files: map[string]map[objKey]map[string]any{}, owners: map[objKey]string{}}
	send := func(ev Event) error {
		if len(ev.Changes) == 0 && ev.Err == nil && !ev.Initialized {
			return nil
		}
		select {
		case events <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Watch first, then list: a file written during the listing is seen
	// by one or the other (or both, which is harmless).
	files, err := s.watchTree(w, s.dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := send(st.load(f)); err != nil {
			return err
		}
	}
	if err := send(Event{Initialized: true, Origin: "dir " + s.dir}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("dir source: watcher closed")
			}
			if err := send(Event{Err: fmt.Errorf("watch %s: %w", s.dir, err), Origin: "dir " + s.dir}); err != nil {
				return err
			}
		case fe, ok := <-w.Events:
			if !ok {
				return errors.New("dir source: watcher closed")
			}
			for _, ev := range st.handle(w, fe) {
				if err := send(ev); err != nil {
					return err
				}
			}
		}
	}
}

// watchTree adds a watch on dir and every non-hidden directory below it
// and returns the manifest files found, sorted.
func (s *DirSource) watchTree(w *fsnotify.Watcher, dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if p != dir && hidden(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if err := w.Add(p); err != nil {
				return fmt.Errorf("watch %s: %w", p, err)
			}
			return nil
		}
		if isManifest(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dir source: %w", err)
	}
	sort.Strings(files)
	return files, nil
}

// hidden reports whether the base name of p starts with a dot.
func hidden(p string) bool { return strings.HasPrefix(filepath.Base(p), ".") }

// isManifest reports whether p names a manifest file the source reads.
func isManifest(p string) bool {
	if hidden(p) {
		return false
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// objKey identifies one object under one alias.
type objKey struct{ alias, namespace, name string }

func (k objKey) less(o objKey) bool {
	if k.alias != o.alias {
		return k.alias < o.alias
	}
	if k.namespace != o.namespace {
		return k.namespace < o.namespace
	}
	return k.name < o.name
}

// dirState is what one Run knows: the objects of every file and which
// file owns each object. It belongs to the Run goroutine.
type dirState struct {
	src    *DirSource
	files  map[string]map[objKey]map[string]any // by absolute path
	owners map[objKey]string                    // object → the file that defines it
}

// handle turns one fsnotify event into source events.
func (st *dirState) handle(w *fsnotify.Watcher, fe fsnotify.Event) []Event {
	p := fe.Name
	st.src.log.Debug("dir source: file event", "path", p, "op", fe.Op.String())
	if p != st.src.dir && hidden(p) {
		return nil
	}
	switch {
	case fe.Has(fsnotify.Create) || fe.Has(fsnotify.Write):
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return st.dropUnder(p)
		}
		if err != nil {
			return []Event{{Err: fmt.Errorf("stat %s: %w", st.rel(p), err), Origin: "file " + st.rel(p)}}
		}
		if fi.IsDir() {
			files, err := st.src.watchTree(w, p)
			if err != nil {
				return []Event{{Err: err, Origin: "dir " + st.rel(p)}}
			}
			evs := make([]Event, 0, len(files))
			for _, f := range files {
				evs = append(evs, st.load(f))
			}
			return evs
		}
		if isManifest(p) {
			return []Event{st.load(p)}
		}
	case fe.Has(fsnotify.Remove) || fe.Has(fsnotify.Rename):
		_ = w.Remove(p) // a renamed directory keeps its watch otherwise; unknown paths fail harmlessly
		return st.dropUnder(p)
	}
	return nil
}

func (st *dirState) rel(p string) string {
	if r, err := filepath.Rel(st.src.dir, p); err == nil {
		return r
	}
	return p
}

// dropUnder forgets the file p, or every file under the directory p.
func (st *dirState) dropUnder(p string) []Event {
	var paths []string
	prefix := p + string(filepath.Separator)
	for f := range st.files {
		if f == p || strings.HasPrefix(f, prefix) {
			paths = append(paths, f)
		}
	}
	sort.Strings(paths)
	evs := make([]Event, 0, len(paths))
	for _, f := range paths {
		evs = append(evs, st.replace(f, nil, nil))
	}
	return evs
}

// load reads the file p and returns the event that brings the store in
// line with it.
func (st *dirState) load(p string) Event {
	origin := "file " + st.rel(p)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st.replace(p, nil, nil)
	}
	if err != nil {
		return Event{Err: fmt.Errorf("read %s: %w", st.rel(p), err), Origin: origin}
	}
	objs, err := store.DecodeManifests(b)
	if err != nil {
		return Event{Err: fmt.Errorf("manifest %s: %w", st.rel(p), err), Origin: origin}
	}
	next := map[objKey]map[string]any{}
	var problems []error
	for i, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		ns, name := meta(obj)
		for _, alias := range st.src.aliases {
			wr := st.src.resources[alias]
			if wr.APIVersion != apiVersion || wr.Resource != store.ResourceForKind(kind) {
				continue
			}
			if name == "" {
				problems = append(problems, fmt.Errorf("manifest %s: object %d (%s %s): no metadata.name", st.rel(p), i, apiVersion, kind))
				break
			}
			k := objKey{alias, ns, name}
			if _, dup := next[k]; dup {
				problems = append(problems, fmt.Errorf("manifest %s: %s %s/%s defined twice; the first is kept", st.rel(p), kind, ns, name))
				continue
			}
			if owner, ok := st.owners[k]; ok && owner != p {
				problems = append(problems, fmt.Errorf("manifest %s: %s %s/%s is already defined in %s; ignored", st.rel(p), kind, ns, name, st.rel(owner)))
				continue
			}
			next[k] = obj
		}
	}
	return st.replace(p, next, errors.Join(problems...))
}

// replace sets the objects of file p to next (nil: the file is gone) and
// returns the changes: deletes first, then upserts, each sorted.
func (st *dirState) replace(p string, next map[objKey]map[string]any, problem error) Event {
	prev := st.files[p]
	var dels, ups []objKey
	for k := range prev {
		if _, ok := next[k]; !ok {
			dels = append(dels, k)
		}
	}
	// Decoded objects hold only maps, slices and scalars, so deep
	// equality is equality of their JSON.
	for k, obj := range next {
		if old, ok := prev[k]; !ok || !reflect.DeepEqual(old, obj) {
			ups = append(ups, k)
		}
	}
	sort.Slice(dels, func(i, j int) bool { return dels[i].less(dels[j]) })
	sort.Slice(ups, func(i, j int) bool { return ups[i].less(ups[j]) })
	ev := Event{Err: problem, Origin: "file " + st.rel(p)}
	for _, k := range dels {
		delete(st.owners, k)
		ev.Changes = append(ev.Changes, Change{Alias: k.alias, Namespace: k.namespace, Name: k.name})
	}
	for _, k := range ups {
		st.owners[k] = p
		ev.Changes = append(ev.Changes, Change{Alias: k.alias, Namespace: k.namespace, Name: k.name, Object: next[k]})
	}
	if next == nil {
		delete(st.files, p)
	} else {
		st.files[p] = next
	}
	return ev
}

// meta returns metadata.namespace and metadata.name.
func meta(obj map[string]any) (namespace, name string) {
	md, _ := obj["metadata"].(map[string]any)
	namespace, _ = md["namespace"].(string)
	name, _ = md["name"].(string)
	return namespace, name
}
