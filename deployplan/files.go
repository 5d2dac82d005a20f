package deployplan

import (
	"github.com/haptic-io/haptic/agentapi/runtimeop"
	"github.com/haptic-io/haptic/renderplan"
)

// diffFiles merges the two sorted file lists. haproxy.cfg is judged by its
// sections and map files by their entries; every other file by its kind.
// It reports false, having done nothing, when a list is not sorted and
// unique by path.
func (d *differ) diffFiles() bool {
	a, b := d.base.Files, d.next.Files
	if !sortedUnique(a, filePath) || !sortedUnique(b, filePath) {
		return false
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Path < b[j].Path:
			d.fileGone(&a[i])
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			d.fileNew(&b[j])
			j++
		default:
			if a[i] != b[j] {
				d.fileChanged(&a[i], &b[j])
			}
			i++
			j++
		}
	}
	return true
}

func (d *differ) isMapFile(f *renderplan.File) bool {
	if f.Kind != renderplan.FileMap {
		return false
	}
	_, inBase := d.base.Map(f.Path)
	_, inNext := d.next.Map(f.Path)
	return inBase || inNext
}

func (d *differ) fileGone(f *renderplan.File) {
	subject := "file " + f.Path
	switch {
	case f.Kind == renderplan.FileConfig:
		d.mustReload(subject, "removed")
	case d.isMapFile(f):
		// diffMaps decided.
	case f.Kind == renderplan.FileCrtList:
		d.mustReload(subject, "crt-list removed")
	case f.ReloadOnChange:
		d.mustReload(subject, "removed (reloadOnChange)")
	default:
		d.fileOnly(subject, "removed; the running HAProxy keeps what it loaded")
	}
}

func (d *differ) fileNew(f *renderplan.File) {
	subject := "file " + f.Path
	switch {
	case f.Kind == renderplan.FileConfig:
		d.mustReload(subject, "added")
	case d.isMapFile(f):
	case f.Kind == renderplan.FileCrtList:
		d.mustReload(subject, "crt-list added")
	case f.ReloadOnChange:
		d.mustReload(subject, "added (reloadOnChange)")
	case f.Kind == renderplan.FileCert:
		d.fileOnly(subject, "certificate added; nothing the running HAProxy loaded names it (a crt-list or configuration change would)")
	default:
		d.fileOnly(subject, "added")
	}
}

func (d *differ) fileChanged(a, b *renderplan.File) {
	subject := "file " + b.Path
	switch {
	case a.Kind != b.Kind:
		d.mustReload(subject, "kind changed from %s to %s", a.Kind, b.Kind)
	case b.Kind == renderplan.FileConfig:
		if a.Digest != b.Digest && !d.sectionsChanged {
			d.mustReload(subject, "changed outside its recorded sections")
		}
	case d.isMapFile(b):
	case b.Kind == renderplan.FileCrtList:
		d.mustReload(subject, "crt-list changed; plans carry no crt-list entries, so only a reload applies it")
	case a.ReloadOnChange || b.ReloadOnChange:
		d.mustReload(subject, "changed (reloadOnChange)")
	case a.Digest == b.Digest:
		// Only metadata such as reloadOnChange moved: nothing to apply.
		d.fileOnly(subject, "metadata changed")
	case b.Kind == renderplan.FileCert:
		d.emit(
			runtimeop.Op{Kind: runtimeop.OpSetCert, Cert: b.Path, Digest: string(b.Digest)},
			runtimeop.Op{Kind: runtimeop.OpCommitCert, Cert: b.Path},
		)
		d.runtime(subject, "certificate changed")
	default:
		d.fileOnly(subject, "changed; HAProxy reads it only at startup and it asks for no reload")
	}
}
