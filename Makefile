# make install [PREFIX=/usr/local] [DESTDIR=] [CONFIG=release]   ·   make uninstall (same variables)
#
# Installs the four programs (mo-sync, mo-index, mo-sendmail, mo-sync-check), their man pages and mo.toml(5), bash/zsh/fish completions generated from the argument
# parser (mo-sync, mo-index; mo-sendmail keeps sendmail's own command line), and contrib/ (systemd user
# units, neomutt snippets) with the sample configuration under share/. `make install PREFIX=$HOME/.local` needs
# no root, and is where the systemd units look for the programs (%h/.local/bin). `make` builds first.
# CONFIG=debug installs the debug build (the tests do, to save a release build; with SOURCES= it is taken as
# it is, never rebuilt). `make install NOTMUCH=1` (or `make install-notmuch`) also links bin/notmuch to
# mo-index, which then answers notmuch's command line (docs/notmuch-compat.md); a bin/notmuch that is not
# that link (a real notmuch) is left alone and the target fails.

PREFIX ?= /usr/local
DESTDIR ?=
CONFIG ?= release

BIN := $(DESTDIR)$(PREFIX)/bin
MAN1 := $(DESTDIR)$(PREFIX)/share/man/man1
MAN5 := $(DESTDIR)$(PREFIX)/share/man/man5
SHARE := $(DESTDIR)$(PREFIX)/share/mo
BASH := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSH := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISH := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

PROGRAMS := mo-sync mo-index mo-sendmail mo-sync-check
COMPLETED := mo-sync mo-index
BUILT := .build/$(CONFIG)

NOTMUCH ?=

.PHONY: all build install install-notmuch install-notmuch-link uninstall

all: build

build:
	swift build -c $(CONFIG)

# Built if missing or older than a source (after a `git pull`, say), else left alone: so
# `make && sudo make install` builds as the user and installs what `make` built.
SOURCES := Package.swift $(shell find Sources -name '*.swift' -o -name '*.cpp' -o -name '*.h' -o -name '*.modulemap')
$(addprefix $(BUILT)/,$(PROGRAMS)) &: $(SOURCES)
	swift build -c $(CONFIG)
	touch $(addprefix $(BUILT)/,$(PROGRAMS))   # a program the change did not touch is up to date too

install: $(addprefix $(BUILT)/,$(PROGRAMS))
	install -d $(BIN) $(MAN1) $(MAN5) $(SHARE)/systemd $(SHARE)/neomutt $(BASH) $(ZSH) $(FISH)
	install -m 755 $(addprefix $(BUILT)/,$(PROGRAMS)) $(BIN)/
	install -m 644 $(addprefix docs/,$(addsuffix .1,$(PROGRAMS))) $(MAN1)/
	install -m 644 docs/mo.toml.5 $(MAN5)/
	for p in $(COMPLETED); do \
	    $(BUILT)/$$p --generate-completion-script bash > $(BASH)/$$p && \
	    $(BUILT)/$$p --generate-completion-script zsh > $(ZSH)/_$$p && \
	    $(BUILT)/$$p --generate-completion-script fish > $(FISH)/$$p.fish || exit 1; \
	done
	install -m 644 contrib/systemd/* $(SHARE)/systemd/
	install -m 644 contrib/neomutt/* $(SHARE)/neomutt/
	install -m 644 config/mo.toml $(SHARE)/mo.toml
	$(if $(NOTMUCH),$(MAKE) --no-print-directory install-notmuch-link)

install-notmuch: install
	$(if $(NOTMUCH),,$(MAKE) --no-print-directory install-notmuch-link)

install-notmuch-link:
	@if [ -e $(BIN)/notmuch ] || [ -L $(BIN)/notmuch ]; then \
	    if [ "$$(readlink $(BIN)/notmuch)" != mo-index ]; then \
	        echo "make: $(BIN)/notmuch exists and is not mo-index's link: left alone" >&2; exit 1; \
	    fi; \
	fi
	ln -sfn mo-index $(BIN)/notmuch

uninstall:
	if [ "$$(readlink $(BIN)/notmuch)" = mo-index ]; then rm -f $(BIN)/notmuch; fi
	rm -f $(addprefix $(BIN)/,$(PROGRAMS)) $(addprefix $(MAN1)/,$(addsuffix .1,$(PROGRAMS))) $(MAN5)/mo.toml.5
	rm -f $(addprefix $(BASH)/,$(COMPLETED)) $(addprefix $(ZSH)/_,$(COMPLETED)) $(addprefix $(FISH)/,$(addsuffix .fish,$(COMPLETED)))
	rm -rf $(SHARE)
	-rmdir -p $(BIN) $(MAN1) $(MAN5) $(BASH) $(ZSH) $(FISH) 2>/dev/null
