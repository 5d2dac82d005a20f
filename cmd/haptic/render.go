package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/renderplan"
	"github.com/haptic-io/haptic/store"
	"github.com/haptic-io/haptic/templating"
)

// planFile is the name of the plan written beside the rendered tree.
const planFile = "plan.json"

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:  "render",
		Usage: "render a directory of Kubernetes manifests into an HAProxy file tree and plan.json",
		Description: "Loads the stock libraries (--libraries) and the operator's config (-c), merged in that order,\n" +
			"files every manifest under -r into the watched resources, renders, and writes the tree\n" +
			"(haproxy.cfg, maps/, certs/, general/) and plan.json to -o. Problems with objects are\n" +
			"printed to stderr and do not fail the command; a template error does.\n" +
			"The output directory must be empty, missing, or hold an earlier render (plan.json):\n" +
			"files of the earlier render that are not rendered again are removed.",
		Flags: []cli.Flag{
			configFlag(false),
			librariesFlag(),
			&cli.StringFlag{Name: "resources", Aliases: []string{"r"}, Usage: "directory of manifests (*.yaml, *.yml, *.json, recursive)", EnvVars: []string{"HAPTIC_RESOURCES"}, Required: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output directory", EnvVars: []string{"HAPTIC_OUTPUT"}, Required: true},
		},
		Action: func(c *cli.Context) error {
			cfg, err := loadConfig(c.String("libraries"), c.String("config"))
			if err != nil {
				return err
			}
			start := time.Now()
			out, problems, err := renderDir(c.Context, cfg, c.String("resources"))
			if err != nil {
				return err
			}
			elapsed := time.Since(start)
			for _, p := range problems {
				fmt.Fprintf(c.App.ErrWriter, "problem: %s\n", p)
			}
			if err := writeTree(c.String("output"), out); err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, summary(out, len(problems), elapsed))
			return err
		},
	}
}

// renderDir loads the manifests under dir and renders cfg against them.
func renderDir(ctx context.Context, cfg *templating.Config, dir string) (*renderplan.Output, []templating.Problem, error) {
	st, err := store.LoadDir(dir, cfg.WatchedResources)
	if err != nil {
		return nil, nil, err
	}
	e, err := templating.Compile(cfg)
	if err != nil {
		return nil, nil, err
	}
	return e.Render(ctx, st.Snapshot(), templating.RenderOptions{})
}

// summary is the one-line result of a render.
func summary(out *renderplan.Output, problems int, elapsed time.Duration) string {
	entries := 0
	for _, m := range out.Plan.Maps {
		entries += len(m.Entries)
	}
	id := out.ID()
	return fmt.Sprintf("rendered %d files (%d backends, %d map entries), %d problems, plan %s in %s",
		len(out.Files), len(out.Plan.Backends), entries, problems, id, elapsed.Round(time.Microsecond))
}

// writeTree writes out's files and plan.json under dir. dir must be
// missing, empty, or hold an earlier render; stale files of the earlier
// render are removed first.
func writeTree(dir string, out *renderplan.Output) error {
	old, err := previousFiles(dir)
	if err != nil {
		return err
	}
	keep := make(map[string]bool, len(out.Files))
	for _, f := range out.Files {
		keep[f.Path] = true
	}
	for _, p := range old {
		if !keep[p] {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("write tree: %w", err)
			}
		}
	}
	for _, f := range out.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write tree: %w", err)
		}
		mode := os.FileMode(0o644)
		if f.Kind == renderplan.FileCert {
			mode = 0o600
		}
		if err := os.WriteFile(p, f.Body, mode); err != nil {
			return fmt.Errorf("write tree: %w", err)
		}
	}
	enc, err := out.Plan.Encode()
	if err != nil {
		return fmt.Errorf("write tree: encode plan: %w", err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, enc, "", "  "); err != nil {
		return fmt.Errorf("write tree: indent plan: %w", err)
	}
	pretty.WriteByte('\n')
	if err := os.WriteFile(filepath.Join(dir, planFile), pretty.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write tree: %w", err)
	}
	return nil
}

// previousFiles returns the file paths of the earlier render in dir: none
// when dir is missing or empty; an error when dir holds files but no plan.
func previousFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("write tree: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, planFile))
	if err != nil {
		return nil, fmt.Errorf("write tree: %s is not empty and holds no %s of an earlier render", dir, planFile)
	}
	p, err := renderplan.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("write tree: earlier %s: %w", planFile, err)
	}
	paths := make([]string, 0, len(p.Files))
	for _, f := range p.Files {
		if filepath.IsLocal(filepath.FromSlash(f.Path)) {
			paths = append(paths, f.Path)
		}
	}
	return paths, nil
}
