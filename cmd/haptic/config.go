package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/haptic-io/haptic/libraries"
	"github.com/haptic-io/haptic/templating"
)

// librariesFlag selects the stock libraries merged before the operator's
// config; shared by render, validate and benchmark.
func librariesFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name:    "libraries",
		Usage:   `comma-separated stock libraries merged before --config, in order ("none" for none)`,
		Value:   "base,ingress",
		EnvVars: []string{"HAPTIC_LIBRARIES"},
	}
}

// configFlag is the operator's config file, merged last.
func configFlag(required bool) *cli.StringFlag {
	return &cli.StringFlag{
		Name:     "config",
		Aliases:  []string{"c"},
		Usage:    "operator template config (YAML), merged after the libraries",
		EnvVars:  []string{"HAPTIC_CONFIG"},
		Required: required,
	}
}

// loadConfig merges the libraries named by libs and the config file at
// path (skipped when empty), in that order.
func loadConfig(libs, path string) (*templating.Config, error) {
	names, err := libraries.ParseList(libs)
	if err != nil {
		return nil, err
	}
	cfgs, err := libraries.Load(names...)
	if err != nil {
		return nil, err
	}
	if path != "" {
		cfg, err := templating.LoadConfig(path)
		if err != nil {
			return nil, err
		}
		cfgs = append(cfgs, cfg)
	}
	if len(cfgs) == 0 {
		return nil, fmt.Errorf("no config: give --config or --libraries")
	}
	merged := templating.Merge(cfgs[0], cfgs[1:]...)
	if err := merged.Validate(); err != nil {
		return nil, fmt.Errorf("merged config: %w", err)
	}
	return merged, nil
}
