#!/usr/bin/env python3
"""Benchmark of team use: does the shared memory merge like code?

K developers start from one commit, each on a branch of their own, and each saves M times the way
/dream tells the agent to: facts learned, a topic created where none fits, a wrong fact corrected,
a correction from the owner in its own file, and whatever the format stamps on every save. The
model's edits are simulated, deterministically from a seed, so a run can be repeated exactly.
Then the branches land on `main` one after another, in several orders and in four ways:

  merge    `git merge` in a clone: the committed .gitattributes is honoured
  rebase   `git pull --rebase` style: the branch replayed onto main commit by commit, then
           fast-forwarded; .gitattributes honoured
  squash   `git merge --squash` in a clone, as a squash merge does it locally
  forge    a squash merge as a forge runs it: no merge driver and no .gitattributes merge
           attribute (GitHub ignores both; a bare `git merge-tree` ignores the tree's
           attributes too), simulated by `* merge=text` in .git/info/attributes

Every conflict is counted, then resolved the mechanical way a person or an agent would: both
sides' lines kept (what `git merge-file --union` does), since that loses nothing; what keeping
main's copy whole would have dropped is counted as well ("at stake"). The end state of `main`
is then judged as the next session sees it:

  lost       facts some save wrote that appear nowhere in memory/
  doubled    facts that appear twice
  stale      facts a save corrected that are back to a version no correction wrote
  unreached  memory files no pointer in the session-start injection leads to
  twice      memory files two pointers lead to
  dead       pointers to files that do not exist
  stamps     files holding two stamps where one belongs (`Last updated`, `Last dream`), and
             indexes whose Active Context grew past its two lines
  titles     files with two `# ` titles (two branches created the same file)
  markers    conflict markers left in memory/

The pointers are read from the real session-start hook's injection (hooks/ of this checkout,
copied to the scratch folder and run through its preview), so they are what an agent is given.

Formats (--formats; the first two are the protocol's previous and current formats):

  stamped    the format up to 0.x: `Last dream` and Active Context rewritten in the index at every
             save, a `Last updated` line in every topic file, facts appended to the file of
             their topic, a new topic's pointer appended to its section
  team       the team format: nothing a save stamps, every fact written once in a file of its
             own, no index edit (the session-start hook lists every memory file the index does
             not link), a committed `.gitattributes` giving memory/ git's built-in union merge
  stamped+union, unstamped+union, sorted+union, team-no-union: the levers one at a time
             (see bench/README.md)

Standard library and git only; Python 3.8 or newer. Usage:
  python3 bench/team.py                      8 developers x 5 saves, 3 orders, every mode
  python3 bench/team.py -k 4 -m 3 --orders 1
  python3 bench/team.py --json out.json      also write every figure as JSON
Exit status 0; 1 with --strict when the team format shows a defect in any mode (a conflict other
than a real disagreement on the forge, a doubled fact --check does not name, a lost fact, a file
reached by no pointer or by two, a doubled stamp or title, a conflict marker).
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
    """

    def __init__(self, name, stamps, context, facts, pointers, union):
        self.name = name
        self.stamps = stamps
        self.context = context
        self.facts = facts
        self.pointers = pointers
        self.union = union


FORMATS = dict((f.name, f) for f in (
    Format("stamped", True, True, "append", "append", False),
    Format("stamped+union", True, True, "append", "append", True),
    Format("unstamped+union", False, False, "append", "append", True),
    Format("sorted+union", False, False, "sorted", "sorted", True),
    Format("team-no-union", False, False, "notes", "listing", False),
    Format("team", False, False, "notes", "listing", True),
))
DEFAULT_FORMATS = ("stamped", "stamped+union", "unstamped+union", "sorted+union", "team-no-union",
                   "team")

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
    wrote = {"facts": [], "corrected": []}
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
            changed.add(corrected[1])
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


def correct_a_fact(fmt, memory, rng, dev, number, date):
    """Replace one dated fact in place, as the rules say: the stale version goes, the date of
    the change is noted. Returns (token, file) or None when there is nothing to correct."""
    candidates = []
    for name in memory.names():
        if name == "MEMORY.md":
            continue
        for line_number, line in enumerate(memory.read(name).split("\n")):
            found = TOKEN.search(line)
            if line.startswith("- ") and found:
                candidates.append((name, line_number, found.group(0), line))
    if not candidates:
        return None
    # The fact to correct is chosen by its token, so every format corrects the same facts.
    candidates.sort(key=lambda candidate: candidate[2])
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
    return token, name


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
               "corrected": {}, "corrected_by": {}}
    for dev in range(1, developers + 1):
        rng = random.Random("%d-%d" % (seed, dev))
        git.run(folder, "checkout", "-q", "-b", "dev%d" % dev, "main")
        for number in range(1, saves + 1):
            did = save(fmt, memory, rng, dev, number, day(number))
            written["facts"].update(did["facts"])
            for token in did["corrected"]:
                written["corrected"].setdefault(token, set()).add("c%dx%d" % (dev, number))
                written["corrected_by"].setdefault("dev%d" % dev, set()).add(token)
            git.run(folder, "add", "-A", "memory")
            git.run(folder, "commit", "-q", "-m", "memory: save %d of developer %d" % (number, dev))
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


def land(git, origin, folder, mode, order, corrected_by):
    git.run(os.path.dirname(folder), "clone", "-q", origin, folder)
    for branch in order:
        git.run(folder, "branch", "-q", branch, "origin/" + branch)
    if mode == "forge":
        with open(os.path.join(folder, ".git", "info", "attributes"), "w") as stream:
            stream.write("* merge=text\n")
    landing = Landing()
    corrected_on_main = set()
    for branch in order:
        landing.merges += 1
        if corrected_by.get(branch, set()) & corrected_on_main:
            landing.same_fact += 1
        corrected_on_main |= corrected_by.get(branch, set())
        conflicted = 0
        if mode == "merge":
            done = git.run(folder, "merge", "-q", "--no-ff", "--no-edit", branch, check=False)
            if done.returncode != 0:
                conflicted += resolve(git, folder, landing)
                git.run(folder, "commit", "-q", "--no-edit")
        elif mode in ("squash", "forge"):
            done = git.run(folder, "merge", "-q", "--squash", branch, check=False)
            if done.returncode != 0:
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
        if self.session_start is None:
            from importlib.machinery import SourceFileLoader
            module = type(sys)("bench_session_start")
            module.__file__ = os.path.join(self.hooks, "session-start.py")
            SourceFileLoader(module.__name__, module.__file__).exec_module(module)
            self.session_start = module
        saved = os.environ.get("CLAUDE_PROJECT_DIR")
        os.environ["CLAUDE_PROJECT_DIR"] = project
        try:
            return self.session_start.preview_injection(project)
        finally:
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
            "lost": sum(1 for t in written["facts"] if t not in found),
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
            "found": self.leftovers_found(project),
        })
        return result

    def leftovers_found(self, project):
        """Lines install.py --check names as a merge's leftovers: its own group of checks."""
        if self.health is None:
            import memory_health
            self.health = memory_health
        found = self.health.merge_leftover_findings(project, {})  # the default memory/MEMORY.md
        return sum(len(finding["lines"]) for finding in found)


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

COLUMNS = ("merges", "same_fact", "conflicted", "files", "at_stake", "index_lines", "facts",
           "lost", "doubled", "stale", "unreached", "twice", "dead", "stamps", "titles", "markers",
           "found")
END_STATE_DEFECTS = ("lost", "stale", "unreached", "twice", "dead", "stamps", "titles", "markers")


def defects(totals, mode):
    """What the team format must never show: a conflict that is not a real disagreement (on the
    forge, which ignores the union rule, the merges where two branches changed one fact; nowhere
    else), a doubled fact --check does not name, or any defect of the end state."""
    allowed = totals["same_fact"] if mode == "forge" else 0
    return (max(0, totals["conflicted"] - allowed) + max(0, totals["doubled"] - totals["found"])
            + sum(totals[column] for column in END_STATE_DEFECTS))


def run(formats, developers, saves, orders, seed, modes=MODES, scratch=None, keep=False):
    """{format: {mode: totals over the orders}} and the orders used."""
    sys.path.insert(0, ROOT)
    owned = scratch is None
    scratch = scratch or tempfile.mkdtemp(prefix="mcp-team-bench-")
    git = Git(scratch)
    judge = Judge(scratch)
    branches = ["dev%d" % dev for dev in range(1, developers + 1)]
    shuffler = random.Random(seed)
    order_list = [list(branches)]
    while len(order_list) < orders:
        order = list(branches)
        shuffler.shuffle(order)
        order_list.append(order)
    results = {}
    try:
        for name in formats:
            fmt = FORMATS[name]
            origin = os.path.join(scratch, name, "origin")
            written = build_origin(git, origin, fmt, developers, saves, seed)
            results[name] = {}
            for mode in modes:
                totals = dict((column, 0) for column in COLUMNS)
                for number, order in enumerate(order_list):
                    folder = os.path.join(scratch, name, "%s-%d" % (mode, number))
                    landing = land(git, origin, folder, mode, order, written["corrected_by"])
                    judged = judge.judge(folder, written)
                    totals["merges"] += landing.merges
                    totals["conflicted"] += landing.conflicted_merges
                    totals["files"] += landing.conflicted_files
                    totals["at_stake"] += landing.at_stake
                    totals["same_fact"] += landing.same_fact
                    for column in COLUMNS[5:]:  # index_lines and after: the end state
                        totals[column] += judged[column]
                    if not keep:
                        shutil.rmtree(folder, ignore_errors=True)
                results[name][mode] = totals
    finally:
        if owned and not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return results, order_list


def table(results):
    head = ("format", "mode") + COLUMNS
    rows = [head]
    for name, modes in results.items():
        for mode, totals in modes.items():
            rows.append((name, mode) + tuple(str(totals[c]) for c in COLUMNS))
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
    parser.add_argument("--formats", default=",".join(DEFAULT_FORMATS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--workdir", help="build the repositories here and keep them")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the team format shows any defect")
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
    results, orders = run(formats, options.developers, options.saves, options.orders,
                          options.seed, modes, options.workdir, keep=bool(options.workdir))
    print("%d developers x %d saves, %d landing order(s), seed %d; every figure is the total "
          "over the orders" % (options.developers, options.saves, len(orders), options.seed))
    print(table(results))
    if options.json:
        with open(options.json, "w", encoding="utf-8") as stream:
            json.dump({"developers": options.developers, "saves": options.saves,
                       "orders": orders, "seed": options.seed, "results": results}, stream, indent=1)
    found = sum(defects(totals, mode) for mode, totals in results.get("team", {}).items())
    return 1 if options.strict and found else 0


if __name__ == "__main__":
    sys.exit(main())
