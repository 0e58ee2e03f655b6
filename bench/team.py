#!/usr/bin/env python3
"""Benchmark of team use: does the shared memory merge like code?

K developers start from one commit, each on a branch of their own, and each saves M times the way
/dream tells the agent to: facts learned, a topic created where none fits, a wrong fact corrected,
a fact deleted on purpose, a correction from the owner in its own file, and whatever the format
stamps on every save. The model's edits are simulated, deterministically from a seed, so a run
can be repeated exactly (--seeds runs several, from --seed on). Then the branches land on `main`
one after another, in several orders and in four ways:

  merge    `git merge` in a clone: the committed .gitattributes is honoured
  rebase   `git pull --rebase` style: the branch replayed onto main commit by commit, then
           fast-forwarded; .gitattributes honoured
  squash   `git merge --squash` in a clone, as a squash merge does it locally
  forge    a squash merge as a forge runs it: no merge driver and no .gitattributes merge
           attribute (GitHub ignores both; a bare `git merge-tree` ignores the tree's
           attributes too), simulated by `* merge=text` in .git/info/attributes

Every conflict is counted, then resolved the mechanical way a person or an agent would: both
sides' lines kept (what `git merge-file --union` does), since that loses nothing; what keeping
main's copy whole would have dropped is counted as well ("at stake"). A forge's conflict is
settled the way spec §4.5.6 says: main merged into the branch in a clone, where the union rule
applies, then the forge's merge again ("settled"). The end state of `main` is then judged as the
next session sees it:

  lost       facts some save wrote, and none deleted, that appear nowhere in memory/
  back       facts deleted on purpose that are there again with no mark of session start's
  doubled    facts that appear twice
  stale      facts a save corrected that are back to a version no correction wrote
  unreached  memory files no pointer in the session-start injection leads to
  twice      memory files two pointers lead to
  dead       pointers to files that do not exist
  stamps     files holding two stamps where one belongs (`Last updated`, `Last dream`), and
             indexes whose Active Context grew past its two lines
  titles     files with two `# ` titles (two branches created the same file)
  markers    conflict markers left in memory/
  leftovers  what the team has not settled, known from what the saves wrote: a fact on two
             lines, a deleted fact still there, a replaced version back, a note two branches
             created under one name, markers
  marked     leftovers among the lines a mark the session-start injection shows (its `## Memory
             marks`, not the ones counted past its cap) tells /dream to look at; named: the same
             for `install.py --check`
  wrong      marks on no leftover

Then a memory whose notes cite the project's files sees 6 of them deleted, 6 renamed and 6
changed: every file citing a path that is gone should be marked in the injection and named by
--check, no other, with the new path of each renamed one, and a second start on the same state
should read no memory file and run no git but the status the baseline reads. Last, a memory of
5,000 notes in 100 folders (--notes, --folders): every note reachable in one step from the
injection, and session start's time against a 10-note memory.

The pointers and the marks are read from the real session-start hook's injection (hooks/ of this
checkout, copied to the scratch folder and run through its preview), as an agent is given them.

Formats (--formats; the first two are the protocol's previous and current formats):

  stamped    the format up to 0.x: `Last dream` and Active Context rewritten in the index at every
             save, a `Last updated` line in every topic file, facts appended to the file of
             their topic, a new topic's pointer appended to its section
  team       the team format: nothing a save stamps, every fact written once in a file of its
             own, no index edit (the session-start hook lists every memory file the index does
             not link), a fact deleted on purpose marked `(deleted)` where it stands, a committed
             `.gitattributes` giving memory/ git's built-in union merge
  team-removing  the team format as it was before deletions were marked: a deleted fact's line
             taken out, a note whose only fact it was deleted as a file
  stamped+union, unstamped+union, sorted+union, team-no-union: the levers one at a time
             (see bench/README.md)

Standard library and git only; Python 3.8 or newer. Usage:
  python3 bench/team.py                      8 developers x 5 saves, 3 orders, every mode
  python3 bench/team.py --orders 1 --seeds 30 --formats team-removing,team
  python3 bench/team.py -k 4 -m 3 --orders 1
  python3 bench/team.py --json out.json      also write every figure as JSON
Exit status 0; 1 with --strict when the team format shows a defect in any mode (a conflict where
the team wrote nothing twice, a lost fact, a deleted fact back unmarked, fewer than 95% of the
leftovers marked or named, a mark on no leftover, a file reached by no pointer or by two, a
doubled stamp, a conflict marker) or the moved files are judged wrong.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOK_FILES = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
MODES = ("merge", "rebase", "squash", "forge")
START_DAY = 1  # 2026-11-01 is day 1 of the simulated month
TOKEN = re.compile(r"\bf\d+x\d+x\d+\b")
CORRECTION = re.compile(r"\bc(\d+)x(\d+)\b")
STAMP = re.compile(r"<!--\s*last[ _-]?(dream|updated)\b", re.I)
MARKER = re.compile(r"^(<{7}|={7}|>{7})( |$)")
LINK = re.compile(r"\]\((<[^>\n]+>|[^)\s]+)\)")

# --- the formats -------------------------------------------------------------------------------


class Format(object):
    """What a save writes, as dream.md of that format tells the agent to write it.

    stamps    a save rewrites `Last dream` in the index and `Last updated` in each file it changes
    context   a save rewrites the index's Active Context with what its developer is doing
    facts     "append": a fact goes at the end of its topic's file, a new topic gets a new file;
              "sorted": the same, each line at its place in the file's sorted list;
              "notes": every fact goes in a new note, a file of its own in its topic's folder;
              no file is appended to
    pointers  "append": a new file's pointer goes at the end of its index section;
              "sorted": at its place in the section's sorted list;
              "listing": the index is not edited; the session-start hook lists the files
    union     the project commits `.gitattributes` with `memory/** merge=union`
    deletes   "remove": a fact deleted on purpose is taken out, its line (and the blank line that
              kept it apart) or, for a note whose only fact it was, the file;
              "tombstone": its line stays where it stands, `(deleted) ` written after its list
              mark, the same line on every branch that deletes it (spec §4.5.3)
    """

    def __init__(self, name, stamps, context, facts, pointers, union, deletes="remove"):
        self.name = name
        self.stamps = stamps
        self.context = context
        self.facts = facts
        self.pointers = pointers
        self.union = union
        self.deletes = deletes


FORMATS = dict((f.name, f) for f in (
    Format("stamped", True, True, "append", "append", False),
    Format("stamped+union", True, True, "append", "append", True),
    Format("unstamped+union", False, False, "append", "append", True),
    Format("sorted+union", False, False, "sorted", "sorted", True),
    Format("team-no-union", False, False, "notes", "listing", False, "tombstone"),
    Format("team-removing", False, False, "notes", "listing", True),
    Format("team", False, False, "notes", "listing", True, "tombstone"),
))
DEFAULT_FORMATS = ("stamped", "stamped+union", "unstamped+union", "sorted+union", "team-no-union",
                   "team-removing", "team")
TOMBSTONE = "- (deleted) "  # what a deletion writes after the list mark (spec §4.5.3)

# --- what developers learn ---------------------------------------------------------------------

# Topics the starting memory holds (file, title, section) and topics a save may open.
START_TOPICS = (("decisions.md", "Decisions", "Decisions"), ("gotchas.md", "Gotchas", "Gotchas"),
                ("deployment.md", "Deployment", "Topics"), ("testing.md", "Testing", "Topics"))
NEW_TOPICS = ("caching", "auth-tokens", "logging", "database-migrations", "ci-pipeline",
              "feature-flags", "api-versioning", "search-index", "billing", "email-delivery",
              "rate-limits", "background-jobs", "observability", "local-setup", "packaging",
              "dependency-pins", "load-testing", "error-budget", "backups", "secrets-store")
WORDS = ("retry", "timeout", "bucket", "region", "port", "schema", "index", "queue", "worker",
         "token", "header", "cache", "lock", "batch", "quota", "shard", "replica", "cron",
         "webhook", "locale", "vendor", "proxy", "signing", "rollout", "fixture", "seed",
         "snapshot", "migration", "budget", "alert", "trace", "sampling", "pool", "backoff")


def title_of(slug):
    return slug.replace("-", " ").capitalize()


class Fact(object):
    def __init__(self, token, topic, key, statement):
        self.token = token      # fNxSxI: developer N, save S, fact I; unique in the run
        self.topic = topic      # the topic's slug: decisions, gotchas, deployment, caching, ...
        self.key = key          # two words that name what the fact is about
        self.statement = statement


def learned_facts(rng, dev, save):
    """1 to 3 facts a session learned: mostly decisions and gotchas, the files every session
    writes to, then facts on existing topics, now and then a new topic."""
    facts = []
    for number in range(rng.choice((1, 1, 2, 2, 3))):
        roll = rng.random()
        if roll < 0.30:
            topic = "decisions"
        elif roll < 0.60:
            topic = "gotchas"
        elif roll < 0.80:
            topic = rng.choice(("deployment", "testing"))
        else:
            topic = rng.choice(NEW_TOPICS)
        key = "%s %s" % (rng.choice(WORDS), rng.choice(WORDS))
        token = "f%dx%dx%d" % (dev, save, number)
        statement = "the %s is set to %d in the %s path" % (key, rng.randrange(2, 999), topic)
        facts.append(Fact(token, topic, key, statement))
    return facts


# --- the starting memory -------------------------------------------------------------------------

def stamped_start():
    """An established memory in the stamped format: four topic files, one feedback file."""
    files = {}
    date = day(0)
    facts = {"decisions": ["the service keeps no state between requests",
                           "the cache is in-process, not Redis",
                           "releases are cut from main only"],
             "gotchas": ["the dev server binds IPv6: use 127.0.0.1",
                         "the test database is reset by every run",
                         "the linter rejects tabs in YAML"],
             "deployment": ["uploads go to bucket media-eu", "the deploy job needs the signing key"],
             "testing": ["the e2e suite needs port 8080 free"]}
    number = 0
    for name, title, _ in START_TOPICS:
        lines = ["# %s" % title, "<!-- Last updated: %s -->" % date, ""]
        for text in facts[name[:-3]]:
            lines.append("- %s: %s (f0x0x%d)" % (date, text, number))
            number += 1
        files[name] = "\n".join(lines) + "\n"
    files["feedback_verify-before-claiming-done.md"] = (
        "# Verify before claiming done\n<!-- Last updated: %s -->\n\n**The lesson.** Run the "
        "gate and quote its output.\n\n**Why:** %s: a change was called done with a failing "
        "test.\n\n**How to apply:** run `make check` before saying a change works.\n" % (date, date))
    index = ["# Project Memory Index", "<!-- Last dream: %s -->" % date,
             "<!-- An index, not a store: one pointer line per topic file, under 80 lines, "
             "rewritten by /dream. Never session history. -->", "", "## Active Context",
             "Getting the first release out; next: the deploy job.", "", "## Decisions",
             "- [Decisions](decisions.md) — why the service is stateless, the cache, releases", "",
             "## Gotchas", "- [Gotchas](gotchas.md) — the dev server, the test database, YAML",
             "", "## Feedback from the owner",
             "- [Verify before claiming done](feedback_verify-before-claiming-done.md) — run the "
             "gate and quote its output", "", "## Topics",
             "- [Deployment](deployment.md) — where uploads go, what the deploy job needs",
             "- [Testing](testing.md) — what the e2e suite needs"]
    files["MEMORY.md"] = "\n".join(index) + "\n"
    return files


def start_memory(fmt):
    """The starting memory in `fmt`: the stamped one; for the team format, that memory moved by
    the installer's own migration (so the benchmark measures what --update produces); for the
    levers tried alone, the stamped memory with its stamps and Active Context taken out."""
    files = stamped_start()
    if fmt.stamps:
        return files
    if fmt.pointers == "listing":
        import memory_format
        return memory_format.migrated(files, "MEMORY.md", today=day(0))
    unstamped = {}
    for name, text in files.items():
        lines = [line for line in text.split("\n") if not STAMP.search(line)]
        if "## Active Context" in lines:
            at = lines.index("## Active Context")
            lines = lines[:at] + lines[at + 3:]
        unstamped[name] = "\n".join(lines)
    return unstamped


def day(number):
    return "2026-11-%02d" % (START_DAY + number)


# --- one save, as /dream of each format does it --------------------------------------------------

class Memory(object):
    """The memory folder of one checkout, read and written as text."""

    def __init__(self, folder):
        self.folder = folder

    def path(self, name):
        return os.path.join(self.folder, name)

    def names(self):
        """Every memory file: those beside the index, then the notes of each topic folder as
        `folder/note.md`."""
        flat, notes = [], []
        for name in sorted(os.listdir(self.folder)):
            if name.endswith(".md"):
                flat.append(name)
            elif os.path.isdir(self.path(name)) and not name.startswith("."):
                notes += ["%s/%s" % (name, note) for note in sorted(os.listdir(self.path(name)))
                          if note.endswith(".md")]
        return flat + notes

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as stream:
            return stream.read()

    def write(self, name, text):
        if not os.path.isdir(os.path.dirname(self.path(name))):
            os.makedirs(os.path.dirname(self.path(name)))
        with open(self.path(name), "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)

    def exists(self, name):
        return os.path.exists(self.path(name))

    def remove(self, name):
        os.remove(self.path(name))


def set_stamp(lines, stamp_kind, date):
    for number, line in enumerate(lines):
        if STAMP.search(line):
            lines[number] = "<!-- Last %s: %s -->" % (stamp_kind, date)
            return lines
    return lines[:1] + ["<!-- Last %s: %s -->" % (stamp_kind, date)] + lines[1:]


def list_lines(lines):
    return [n for n, line in enumerate(lines) if line.startswith("- ")]


def add_list_line(lines, line, sorted_place):
    """At the end of the file's list, or at its sorted place among the list lines."""
    items = list_lines(lines)
    if sorted_place:
        for number in items:
            if lines[number] > line:
                return lines[:number] + [line] + lines[number:]
    if items:
        return lines[:items[-1] + 1] + [line] + lines[items[-1] + 1:]
    return lines + ([""] if lines and lines[-1] else []) + [line]


def fact_line(fmt, fact, date):
    if fmt.facts == "sorted":
        return "- %s: %s (%s, %s)" % (fact.key, fact.statement, date, fact.token)
    return "- %s: %s (%s)" % (date, fact.statement, fact.token)


def topic_file_of(fact):
    if fact.topic in ("decisions", "gotchas", "deployment", "testing"):
        return fact.topic + ".md"
    return fact.topic + ".md"


def section_of(topic):
    return {"decisions": "Decisions", "gotchas": "Gotchas"}.get(topic, "Topics")


def index_add_pointer(lines, section, pointer, sorted_place):
    """A pointer line at the end of its section (or its sorted place there); the section is
    added at the end when the index lacks it."""
    heading = "## " + section
    if heading not in lines:
        lines = lines + ([""] if lines[-1] else []) + [heading]
    start = lines.index(heading) + 1
    end = start
    while end < len(lines) and not lines[end].startswith("#"):
        end += 1
    items = [n for n in range(start, end) if lines[n].startswith("- ")]
    if sorted_place:
        for number in items:
            if lines[number] > pointer:
                return lines[:number] + [pointer] + lines[number:]
    at = (items[-1] + 1) if items else start
    return lines[:at] + [pointer] + lines[at:]


def save(fmt, memory, rng, dev, number, date):
    """One /dream: the facts this session learned, maybe a correction, maybe a feedback file,
    then the index as the format wants it. Returns what it wrote, for the judgement."""
    wrote = {"facts": [], "corrected": [], "deleted": [], "superseded": [], "created": []}
    new_pointers = []
    changed = set()
    for fact in learned_facts(rng, dev, number):
        wrote["facts"].append(fact.token)
        if fmt.facts == "notes":
            name = "%s/%s.md" % (fact.topic, fact.key.replace(" ", "-"))
            taken = 1
            while memory.exists(name):  # the rule: a name no note of this branch has yet
                taken += 1
                name = "%s/%s-%d.md" % (fact.topic, fact.key.replace(" ", "-"), taken)
            memory.write(name, "# %s\n\n%s\n" % (fact.key.capitalize(), fact_line(fmt, fact, date)))
            wrote["created"].append(name)
            continue
        name = topic_file_of(fact)
        if memory.exists(name):
            lines = memory.read(name).rstrip("\n").split("\n")
        else:
            lines = ["# %s" % title_of(fact.topic), ""]
            new_pointers.append((section_of(fact.topic), "- [%s](%s) — %s" % (
                title_of(fact.topic), name, "what is known about %s" % fact.topic.replace("-", " "))))
        lines = add_list_line(lines, fact_line(fmt, fact, date), fmt.facts == "sorted")
        memory.write(name, "\n".join(lines) + "\n")
        changed.add(name)
    if rng.random() < 0.35:
        corrected = correct_a_fact(fmt, memory, rng, dev, number, date)
        if corrected:
            wrote["corrected"].append(corrected[0])
            wrote["superseded"].append(corrected[2])
            changed.add(corrected[1])
    if rng.random() < 0.2:
        deleted = delete_a_fact(fmt, memory, rng)
        if deleted:
            wrote["deleted"].append(deleted[0])
            wrote["superseded"].append(deleted[2])
            if memory.exists(deleted[1]):
                changed.add(deleted[1])
    if rng.random() < 0.15:
        key = "%s-%s" % (rng.choice(WORDS), rng.choice(WORDS))
        name = ("feedback/%s.md" if fmt.facts == "notes" else "feedback_%s.md") % key
        if not memory.exists(name):
            token = "f%dx%dx9" % (dev, number)
            wrote["facts"].append(token)
            memory.write(name, "# Check the %s\n\n**The lesson.** Check the %s before a change "
                               "(%s).\n\n**Why:** %s: it broke once.\n\n**How to apply:** look "
                               "first.\n" % (key, key, token, date))
            changed.add(name)
            if fmt.facts != "notes":
                new_pointers.append(("Feedback from the owner",
                                     "- [Check the %s](%s) — before a change" % (key, name)))
    if fmt.stamps:
        for name in sorted(changed):
            lines = memory.read(name).rstrip("\n").split("\n")
            memory.write(name, "\n".join(set_stamp(lines, "updated", date)) + "\n")
    if fmt.pointers != "listing" or fmt.stamps or fmt.context:
        rewrite_index(fmt, memory, dev, number, date, new_pointers)
    return wrote


def fact_lines(memory):
    """(file, line number, token, line) of every fact a save may correct or delete, sorted by
    token, so every format chooses the same facts from the same random stream."""
    candidates = []
    for name in memory.names():
        if name == "MEMORY.md":
            continue
        for line_number, line in enumerate(memory.read(name).split("\n")):
            found = TOKEN.search(line)
            if line.startswith("- ") and found and not line.startswith(TOMBSTONE):
                candidates.append((name, line_number, found.group(0), line))
    return sorted(candidates, key=lambda candidate: candidate[2])


def correct_a_fact(fmt, memory, rng, dev, number, date):
    """Replace one dated fact in place, as the rules say: the stale version goes, the date of
    the change is noted. Returns (token, file, the line replaced) or None when there is nothing
    to correct."""
    candidates = fact_lines(memory)
    if not candidates:
        return None
    name, line_number, token, line = rng.choice(candidates)
    lines = memory.read(name).split("\n")
    marker = "c%dx%d" % (dev, number)
    if fmt.facts == "sorted":
        key = line[2:].split(":", 1)[0]
        lines[line_number] = "- %s: now %d, since %s (%s, %s)" % (
            key, rng.randrange(2, 999), date, token, marker)
    else:
        lines[line_number] = "- %s: the value is now %d, changed on this date (%s, %s)" % (
            date, rng.randrange(2, 999), token, marker)
    memory.write(name, "\n".join(lines))
    return token, name, line


def delete_a_fact(fmt, memory, rng):
    """Delete one fact on purpose, the way the format says. Returns (token, file, the line
    deleted) or None when there is nothing to delete."""
    candidates = fact_lines(memory)
    if not candidates:
        return None
    name, line_number, token, line = rng.choice(candidates)
    lines = memory.read(name).split("\n")
    if fmt.deletes == "tombstone":
        lines[line_number] = TOMBSTONE + line[2:]
    elif "/" in name and sum(1 for other in lines if other.startswith("- ")) == 1:
        memory.remove(name)  # a note whose only fact this was goes whole
        return token, name, line
    else:
        gap = line_number - 1 if line_number > 0 and not lines[line_number - 1].strip() else \
            line_number + 1 if line_number + 1 < len(lines) and not lines[line_number + 1].strip() \
            else None
        lines = [text for at, text in enumerate(lines) if at not in (line_number, gap)]
    memory.write(name, "\n".join(lines))
    return token, name, line


def rewrite_index(fmt, memory, dev, number, date, new_pointers):
    lines = memory.read("MEMORY.md").rstrip("\n").split("\n")
    if fmt.stamps:
        lines = set_stamp(lines, "dream", date)
    if fmt.context and "## Active Context" in lines:
        start = lines.index("## Active Context") + 1
        end = start
        while end < len(lines) and not lines[end].startswith("#"):
            end += 1
        lines = lines[:start] + ["Developer %d: task %d, next: its tests." % (dev, number), ""] \
            + lines[end:]
    for section, pointer in new_pointers:
        lines = index_add_pointer(lines, section, pointer, fmt.pointers == "sorted")
    memory.write("MEMORY.md", "\n".join(lines) + "\n")


# --- git -----------------------------------------------------------------------------------------

class Git(object):
    def __init__(self, scratch):
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "MCP_", "CLAUDE_"))}
        self.env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                         "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
                         "GIT_COMMITTER_NAME": "Bench",
                         "GIT_COMMITTER_EMAIL": "bench@example.invalid",
                         "GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no", "HOME": scratch,
                         "LC_ALL": "C"})

    def run(self, repo, *args, **kwargs):
        done = subprocess.run(("git",) + args, cwd=repo, env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, input=kwargs.get("input"))
        if kwargs.get("check", True) and done.returncode != 0:
            raise RuntimeError("git %s failed in %s: %s" % (" ".join(args), repo,
                                                             done.stderr.decode("utf-8", "replace")))
        return done

    def out(self, repo, *args):
        return self.run(repo, *args).stdout.decode("utf-8", "surrogateescape")


def build_origin(git, folder, fmt, developers, saves, seed):
    """The repository every developer cloned: the start commit on main, then one branch per
    developer with one commit per save. Returns {token: [correction markers]} and all tokens."""
    os.makedirs(os.path.join(folder, "memory"))
    git.run(folder, "init", "-q", "-b", "main")
    memory = Memory(os.path.join(folder, "memory"))
    for name, text in start_memory(fmt).items():
        memory.write(name, text)
    with open(os.path.join(folder, "README.md"), "w", encoding="utf-8") as stream:
        stream.write("A project whose team shares memory/.\n")
    if fmt.union:
        with open(os.path.join(folder, ".gitattributes"), "w", encoding="utf-8") as stream:
            stream.write(union_attributes())
    git.run(folder, "add", "-A")
    git.run(folder, "commit", "-q", "-m", "start")
    written = {"facts": set(TOKEN.findall("".join(memory.read(n) for n in memory.names()))),
               "corrected": {}, "corrected_by": {}, "deleted": set(), "superseded": set(),
               "created_by": {}}
    for dev in range(1, developers + 1):
        rng = random.Random("%d-%d" % (seed, dev))
        git.run(folder, "checkout", "-q", "-b", "dev%d" % dev, "main")
        for number in range(1, saves + 1):
            did = save(fmt, memory, rng, dev, number, day(number))
            written["facts"].update(did["facts"])
            for token in did["corrected"]:
                written["corrected"].setdefault(token, set()).add("c%dx%d" % (dev, number))
                written["corrected_by"].setdefault("dev%d" % dev, set()).add(token)
            for token in did["deleted"]:
                written["deleted"].add(token)
                written["corrected_by"].setdefault("dev%d" % dev, set()).add(token)
            written["superseded"].update(did["superseded"])
            written["created_by"].setdefault("dev%d" % dev, set()).update(did["created"])
            git.run(folder, "add", "-A", "memory")
            git.run(folder, "commit", "-q", "--allow-empty", "-m",
                    "memory: save %d of developer %d" % (number, dev))
    git.run(folder, "checkout", "-q", "main")
    return written


def union_attributes():
    import memory_format
    return memory_format.GITATTRIBUTES_LINES


# --- landing the branches ------------------------------------------------------------------------

class Landing(object):
    """What landing the branches cost: conflicts met, and what resolving them by hand risked."""

    def __init__(self):
        self.merges = 0
        self.conflicted_merges = 0
        self.conflicted_files = 0
        self.at_stake = 0
        self.same_fact = 0  # merges of a branch that changed a fact a branch merged before changed
        self.same_name = 0  # merges of a branch that wrote a note under a name one merged before did
        self.disagree = 0  # merges of either kind: where the team wrote one thing twice
        self.settled = 0  # forge: conflicted merges the one local step (spec §4.5.6) settled


def land(git, origin, folder, mode, order, written):
    git.run(os.path.dirname(folder), "clone", "-q", origin, folder)
    for branch in order:
        git.run(folder, "branch", "-q", branch, "origin/" + branch)
    if mode == "forge":
        with open(os.path.join(folder, ".git", "info", "attributes"), "w") as stream:
            stream.write("* merge=text\n")
    landing = Landing()
    corrected_by, created_by = written["corrected_by"], written["created_by"]
    corrected_on_main, created_on_main = set(), set()
    for branch in order:
        landing.merges += 1
        same_fact = bool(corrected_by.get(branch, set()) & corrected_on_main)
        same_name = bool(created_by.get(branch, set()) & created_on_main)
        landing.same_fact += same_fact
        landing.same_name += same_name
        landing.disagree += same_fact or same_name
        corrected_on_main |= corrected_by.get(branch, set())
        created_on_main |= created_by.get(branch, set())
        conflicted = 0
        if mode == "merge":
            done = git.run(folder, "merge", "-q", "--no-ff", "--no-edit", branch, check=False)
            if done.returncode != 0:
                conflicted += resolve(git, folder, landing)
                git.run(folder, "commit", "-q", "--no-edit")
        elif mode in ("squash", "forge"):
            done = git.run(folder, "merge", "-q", "--squash", branch, check=False)
            if done.returncode != 0 and mode == "forge":
                conflicted += settle_in_a_clone(git, folder, branch, landing)
            elif done.returncode != 0:
                conflicted += resolve(git, folder, landing)
            git.run(folder, "commit", "-q", "-m", "squashed " + branch, "--allow-empty")
        else:
            done = git.run(folder, "rebase", "-q", "main", branch, check=False)
            while done.returncode != 0:
                conflicted += resolve(git, folder, landing)
                done = git.run(folder, "-c", "core.editor=true", "rebase", "--continue", check=False)
            git.run(folder, "checkout", "-q", "main")
            git.run(folder, "merge", "-q", "--ff-only", branch)
        if conflicted:
            landing.conflicted_merges += 1
            landing.conflicted_files += conflicted
    return landing


def settle_in_a_clone(git, folder, branch, landing):
    """What a developer does when the forge says a pull request conflicts (spec §4.5.6): in a
    clone, where the union rule applies, merge main into the branch and push it; the forge's
    merge then goes through. Returns the count of files the forge found conflicted; what the
    local merge itself could not merge is resolved as resolve() does, and counted unsettled."""
    conflicted = resolve(git, folder, landing)  # counts what keeping main's copy would drop
    git.run(folder, "reset", "-q", "--hard", "HEAD")
    forge_attributes = os.path.join(folder, ".git", "info", "attributes")
    os.rename(forge_attributes, forge_attributes + ".forge")
    try:
        git.run(folder, "checkout", "-q", branch)
        done = git.run(folder, "merge", "-q", "--no-edit", "main", check=False)
        if done.returncode != 0:
            resolve(git, folder, landing)
            git.run(folder, "commit", "-q", "--no-edit")
        else:
            landing.settled += 1
        git.run(folder, "checkout", "-q", "main")
    finally:
        os.rename(forge_attributes + ".forge", forge_attributes)
    again = git.run(folder, "merge", "-q", "--squash", branch, check=False)
    if again.returncode != 0:
        raise RuntimeError("the forge's merge still conflicts after the local step in %s" % folder)
    return conflicted


def resolve(git, folder, landing):
    """Resolve every conflicted path by keeping both sides' lines, the resolution that loses
    nothing; count what keeping main's copy whole would have dropped. Returns the count of
    conflicted files."""
    listed = git.out(folder, "ls-files", "-u", "-z").split("\0")
    stages = {}
    for entry in listed:
        if not entry:
            continue
        info, path = entry.split("\t", 1)
        _, blob, stage = info.split()
        stages.setdefault(path, {})[int(stage)] = blob
    if not stages:
        raise RuntimeError("git stopped without a conflicted path in %s" % folder)
    for path, blobs in stages.items():
        texts = dict((stage, git.out(folder, "cat-file", "-p", blob)) for stage, blob in blobs.items())
        if 2 not in texts or 3 not in texts:  # deleted on one side, changed on the other
            result = texts.get(2, texts.get(3, ""))
            ours = texts.get(2, "")
        else:
            result = merge_file(git, folder, texts, "--union")
            ours = texts[2]
        landing.at_stake += len(set(TOKEN.findall(result)) - set(TOKEN.findall(ours)))
        with open(os.path.join(folder, path), "w", encoding="utf-8", newline="\n") as stream:
            stream.write(result)
        git.run(folder, "add", "--", path)
    return len(stages)


def merge_file(git, folder, texts, how):
    scratch = os.path.join(folder, ".git", "bench-merge")
    os.makedirs(scratch, exist_ok=True)
    names = []
    for stage in (2, 1, 3):
        name = os.path.join(scratch, str(stage))
        with open(name, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(texts.get(stage, ""))
        names.append(name)
    done = git.run(folder, "merge-file", "-p", how, *names, check=False)
    return done.stdout.decode("utf-8", "surrogateescape")


# --- judging the end state ------------------------------------------------------------------------

class Judge(object):
    """Reads the end state of main as the next session would: memory files from disk, pointers
    from the session-start hook's own injection."""

    def __init__(self, scratch):
        self.hooks = os.path.join(scratch, "hooks")
        os.makedirs(self.hooks)
        for name in HOOK_FILES:
            shutil.copyfile(os.path.join(ROOT, "hooks", name), os.path.join(self.hooks, name))
        self.session_start = None
        self.health = None

    def injection(self, project):
        """The session-start injection as a session starting now is given it, marks and all;
        nothing is kept in the account's cache (the bench makes thousands of projects)."""
        if self.session_start is None:
            from importlib.machinery import SourceFileLoader
            module = type(sys)("bench_session_start")
            module.__file__ = os.path.join(self.hooks, "session-start.py")
            SourceFileLoader(module.__name__, module.__file__).exec_module(module)
            self.session_start = module
        saved = os.environ.get("CLAUDE_PROJECT_DIR")
        os.environ["CLAUDE_PROJECT_DIR"] = project
        writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
        try:
            return self.session_start.preview_injection(project)
        finally:
            sys.dont_write_bytecode = writes
            if saved is None:
                os.environ.pop("CLAUDE_PROJECT_DIR", None)
            else:
                os.environ["CLAUDE_PROJECT_DIR"] = saved

    def judge(self, project, written):
        """The end state's figures. A forge's clone gave up the union attribute to merge as the
        forge does; the state is judged as a teammate's clone sees it, with the attribute."""
        forge_attributes = os.path.join(project, ".git", "info", "attributes")
        if os.path.exists(forge_attributes):
            os.remove(forge_attributes)
        memory = Memory(os.path.join(project, "memory"))
        texts = dict((name, memory.read(name)) for name in memory.names())
        found = {}
        for text in texts.values():
            for token in TOKEN.findall(text):
                found[token] = found.get(token, 0) + 1
        lines_of_token = {}
        for text in texts.values():
            for line in text.split("\n"):
                for token in TOKEN.findall(line):
                    lines_of_token.setdefault(token, []).append(line)
        result = {
            "facts": len(written["facts"]),
            "deleted": len(written["deleted"]),
            "lost": sum(1 for t in written["facts"] if t not in found and t not in written["deleted"]),
            "doubled": sum(1 for t in written["facts"] if found.get(t, 0) > 1),
            "stale": sum(1 for t, marks in written["corrected"].items()
                         if t in lines_of_token and not any(
                             CORRECTION.search(line) for line in lines_of_token[t])),
        }
        pointed = {}
        dead = 0
        injected = self.injection(project)
        result["index_lines"] = index_section_lines(injected)
        folders = set(n.split("/")[0] for n in texts if "/" in n)
        for target in LINK.findall(injected):
            target = target.strip("<>")
            if target.startswith("memory/"):
                target = target[len("memory/"):]
            if target in texts or target.rstrip("/") in folders:
                pointed[target.rstrip("/")] = pointed.get(target.rstrip("/"), 0) + 1
            else:
                dead += 1

        def pointers_to(name):
            """A note is reached through its folder's line, or a link of its own."""
            return pointed.get(name, 0) + (pointed.get(name.split("/")[0], 0) if "/" in name else 0)
        files = [n for n in texts if n != "MEMORY.md"]
        result.update({
            "unreached": sum(1 for n in files if pointers_to(n) == 0),
            "twice": sum(1 for n in files if pointers_to(n) > 1),
            "dead": dead,
            "stamps": sum(1 for text in texts.values() if len(STAMP.findall(text)) > 1)
            + (1 if active_context_lines(texts.get("MEMORY.md", "")) > 2 else 0),
            "titles": sum(1 for text in texts.values()
                          if sum(1 for line in text.split("\n") if line.startswith("# ")) > 1),
            "markers": sum(1 for text in texts.values() for line in text.split("\n")
                           if MARKER.match(line)),
        })
        result.update(self.leftovers(project, texts, written, injected))
        return result

    def leftovers(self, project, texts, written, injected):
        """The leftovers the end state holds, found from what each save wrote (leftover_units),
        against the marks the session-start injection shows (injected_marks) and what
        `install.py --check` names (memory_health's merge-leftover checks)."""
        if self.health is None:
            import memory_health
            self.health = memory_health
        marks = [(name, named) for name, named, text in injected_marks(injected)
                 if not text.startswith("cites `")]
        named = [(f["file"][len("memory/"):], self.lines_named(texts, f))
                 for f in self.health.merge_leftover_findings(project, {})  # memory/MEMORY.md
                 if f["check"] != "stamped-format"]
        units = leftover_units(texts, written)
        deleted_units = [u for u in units if u[2] in written["deleted"]]
        return {"leftovers": len(units),
                "marked": sum(1 for u in units if covers(marks, u)),
                "named": sum(1 for u in units if covers(named, u)),
                "wrong": sum(1 for m in marks if not any(covers([m], u) for u in units)),
                "back": sum(1 for u in deleted_units if not covers(marks, u))}


    def lines_named(self, texts, finding):
        """The lines a finding tells /dream to look at: each line it names and the one above
        (a diverged fact is named at the second of two), and for two facts that touch, the run
        of facts its message names (the hooks' run_of_facts)."""
        lines = texts[finding["file"][len("memory/"):]].split("\n")
        named = set()
        for number in finding["lines"]:
            named.update((number - 1, number))
            if finding["check"] == "diverged-fact":
                start, end = self.health.BUDGET.run_of_facts(lines, number - 1, number, set())
                named.update(range(start, end + 1))
        return named


def git_answer(result):
    code, out = result
    return out if code == 0 else None


MARK_LINE = re.compile(r"^- memory/(\S+?):(\d+) (.*)$")
MARK_RANGES = re.compile(r"lines (\d+)(?:-| and )(\d+)")


def injected_marks(injected):
    """[(file, {lines the mark tells /dream to compare}, the line)] of the marks the session-start
    injection shows (its `## Memory marks` section, not the ones it counts past its cap): a
    mark's line, and the lines it names (`lines 3-4`, a run's `lines 3-8`, titles on two lines)."""
    lines = injected.split("\n")
    start = next((n for n, line in enumerate(lines) if line.startswith("## Memory marks")), None)
    marks = []
    for line in lines[start + 1:] if start is not None else ():
        found = MARK_LINE.match(line)
        if not found:
            break
        named = {int(found.group(2))}
        for low, high in MARK_RANGES.findall(found.group(3)):
            named.update(range(int(low), int(high) + 1))
        marks.append((found.group(1), named, found.group(3)))
    return marks


def leftover_units(texts, written):
    """[(file, its lines concerned or None for the whole file, token or None)] of what the team
    has not settled, from what the saves wrote, never from a check's reading: a fact on two
    lines (two versions), a fact deleted on purpose still there, a version a save replaced back
    in its file, a note two branches created under one name, conflict markers. A fact whose
    every line is a deletion is settled, however many versions were deleted."""
    units = []
    for name, text in sorted(texts.items()):
        lines = text.split("\n")
        where = {}
        for number, line in enumerate(lines, start=1):
            for token in TOKEN.findall(line):
                where.setdefault(token, []).append(number)
        for token, numbers in sorted(where.items()):
            kept = [n for n in numbers if not lines[n - 1].startswith(TOMBSTONE)]
            if kept and (len(numbers) > 1 or token in written["deleted"]
                         or any(lines[n - 1] in written["superseded"] for n in kept)):
                units.append((name, set(numbers), token))
        creators = [b for b, names in written["created_by"].items() if name in names]
        if len(creators) > 1:
            units.append((name, None, None))
        marked = set(n for n, line in enumerate(lines, start=1) if MARKER.match(line))
        if marked:
            units.append((name, marked, None))
    return units


def covers(marks, unit):
    """Whether one of `marks` [(file, {lines it names})] names the unit: a line of it, or any
    line of the file for a unit of a whole file."""
    name, lines, _ = unit
    return any(file == name and (lines is None or named & lines) for file, named in marks)


def index_section_lines(injected):
    """Non-blank lines of the injection's memory index section: what every session pays for."""
    lines = injected.split("\n")
    start = next((n for n, line in enumerate(lines) if line.startswith("## Memory index (")), None)
    if start is None:
        return 0
    end = start + 1
    while end < len(lines) and not lines[end].startswith(("## Last handoff", "</project-memory>")):
        end += 1
    body = [line for line in lines[start + 1:end] if line.strip()]
    return len(body) - (1 if lines[end:end + 1] == ["</project-memory>"] else 0)


def active_context_lines(index):
    lines = index.split("\n")
    if "## Active Context" not in lines:
        return 0
    count = 0
    for line in lines[lines.index("## Active Context") + 1:]:
        if line.startswith("#"):
            break
        count += 1 if line.strip() else 0
    return count


# --- the run ---------------------------------------------------------------------------------------

LANDING_COLUMNS = ("merges", "same_fact", "same_name", "disagree", "conflicted", "settled", "files",
                   "at_stake")
END_COLUMNS = ("index_lines", "facts", "deleted", "lost", "back", "doubled", "stale", "unreached",
               "twice", "dead", "stamps", "titles", "markers", "leftovers", "marked", "named",
               "wrong")
COLUMNS = LANDING_COLUMNS + END_COLUMNS
END_STATE_DEFECTS = ("lost", "back", "unreached", "twice", "dead", "stamps", "markers", "wrong")
DETECTED_AT_LEAST = 0.95  # of the leftovers, marked at session start and named by --check


def defects(totals, mode):
    """What the team format must never show: a conflict where the team did not write one thing
    twice (on the forge, which ignores the union rule, a conflict is allowed in the merges where
    two branches changed or deleted one fact, or wrote a note under one name; nowhere else), a
    lost fact, a deleted fact back with no mark, a mark on no leftover, fewer than
    DETECTED_AT_LEAST of the leftovers marked or named, or any other defect of the end state."""
    allowed = totals["disagree"] if mode == "forge" else 0
    missed = sum(1 for column in ("marked", "named")
                 if totals[column] < DETECTED_AT_LEAST * totals["leftovers"])
    return (max(0, totals["conflicted"] - allowed) + missed
            + sum(totals[column] for column in END_STATE_DEFECTS))


def landing_orders(developers, orders, seed):
    """The first order is dev1, dev2, ...; the others are shuffled from the seed."""
    branches = ["dev%d" % dev for dev in range(1, developers + 1)]
    shuffler = random.Random(seed)
    order_list = [list(branches)]
    while len(order_list) < orders:
        order = list(branches)
        shuffler.shuffle(order)
        order_list.append(order)
    return order_list


def run(formats, developers, saves, orders, seed, modes=MODES, scratch=None, keep=False, seeds=1):
    """{format: {mode: totals over the seeds and orders}} and the orders of the first seed."""
    sys.path.insert(0, ROOT)
    owned = scratch is None
    scratch = scratch or tempfile.mkdtemp(prefix="mcp-team-bench-")
    git = Git(scratch)
    judge = Judge(scratch)
    results = dict((name, dict((mode, dict((c, 0) for c in COLUMNS)) for mode in modes))
                   for name in formats)
    import memory_health
    stale = dict((column, 0) for column in STALE_COLUMNS)
    try:
        for each in range(seed, seed + seeds):
            for column, value in stale_citations(git, scratch, each, judge, memory_health).items():
                stale[column] += value
            for name in formats:
                origin = os.path.join(scratch, "%s-%d" % (name, each), "origin")
                written = build_origin(git, origin, FORMATS[name], developers, saves, each)
                for mode in modes:
                    for number, order in enumerate(landing_orders(developers, orders, each)):
                        folder = os.path.join(scratch, "%s-%d" % (name, each), "%s-%d" % (mode, number))
                        add_up(results[name][mode], land(git, origin, folder, mode, order, written),
                               judge.judge(folder, written))
                        if not keep:
                            shutil.rmtree(folder, ignore_errors=True)
                if not keep:
                    shutil.rmtree(os.path.dirname(origin), ignore_errors=True)
    finally:
        if owned and not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return results, landing_orders(developers, orders, seed), stale


def add_up(totals, landing, judged):
    totals["merges"] += landing.merges
    totals["conflicted"] += landing.conflicted_merges
    totals["files"] += landing.conflicted_files
    for column in ("same_fact", "same_name", "disagree", "settled", "at_stake"):
        totals[column] += getattr(landing, column)
    for column in END_COLUMNS:
        totals[column] += judged[column]


# --- a memory whose cited files moved ------------------------------------------------------------

STALE_COLUMNS = ("files", "stale", "marked", "marked_fresh", "new_path_wrong", "named",
                 "named_fresh", "reads_again", "git_again")
SOURCE_FOLDERS = ("src/api", "src/core", "src/jobs", "lib/util", "tests")
CITATION_FORMS = ("- %(date)s: `%(path)s` holds the %(what)s.",
                  "- %(date)s: the %(what)s starts at `%(path)s:%(line)d`.",
                  "- %(date)s: check the %(what)s with `python3 -m pytest %(path)s -q`.",
                  "- %(date)s: the %(what)s lives in [%(name)s](../../%(path)s).")


def stale_citations(git, scratch, seed, judge, health):
    """A memory of notes and topic files that cite the project's files, then commits that delete
    6 of the cited files, rename 6 (3 into another folder) and change 6 more, and a note written
    after them that says one of the deleted paths was removed. Judged against what each file
    cites (the rule), never against a check: a file is stale when it cites a path that is gone,
    fresh otherwise; the note that records the removal, dated the day of it, is history. Returns
    the figures of the marks the session-start injection shows, of a second start on the same
    state (it should read no file and run no git but the status the baseline reads), and of
    `install.py --check` (missing-path)."""
    rng = random.Random("stale-%d" % seed)
    project = os.path.join(scratch, "stale-%d" % seed)
    sources = ["%s/%s_%d.py" % (rng.choice(SOURCE_FOLDERS), rng.choice(WORDS), n) for n in range(40)]
    for path in sources:
        write_file(project, path, "def %s():\n    return %d\n" % (path.split("/")[-1][:-3], seed))
    cites = {}
    for number in range(44):
        name = ("%s.md" % NEW_TOPICS[number] if number < 4 else
                "%s/%s-%d.md" % (rng.choice(("decisions", "gotchas", "testing")), rng.choice(WORDS), number))
        cites[name] = rng.sample(sources, rng.choice((1, 1, 2, 3)))
        lines = ["# %s" % title_of(name.split("/")[-1][:-3]), ""]
        for path in cites[name]:
            lines += [rng.choice(CITATION_FORMS) % {"date": day(0), "path": path, "line": 10,
                                                    "what": rng.choice(WORDS), "name": path.split("/")[-1]}, ""]
        if "/" not in name:  # a topic file, one folder up: its links lead one folder less far
            lines = [line.replace("](../../", "](../") for line in lines]
        write_file(project, "memory/" + name, "\n".join(lines))
    gone = rng.sample(sorted(set(p for paths in cites.values() for p in paths)), 12)
    write_file(project, "memory/MEMORY.md", "# Project Memory Index\n\n" + "".join(
        "- [%s](%s) — what is known\n" % (title_of(name[:-3]), name) for name in cites if "/" not in name))
    write_file(project, ".gitattributes", union_attributes())
    git.run(project, "init", "-q", "-b", "main")
    git.run(project, "add", "-A")
    git.run(project, "commit", "-q", "-m", "start")
    moved = move_cited_files(git, project, rng, gone, sources)
    history = "- %s: `%s` was removed in favour of the %s.\n" % (
        git.out(project, "log", "-1", "--format=%cs").strip(), gone[0], WORDS[0])
    write_file(project, "memory/decisions/history-note.md", "# History\n\n" + history)
    git.run(project, "add", "-A")
    git.run(project, "commit", "-q", "-m", "memory: the removal recorded")
    stale = set("memory/" + name for name, paths in cites.items() if set(paths) & set(gone))
    fresh = set("memory/" + name for name in cites) - stale | {"memory/decisions/history-note.md"}
    return judge_stale(project, judge, health, stale, fresh, moved)


def move_cited_files(git, project, rng, gone, sources):
    """Delete the first 6 of `gone`, rename the other 6 (every second one into another folder),
    and change 6 files that stay, one commit each. Returns {old path: new path} of the renames."""
    moved = {}
    for path in gone[:6]:
        git.run(project, "rm", "-q", "--", path)
        git.run(project, "commit", "-q", "-m", "remove " + path)
    for number, path in enumerate(gone[6:]):
        folder = path.rsplit("/", 1)[0] if number % 2 else "src/moved"
        new = "%s/renamed_%s" % (folder, path.rsplit("/", 1)[1])
        os.makedirs(os.path.join(project, folder), exist_ok=True)
        git.run(project, "mv", path, new)
        git.run(project, "commit", "-q", "-m", "rename " + path)
        moved[path] = new
    for path in rng.sample([p for p in sources if p not in gone], 6):
        with open(os.path.join(project, path), "a", encoding="utf-8") as stream:
            stream.write("# changed\n")
        git.run(project, "commit", "-q", "-am", "change " + path)
    return moved


def judge_stale(project, judge, health, stale, fresh, moved):
    marks = [(name, text) for name, _, text in injected_marks(judge.injection(project))
             if text.startswith("cites `")]
    reads, calls = second_start(judge, project)
    asked = {"MCP_HEALTH_CHECKS": "missing-path"}  # a check that runs when asked
    named = set(f["file"] for f in health.memory_health(project, asked, preview=False)["findings"]
                if f["check"] == "missing-path")
    marked = set("memory/" + name for name, _ in marks)
    renames = [re.search(r"cites `([^`]+)`, renamed to `([^`]+)`", text) for _, text in marks]
    return {"files": len(stale | fresh), "stale": len(stale), "marked": len(marked & stale),
            "marked_fresh": len(marked & fresh),
            "new_path_wrong": sum(1 for found in renames if found and
                                  found.group(2) != moved.get(found.group(1))),
            "named": len(named & stale), "named_fresh": len(named & fresh),
            "reads_again": reads, "git_again": calls}


def second_start(judge, project):
    """(memory files read, git commands run beyond the status the baseline reads) by the marks
    of a second session start on the same state, the first one's marks kept in a cache of the
    bench's own: the hooks of the bench's scratch folder, loaded as session start loads them."""
    from importlib.machinery import SourceFileLoader
    modules = []
    for name in ("context-budget.py", "prune-worktrees.py"):
        module = type(sys)("bench_" + name[:-3].replace("-", "_"))
        module.__file__ = os.path.join(judge.hooks, name)
        SourceFileLoader(module.__name__, module.__file__).exec_module(module)
        modules.append(module)
    shared, home = modules
    home.uses(shared)
    kept = {}
    shared.uses_cache(lambda name, value=None: kept.get(name) if value is None
                      else kept.__setitem__(name, value))
    counted = {"reads": 0, "calls": 0}
    read, run = shared.read_project_text, home.Git.run

    def reading(*args):
        counted["reads"] += 1
        return read(*args)

    def running(git, commands, deadline=None):
        counted["calls"] += len(commands)
        return run(git, commands, deadline)
    for number in range(2):
        if number:
            counted.update(reads=0, calls=0)
            shared.read_project_text, home.Git.run = reading, running
        guard = home.Guard(project, __import__("time").monotonic())
        home.memory_marks(guard, guard.start_reads())
    return counted["reads"], counted["calls"]


# --- a memory of many notes -------------------------------------------------------------------

MANY_COLUMNS = ("notes", "folders", "reachable", "injection_bytes", "cut", "start_ms_10",
                "start_ms_many", "ratio", "floor_ms_10", "floor_ms_many", "floor_ratio")
LINKED_FOLDER = re.compile(r"\[([^\]]+)/\]\(<?([^)>]+)/>?\)")


def many_notes(git, scratch, judge, notes=5000, folders=100, runs=9):
    """A memory of `notes` notes in `folders` topic folders, as the team format writes them,
    judged as a session starting now is given it: a note is reachable in one step when the
    injection links its folder (`[folder/](folder/)`) or a cut notice names a command that
    lists every note, never when it sends the agent to a file that lacks the note. Also session
    start's time at this size against a memory of 10 notes: the hook run as the harness runs it,
    the two interleaved, `runs` times each after a warm-up, medians (a figure, not a verdict:
    the machine may be shared)."""
    small, large = (os.path.join(scratch, "many-%d" % count) for count in (10, notes))
    for project, count, spread in ((small, 10, 5), (large, notes, folders)):
        for number in range(count):
            write_file(project, "memory/topic-%03d/note-%05d-on-%s.md" % (
                number % spread, number, WORDS[number % len(WORDS)]),
                "# Note %d\n\n- %s: fact %d holds.\n" % (number, day(0), number))
        write_file(project, "memory/MEMORY.md", "# Project Memory Index\n")
        write_file(project, ".gitattributes", union_attributes())
        git.run(project, "init", "-q", "-b", "main")
        git.run(project, "add", "-A")
        git.run(project, "commit", "-q", "-m", "memory")
        settled_an_hour_ago(git, project)
    injected = judge.injection(large)
    linked = set(found[1] for found in LINKED_FOLDER.finditer(injected))
    commands = [line for line in injected.split("\n") if line.startswith("[cut here")
                and "lists every note" in line]
    names = Memory(os.path.join(large, "memory")).names()
    reachable = sum(1 for name in names if "/" in name and (name.split("/")[0] in linked
                                                            or commands))
    times = start_times(judge, small, large, runs)
    return {"notes": notes, "folders": folders, "reachable": reachable,
            "injection_bytes": len(injected.encode("utf-8")),
            "cut": sum(1 for line in injected.split("\n") if line.startswith("[cut here")),
            "start_ms_10": round(times[0], 1), "start_ms_many": round(times[1], 1),
            "ratio": round(times[1] / times[0], 2), "floor_ms_10": round(times[2], 1),
            "floor_ms_many": round(times[3], 1), "floor_ratio": round(times[3] / times[2], 2)}


def settled_an_hour_ago(git, project):
    """The memory's folders dated an hour back, as a memory that exists is, and git's index
    refreshed after a second, so no run pays for re-hashing files written in its own second."""
    import time
    past = time.time() - 3600
    for folder, _, _ in os.walk(os.path.join(project, "memory")):
        os.utime(folder, (past, past))
    time.sleep(1.1)
    git.run(project, "status", "--porcelain")


def start_times(judge, small, large, runs):
    """Median milliseconds of session-start.py on each project, as the harness runs it, then of
    the floor no session start goes below there: the interpreter started the same way, and the
    status read the baseline needs (`git status --porcelain=v2 --untracked-files=all`)."""
    import time
    taken = {small: [], large: [], (small,): [], (large,): []}
    for number in range(runs + 1):
        for project in (small, large):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-S", "-c", "pass"])
            subprocess.run(["git", "status", "--porcelain=v2", "--untracked-files=all"],
                           cwd=project, stdout=subprocess.DEVNULL)
            if number:
                taken[(project,)].append((time.perf_counter() - began) * 1000)
            payload = json.dumps({"session_id": "bench", "source": "startup", "cwd": project,
                                  "hook_event_name": "SessionStart"}).encode("utf-8")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "CLAUDE_"))}
            env["CLAUDE_PROJECT_DIR"] = project
            began = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-S", os.path.join(judge.hooks, "session-start.py")],
                           input=payload, stdout=subprocess.DEVNULL, env=env, cwd=project)
            if number:  # the first run of each warms the caches, as any earlier start did
                taken[project].append((time.perf_counter() - began) * 1000)
    return [sorted(taken[p])[len(taken[p]) // 2] for p in (small, large, (small,), (large,))]


def many_defects(many):
    """A note the agent cannot reach in one step from what session start gives it."""
    return many["notes"] - many["reachable"]


def write_file(project, path, text):
    target = os.path.join(project, *path.split("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8", newline="\n") as stream:
        stream.write(text)


def stale_defects(stale):
    """What session start's marks must never show on the moved files: a stale file left
    unmarked, a fresh one marked, a wrong new path, a file read again or git run again (beyond
    the look at HEAD) when nothing changed."""
    return (stale["stale"] - stale["marked"] + stale["marked_fresh"] + stale["new_path_wrong"]
            + stale["reads_again"] + stale["git_again"])


def table(results, columns=COLUMNS):
    head = ("format", "mode") + columns
    rows = [head]
    for name, modes in results.items():
        for mode, totals in modes.items():
            rows.append((name, mode) + tuple(str(totals[c]) for c in columns))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    out = []
    for number, row in enumerate(rows):
        out.append("| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) + " |")
        if number == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", "--developers", type=int, default=8)
    parser.add_argument("-m", "--saves", type=int, default=5, help="saves per developer")
    parser.add_argument("--orders", type=int, default=3, help="landing orders (the first is dev1, dev2, ...)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--seeds", type=int, default=1, help="seeds run, from --seed on")
    parser.add_argument("--formats", default=",".join(DEFAULT_FORMATS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--workdir", help="build the repositories here and keep them")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the team format shows any defect")
    parser.add_argument("--notes", type=int, default=5000,
                        help="notes of the many-notes memory (0: not run)")
    parser.add_argument("--folders", type=int, default=100, help="its topic folders")
    options = parser.parse_args(argv)
    formats = [f for f in options.formats.split(",") if f]
    modes = [m for m in options.modes.split(",") if m]
    for name in formats:
        if name not in FORMATS:
            parser.error("unknown format %r (known: %s)" % (name, ", ".join(FORMATS)))
    for mode in modes:
        if mode not in MODES:
            parser.error("unknown mode %r (known: %s)" % (mode, ", ".join(MODES)))
    if options.workdir:
        os.makedirs(options.workdir, exist_ok=True)
    results, orders, stale = run(formats, options.developers, options.saves, options.orders,
                          options.seed, modes, options.workdir, keep=bool(options.workdir),
                          seeds=options.seeds)
    print("%d developers x %d saves, %d landing order(s), seed %d%s; every figure is the total "
          "over the seeds and orders" % (options.developers, options.saves, len(orders),
                                         options.seed, " and the %d after it" % (options.seeds - 1)
                                         if options.seeds > 1 else ""))
    print(table(results))
    print("\nA memory whose cited files moved (6 deleted, 6 renamed, 6 changed per seed), judged "
          "by the marks session start shows and by --check:")
    print(table({"stale citations": {"": stale}}, STALE_COLUMNS))
    many = many_run(os.path.join(options.workdir, "many") if options.workdir else None,
                    options.notes, options.folders) if options.notes else None
    if many:
        print("\nA memory of %d notes in %d topic folders, as session start shows it (times are "
              "medians of this machine, not a verdict):" % (options.notes, options.folders))
        print(table({"many notes": {"": many}}, MANY_COLUMNS))
    if options.json:
        with open(options.json, "w", encoding="utf-8") as stream:
            json.dump({"developers": options.developers, "saves": options.saves,
                       "orders": orders, "seed": options.seed, "seeds": options.seeds,
                       "results": results, "stale_citations": stale, "many_notes": many},
                      stream, indent=1)
    found = sum(defects(totals, mode) for mode, totals in results.get("team", {}).items())
    found += stale_defects(stale) + (many_defects(many) if many else 0)
    return 1 if options.strict and found else 0


def many_run(scratch, notes, folders):
    """The many-notes judgement in a scratch folder of its own."""
    owned = scratch is None
    scratch = scratch or tempfile.mkdtemp(prefix="mcp-team-many-")
    try:
        return many_notes(Git(scratch), scratch, Judge(scratch), notes, folders)
    finally:
        if owned:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
