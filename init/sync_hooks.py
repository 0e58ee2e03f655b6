#!/usr/bin/env python3
"""sync_hooks.py - rewrite the files embedded in init/claude-context-init.md from their sources.

Why it exists: the init prompt carries copies of the four hooks, the five commands, four
templates, the settings entries, the .gitignore and .gitattributes lines and the .claudeignore
list, so that a project can be set up by pasting one prompt, without a clone of this
repository. A copy that has drifted from its source by one byte is a bug someone will paste
into a project. This script makes the copies from the sources; the tests call it with --check.

How a copy is found: each one is a fenced block that starts on the line right after an exact
introduction line, for example

    Create `.claude/hooks/session-start.py`:

and ends at the matching closing fence. The block's content is the source file, byte for
byte. The fence is made one backtick longer than the longest run of backticks that starts a
line of the content (three at least), so a command file that contains fences of its own
nests correctly; every such fence must stay shorter than the prompt's outer fence.

Sources:
- hooks/<name>, commands/<name> and templates/... files, read as bytes;
- the settings entries: what install.py writes into a project without a settings file,
  built by install.py's own functions (never typed out here);
- a SHA-256 list of the hooks and commands, so an agent can prove its copies.

It also writes the prompt's size where the prompt is offered: the paragraph that starts with
SIZE_LABEL, before the outer fence, states in tokens (characters / 4, as `install.py --check`
counts them) what pasting the prompt costs, how much of it is instructions and how much the
copies, and what share of a 200,000-token context that is.

Usage:
  python3 init/sync_hooks.py            rewrite the prompt if a copy differs
  python3 init/sync_hooks.py --check    report drift and exit 1; change nothing
  --prompt PATH                         work on another copy of the prompt
Prints `init prompt already in sync` or `init prompt updated`. Exit status: 0 done or in
sync; 1 drift found by --check; 2 the prompt or a source is malformed.

Standard library only; Python 3.8 or newer.
"""
import argparse
import hashlib
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(os.path.abspath(__file__))))
PROMPT = os.path.join("init", "claude-context-init.md")
OUTER_FENCE_LENGTH = 5
DIGEST_INTRO = "SHA-256 of the hooks and commands above:"
SIZE_LABEL = "**Its size.**"
CONTEXT_TOKENS = 200000

EXIT_OK, EXIT_DRIFT, EXIT_MALFORMED = 0, 1, 2


class Malformed(Exception):
    """The prompt or a source cannot be synced without a person looking at it."""


class Embed(object):
    """One embedded copy: the exact line before it, the fence's info string, the content."""

    def __init__(self, intro, info, content, origin):
        self.intro = intro
        self.info = info
        self.content = content
        self.origin = origin


# ------------------------------------------------------------------ sources

def load_installer(root):
    """The installer package of this checkout (installer/), imported by its path the way
    install.py imports it."""
    path = os.path.join(root, "install.py")
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("mcp_install_for_sync", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        return module.load_installer()
    except (Exception, SystemExit) as error:
        raise Malformed("cannot load {}: {}".format(path, error))


def source_text(root, rel):
    path = os.path.join(root, *rel.split("/"))
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise Malformed("cannot read {}: {}".format(rel, error.strerror or error))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed("{} is not UTF-8".format(rel))
    if not text.endswith("\n"):
        raise Malformed("{} does not end with a newline, so no fenced copy can equal it".format(rel))
    return text


def settings_entries(root, installer):
    """The JSON install.py writes into a project that has no .claude/settings.json (and
    no .claudeignore, so the template's lines become its deny rules)."""
    deny = installer.permissions.deny_rules(source_text(root, "templates/claudeignore"))[0]
    settings = installer.wiring.new_settings(installer.protocol.DEFAULT_PYTHON,
                                             installer.protocol.WIRINGS, deny)
    return installer.settings.settings_text(settings, None)


def digest_list(root, installer):
    rels = sorted([".claude/commands/" + name for name in installer.protocol.COMMANDS]
                  + [".claude/hooks/" + name for name in installer.protocol.HOOKS])
    lines = []
    for rel in rels:
        folder = "commands" if rel.startswith(".claude/commands/") else "hooks"
        data = source_text(root, folder + "/" + rel.rsplit("/", 1)[1]).encode("utf-8")
        lines.append("{}  {}\n".format(hashlib.sha256(data).hexdigest(), rel))
    return "".join(lines)


def embeds(root, installer):
    """Every copy the prompt carries, in no particular order."""
    found = []
    for name in installer.protocol.COMMANDS:
        rel = "commands/" + name
        found.append(Embed("Create `.claude/commands/{}`:".format(name), "markdown",
                           source_text(root, rel), rel))
    for name in installer.protocol.HOOKS:
        rel = "hooks/" + name
        found.append(Embed("Create `.claude/hooks/{}`:".format(name), "python",
                           source_text(root, rel), rel))
    for intro, info, rel in (
            ("Create `memory/MEMORY.md` (only when it does not exist):", "markdown",
             "templates/MEMORY.md"),
            ("Template for a module `CLAUDE.md`:", "markdown", "templates/module-CLAUDE.md"),
            ("Skeleton for `.claude/skills/architecture/SKILL.md`:", "markdown",
             "templates/skills/architecture/SKILL.md"),
            ("Skeleton for `.claude/skills/domain/SKILL.md`:", "markdown",
             "templates/skills/domain/SKILL.md"),
            ("Lines for `.gitignore`:", "gitignore", "templates/gitignore"),
            ("Lines for `.gitattributes`:", "gitattributes", "templates/gitattributes"),
            ("Create `.claudeignore`:", "gitignore", "templates/claudeignore")):
        found.append(Embed(intro, info, source_text(root, rel), rel))
    found.append(Embed("Entries for `.claude/settings.json`:", "json",
                       settings_entries(root, installer), "install.py (settings entries)"))
    found.append(Embed(DIGEST_INTRO, "text", digest_list(root, installer),
                       "SHA-256 of hooks/ and commands/"))
    return found


# ------------------------------------------------------------------ fences

def split_lines(text):
    """Lines with their endings, split on "\\n" only (str.splitlines also splits on form
    feeds and other characters a source file may contain)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def fence_for(content):
    """A backtick fence no line of the content can close."""
    longest = 0
    for line in split_lines(content):
        match = re.match(r" {0,3}(`+)", line)
        if match:
            longest = max(longest, len(match.group(1)))
    return "`" * max(3, longest + 1)


def closes(line, fence):
    return re.match(r" {0,3}" + re.escape(fence) + r"`*[ \t]*\r?\n?\Z", line) is not None


def locate(lines, intro):
    """(opener index, closer index) of the block introduced by the exact line `intro`."""
    positions = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == intro]
    if len(positions) != 1:
        raise Malformed("expected the line {!r} exactly once in the prompt, found it {} times".format(
            intro, len(positions)))
    opener = positions[0] + 1
    match = re.match(r"(`{3,})[^`]*\Z", lines[opener].rstrip("\r\n")) if opener < len(lines) else None
    if match is None:
        raise Malformed("the line after {!r} must open a fenced block with backticks".format(intro))
    fence = match.group(1)
    for closer in range(opener + 1, len(lines)):
        if closes(lines[closer], fence):
            return opener, closer
    raise Malformed("the block after {!r} is never closed".format(intro))


def extract(text, intro):
    """The content of the block introduced by `intro`, exactly as the prompt holds it."""
    lines = split_lines(text)
    opener, closer = locate(lines, intro)
    return "".join(lines[opener + 1:closer])


def outer_fence_length(lines):
    """The length of the first backtick fence that opens at the start of a line."""
    for line in lines:
        match = re.match(r"(`{3,})[^`]*\Z", line.rstrip("\r\n"))
        if match:
            return len(match.group(1))
    return 0


def render(text, blocks):
    """The prompt with every embedded block rewritten from its source, and its size stated."""
    lines = split_lines(text)
    outer = outer_fence_length(lines)
    if outer < OUTER_FENCE_LENGTH:
        raise Malformed("the prompt must open with a fence of at least {} backticks".format(
            OUTER_FENCE_LENGTH))
    for block in blocks:
        fence = fence_for(block.content)
        if len(fence) >= outer:
            raise Malformed("{} needs a fence of {} backticks; lengthen the prompt's outer "
                            "fence beyond that".format(block.origin, len(fence)))
        opener, closer = locate(lines, block.intro)
        lines[opener:closer + 1] = ([fence + block.info + "\n"] + split_lines(block.content)
                                    + [fence + "\n"])
    return with_size_stated(lines, blocks)


def tokens(characters):
    """Tokens as install.py --check estimates them: characters / 4, rounded up."""
    return -(-characters // 4)


def pasted_part(lines):
    """(index of the outer fence's opening line, of its closing line)."""
    fence = "`" * outer_fence_length(lines)
    opener = next(index for index, line in enumerate(lines) if line.startswith(fence))
    for closer in range(opener + 1, len(lines)):
        if closes(lines[closer], fence):
            return opener, closer
    raise Malformed("the prompt's outer fence is never closed")


def size_paragraph(pasted, copies):
    """What pasting the prompt costs, in tokens, rounded to the hundred."""
    def about(characters):
        return "{:,}".format(int(round(tokens(characters), -2)))
    share = int(round(100.0 * tokens(pasted) / CONTEXT_TOKENS))
    return ("{} Pasted, it is about {} tokens (characters / 4), {}% of a {:,}-token context "
            "before the agent reads a file: {} of instructions and {} of the exact copies of "
            "the files it installs. `python3 install.py --project .` installs the same files "
            "for no tokens at all; the prompt also writes the project's `CLAUDE.md`, module "
            "files and skills.\n".format(SIZE_LABEL, about(pasted), share, CONTEXT_TOKENS,
                                          about(pasted - copies), about(copies)))


def with_size_stated(lines, blocks):
    """The prompt's lines, joined, with its size paragraph rewritten (it must be there, once,
    before the outer fence)."""
    opener, closer = pasted_part(lines)
    at = [index for index, line in enumerate(lines[:opener]) if line.startswith(SIZE_LABEL)]
    if len(at) != 1:
        raise Malformed("expected one paragraph starting with {} before the prompt's outer "
                        "fence, found {}".format(SIZE_LABEL, len(at)))
    pasted = len("".join(lines[opener + 1:closer]))
    copies = sum(len(block.content) for block in blocks)
    lines[at[0]] = size_paragraph(pasted, copies)
    return "".join(lines)


def drifted(text, blocks):
    """The origins of the blocks whose copy differs from the source, or whose fence is wrong."""
    lines = split_lines(text)
    names = []
    for block in blocks:
        opener, closer = locate(lines, block.intro)
        wanted = fence_for(block.content) + block.info + "\n"
        if lines[opener] != wanted or "".join(lines[opener + 1:closer]) != block.content:
            names.append(block.origin)
    return names


# ------------------------------------------------------------------ files

def read_prompt(path):
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed("{} is not UTF-8".format(path))


def sync(prompt_path, root=ROOT, check=False, out=print):
    text = read_prompt(prompt_path)
    installer = load_installer(root)
    blocks = embeds(root, installer)
    new_text = render(text, blocks)
    if new_text == text:
        out("init prompt already in sync")
        return EXIT_OK
    if check:
        out("init prompt out of sync with: " + ", ".join(
            drifted(text, blocks) or ["its fences or its size paragraph"]))
        out("fix: python3 init/sync_hooks.py")
        return EXIT_DRIFT
    installer.files.write_atomically(prompt_path, new_text.encode("utf-8"),
                               os.stat(prompt_path).st_mode & 0o7777)
    out("init prompt updated")
    return EXIT_OK


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="sync_hooks.py",
        description="Rewrite the copies embedded in the init prompt from their sources.")
    parser.add_argument("--check", action="store_true",
                        help="report drift and exit 1; change nothing")
    parser.add_argument("--prompt", default=os.path.join(ROOT, PROMPT),
                        help="the prompt file (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        return sync(args.prompt, check=args.check)
    except (Malformed, OSError) as error:
        sys.stderr.write("sync_hooks.py: error: {}\n".format(error))
        return EXIT_MALFORMED


if __name__ == "__main__":
    sys.exit(main())
