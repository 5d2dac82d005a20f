// Package haproxycheck checks a rendered tree with the real HAProxy: it
// writes the files of a [renderplan.Output] into a scratch directory and
// runs "haproxy -c -f haproxy.cfg" there. It does I/O (files, exec) and is
// kept apart from the pure templating package; [Checker] implements
// templating.Checker for the haproxy_valid assertion. A Checker is safe for
// concurrent use: every Check uses its own directory.
package haproxycheck
