package engine

import (
	"context"
	"log/slog"
	"os"
)

// Reloads says what reloads a served catalog besides its own watches: a
// config file, archive files, and a signal (SIGHUP) that reloads all.
type Reloads struct {
	// ConfigFile, if not empty, is watched; a change calls ReloadConfig.
	ConfigFile   string
	ReloadConfig func(ctx context.Context) error
	// Archives lists, once the catalog serves, the archive files to watch;
	// a change calls RefreshArchives.
	Archives        func() []string
	RefreshArchives func(ctx context.Context)
	// Signal, if not nil, reloads the config file and the archives and
	// rescans at each value received; one that arrived before the catalog
	// served is applied once it does.
	Signal <-chan os.Signal
	Logger *slog.Logger
}

// WatchReloads starts, once the catalog serves, the watches and the signal
// handling r describes. Its goroutine belongs to c: Close stops it.
func (c *Catalog) WatchReloads(r Reloads) error {
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return c.Go(func(ctx context.Context) {
		select {
		case <-c.Ready():
		case <-ctx.Done():
			return
		}
		if c.Err() != nil {
			return
		}
		reload := func() {}
		if r.ConfigFile != "" {
			reload = func() {
				if err := r.ReloadConfig(ctx); err != nil {
					log.Error("config reload failed; the previous libraries keep serving", "err", err)
					return
				}
				log.Info("config reloaded", "file", r.ConfigFile)
			}
			if err := c.WatchFile(r.ConfigFile, reload); err != nil {
				log.Warn("config file cannot be watched; SIGHUP reloads it", "err", err)
			}
		}
		refresh := func() {
			if r.RefreshArchives != nil {
				r.RefreshArchives(ctx)
			}
		}
		var archives []string
		if r.Archives != nil {
			archives = r.Archives()
		}
		for _, zip := range archives {
			if err := c.WatchFile(zip, refresh); err != nil {
				log.Warn("archive cannot be watched; SIGHUP re-reads it", "archive", zip, "err", err)
			}
		}
		for {
			select {
			case <-r.Signal: // nil: never
				log.Info("SIGHUP: reloading")
				refresh()
				reload()
				c.Kick()
			case <-ctx.Done():
				return
			}
		}
	})
}
