#!/bin/sh
# Trim a Debian rootfs down to what the Parism appliance runs (issue #14, "a lean image").
#   container/trim.sh [ROOT]      (default /, i.e. inside the image being built)
# Used in two places so both build paths produce the same image: scripts/mkbase runs it on the
# bootstrapped rootfs before `docker import`, and the Containerfile's runtime stage runs it in the
# same RUN that installs the OS packages (a file deleted in a later layer would still count).
# Only files no command of the profiles can reach are removed; tests/unit/test_packaging_image.py
# and tests/e2e/test_container.py check that every profile command the image held is still there
# and runs. What goes and why:
set -eu
root="${1:-}"
# r PATTERN…: remove each path (shell glob) below $root; paths hold no spaces.
r() { for p in "$@"; do for f in $root$p; do rm -rf "$f"; done; done; }

# Documentation, manuals, translations, completion: no command prints them for an agent.
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
r /usr/share/man /usr/share/info /usr/share/locale /usr/share/lintian /usr/share/linda \
  /usr/share/bash-completion /usr/share/gitweb /usr/share/common-licenses/GPL-1 \
  /usr/share/common-licenses/Artistic

# The full Perl library (packages perl, perl-modules-5.36, libperl5.36: 43 MiB). git depends on
# it only for porcelain no profile allows (send-email, svn, cvs*, archimport, add--interactive's
# legacy script); /usr/bin/perl itself (perl-base, Essential) stays with its core modules.
r /usr/share/perl '/usr/lib/*-linux-gnu/perl' '/usr/lib/*-linux-gnu/libperl.so*' '/usr/bin/perl5.36-*'
# git programs for serving or pushing over the network, and perl porcelain (no profile allows them).
r /usr/lib/git-core/git-daemon /usr/lib/git-core/git-http-backend /usr/lib/git-core/git-http-push \
  /usr/lib/git-core/git-imap-send /usr/lib/git-core/git-instaweb /usr/lib/git-core/git-add--interactive \
  /usr/lib/git-core/git-svn /usr/lib/git-core/git-send-email /usr/lib/git-core/git-archimport \
  '/usr/lib/git-core/git-cvs*'
# git-core copies of binaries that also stand in /usr/bin: one file, one symlink (the import of a
# rootfs into Docker does not keep Debian's hard links, so each was stored twice).
for b in git; do
  if [ -f "$root/usr/bin/$b" ] && [ -f "$root/usr/lib/git-core/$b" ] && [ ! -L "$root/usr/lib/git-core/$b" ]; then
    ln -sf "/usr/bin/$b" "$root/usr/lib/git-core/$b"
  fi
done

# glibc's iconv modules for East-Asian, EBCDIC and other legacy charsets (8 MiB): Parism reads
# every output as UTF-8; git re-encodes only commits whose i18n.commitEncoding is such a charset
# (it then prints them unconverted). UTF-*, UNICODE, ISO-8859-*, CP125x and KOI8 stay.
for f in "$root"/usr/lib/*-linux-gnu/gconv/*.so; do
  case "${f##*/}" in UTF-*|UNICODE.so|ISO8859-*|CP12*|KOI8-*) ;; *) rm -f "$f" ;; esac
done
# scalar (Microsoft's large-repository front end) and git-shell (a login shell for git servers):
# separate programs of the git package, named by no profile; git itself stays whole.
r /usr/bin/scalar /usr/lib/git-core/scalar /usr/bin/git-shell /usr/lib/git-core/git-shell

# Python: the venv is built in another stage; the ensurepip wheels, 2to3 and pydoc's topics are
# never imported at run time.
r /usr/share/python-wheels /usr/lib/python3.11/ensurepip /usr/lib/python3.11/lib2to3 \
  /usr/lib/python3.11/pydoc_data /usr/lib/python3.11/distutils

# Package-manager caches and logs, and dpkg's per-file checksums (read by `dpkg --verify` only);
# the package database itself stays: apt list/policy/show and dpkg-query read it.
r '/var/lib/apt/lists/*' '/var/cache/apt/*' '/var/cache/debconf/*-old' '/var/log/*' \
  '/var/lib/dpkg/*-old' '/var/lib/dpkg/info/*.md5sums'

# The pure-Python standard library into /usr/lib/python3XY.zip (sources + bytecode, deflated:
# 26 → 7 MB; container/zip_python.py says why this is safe). Run by the rootfs's own python3.
zipper="$(dirname "$0")/zip_python.py"
if [ -x "$root/usr/bin/python3" ]; then
  if [ -n "$root" ]; then
    cp "$zipper" "$root/tmp/parism-zip_python.py"
    chroot "$root" /usr/bin/python3 /tmp/parism-zip_python.py stdlib
    rm -f "$root/tmp/parism-zip_python.py"
  else
    /usr/bin/python3 "$zipper" stdlib
  fi
fi
