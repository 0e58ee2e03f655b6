"""This release, and what earlier releases installed.

Why it exists: a file is the installer's to replace or remove only when it is a version a release
shipped; anything else is the user's. Each release that changes a hook, a command, a template or
a matcher adds the digest or value of the version it replaces to the tables below, so an
unedited copy of any earlier release is still recognised and brought up to date.
"""

import hashlib

from .files import lf_endings, same_content
from .protocol import CLAUDEIGNORE, COMMAND_DIR, DEFAULT_PYTHON, HOOK_DIR, command_for

# The last release, as CHANGELOG.md heads it, and whether changes listed under its
# [Unreleased] heading came since (then --version says so). A release sets VERSION and
# RELEASE_DATE to its own and UNRELEASED to False; tests/test_install_version.py holds the three
# to CHANGELOG.md.
VERSION = "0.1.0"
RELEASE_DATE = "2026-11-29"
UNRELEASED = True

# Commands an earlier release installed under a name this version no longer
# uses, with the command that took over. /status shadowed the CLI's built-in
# /status (version, account, model).
RETIRED_COMMANDS = {"status.md": "memory-status.md"}

# sha256 digests of command files shipped by earlier releases, by file name,
# taken with CRLF line endings read as LF. A command matching one of them (or
# the current source) is unmodified: --update may replace it and --uninstall
# may remove it. Each release that changes a file in commands/ adds the digest
# of the version it replaces. Each tuple starts with 0.1.0's version.
RELEASED_COMMAND_DIGESTS = {
    "catchup.md": ("ed828979c6eba174de5b46f15df500cea206273b07fba6695226fbc4c6a1fe3f",),
    "dream.md": ("c550431f1c14e46e632fd476156754d6de8c0d53938780c9a6da1c44a3acaa2b",),
    "handoff.md": ("05b40ba68e32bd4954ef96de31b51e09e620de410bfa204fa49d4edce77f66a7",),
    "status.md": ("cfb306a69b432955205c06f1ee1f1b18f46e6d933332580092d4485eb2f30d02",),
}

# The same for the .claudeignore template: an unchanged copy of one of these is
# replaced by --update (0.1.0's listed build output and dependency folders,
# harmless while nothing read the file, but a hindrance as deny rules).
RELEASED_CLAUDEIGNORE_DIGESTS = (
    "03c6428751a0375dfb0731fe59e16597669ff5190e4d5eb2046ec244de76867f",
)

# The same for hook files. A hook matching neither one of these nor the current
# source is the user's own: it is replaced only by --update --force, and
# --uninstall leaves it. Each tuple starts with 0.1.0's version, then the
# version installed before the hooks shared their concerns (commit 1d021e9).
RELEASED_HOOK_DIGESTS = {
    "session-start.py": ("0e6599cc45f8abe94476c679d63d22651ae996cf003cf58eac7d0568dbaa8bdd",
                         "249c0d25104424ba9a6f2f4805fa4c1fa9dae817529baefce0a42ef4777ae59b"),
    "context-budget.py": ("66676d4eb9d7745ce878d956aade3450b1f4368cd02db4ca28b699c4273b16fc",
                          "f0d1f59b7891018f7011f35b22e3817b58b3ce66d9846c2029306e92f5cde5c7"),
    "prune-worktrees.py": ("592de05006ce7f4eede7be9f5208088c20a847d54487ed55926edee4314dedb4",
                           "18de113b4a09514f5639b2e628b7cb3d6c17c88b87fe6d651aaff1ddb58a007f"),
    "stop-handoff.py": ("47570c8196b0566d773cd31f0d697797ef322b5a748ffaa816dc66befae07097",
                        "c99fc8896e360633936e8ba0978cb007774eb48da3b00a74583c53ab28f05d82"),
}

# The same for the protocol's section of the user's CLAUDE.md, by template
# name, taken over the section's lines, each stripped of surrounding white
# space and ended by "\n". --global replaces a section matching one of them (or
# the current template); another is the user's edit, replaced only with --force.
RELEASED_SECTION_DIGESTS = {
    "CLAUDE.md-section.md": ("d603febbbba98c1cc2c95253799f74111d7b3d0acfe114d0eac78c5c120bb933",),
}

# Matchers that earlier releases wrote, by event. --update brings an entry whose
# matcher is still one of them to this version's (0.1.0 did not match `fork`,
# the source the harness gives a forked session); any other is the user's.
RELEASED_MATCHERS = {"SessionStart": ("startup|resume|clear|compact",)}


def released_digests(rel):
    """The digests of the versions of the file at rel (a hook, a command, .claudeignore) that
    earlier releases shipped; none for any other file."""
    folder, _, name = rel.rpartition("/")
    if folder == HOOK_DIR:
        return RELEASED_HOOK_DIGESTS.get(name, ())
    if folder == COMMAND_DIR:
        return RELEASED_COMMAND_DIGESTS.get(name, ())
    return RELEASED_CLAUDEIGNORE_DIGESTS if rel == CLAUDEIGNORE else ()


def is_a_release_of(current, digests, data):
    """Whether data is the current version or one whose digest is listed."""
    return same_content(data, current) or \
        hashlib.sha256(lf_endings(data)).hexdigest() in digests


def is_the_installers(source, rel, data, pythons=(DEFAULT_PYTHON,)):
    """Whether data is a version of the hook or command at rel that a release
    shipped; a command counts as this version when it is the source rendered
    for one of the pythons (the interpreters the project was installed with)."""
    folder, name = rel.rsplit("/", 1)
    if folder == HOOK_DIR:
        return is_a_release_of(source.hook(name), RELEASED_HOOK_DIGESTS.get(name, ()), data)
    digests = RELEASED_COMMAND_DIGESTS.get(name, ())
    if name in RETIRED_COMMANDS:
        return hashlib.sha256(lf_endings(data)).hexdigest() in digests
    return any(is_a_release_of(command_for(source, name, python), digests, data)
               for python in pythons)
