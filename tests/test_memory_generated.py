"""Memory health on memories generated at random: the rules hold whatever the memory is made of.

Each seed builds a memory from the primitives real memories combine (fenced code, HTML comments,
headings, frontmatter, entries dated on their own line, paths named to be rejected, placeholder
lines, links, several languages) in one repository whose history holds a deleted file, and
checks the promises that follow from the rules, not from the implementation:

- nothing inside a fenced code block is ever a finding, however it is fenced;
- a file whose entries each carry their own date line is never taken for a record;
- a path named only to be rejected is never `missing-path`, while the same path cited as a
  claim is (the check is seen to fire on every seed that cites it);
- a file that holds no fact (headings, placeholders, a form's empty fields) is neither undated
  nor an orphan;
- every finding names a line of its file.

Bounded seeds in the suite; MCP_GENERATED_SEEDS=N runs N of them.
"""
import os
import random
import shutil

import pytest

from conftest import make_repo
from test_memory_citations import delete
from test_memory_health import commit, health, with_advice, write

SEEDS = int(os.environ.get("MCP_GENERATED_SEEDS", "12"))
GONE = "old/gone.py"  # held by history, deleted
KEPT = "src/kept/app.py"

WORDS = {
    "en": ["the worker retries three times", "deploys go through the canary", "the cache is warm"],
    "zh": ["重试三次", "部署先走灰度", "缓存已预热"],
    "de": ["der Worker versucht es dreimal", "Deploys laufen über den Canary"],
    "pt": ["o worker tenta três vezes", "o deploy passa pelo canary"],
    "ja": ["ワーカーは三回再試行する", "デプロイはカナリア経由"],
}
REJECTIONS = [
    "- 2026-10-01: notes go under `{kept}`, not `{gone}`.",
    "- 2026-10-01: 代码放在 `{kept}`，而不是 `{gone}`。",
    "- 2026-10-01: use `{kept}` rather than `{gone}`.",
    "- 2026-10-01: der Code liegt in `{kept}`, nicht in `{gone}`.",
]
PLACEHOLDERS = ["_(none yet)_", "- TBD", "[To be filled from lessons learned]",
                "(empty — will be populated after the first session)", "- 日期：", "- Symptom:"]
# What a fence must hide: each would be a finding outside one.
HAZARDS = ["- [gone](nowhere.md) — a pointer to nothing", "see `{gone}` for the loop",
           "- /Users/alice/project/secret.txt", "- the same five words repeated here",
           "- the same five words repeated here", "<!-- never closed", "<<<<<<< HEAD",
           "# A second title", "- 2026-10-01: `{gone}` retries."]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = make_repo(tmp_path_factory.mktemp("generated") / "project")
    write(root / GONE, "LOOP = 1\n")
    write(root / KEPT, "RETRIES = 3\n")
    commit(root, "the code")
    delete(root, GONE)
    return root


class Memory(object):
    """The files of one generated memory and what the generator knows of each line."""

    def __init__(self):
        self.files = {}  # shown path -> lines
        self.fenced = {}  # shown path -> set of fenced line numbers (fences included)
        self.rejecting = {}  # shown path -> lines naming GONE only to reject it
        self.claiming = {}  # shown path -> lines citing GONE as a claim
        self.entry_dated = set()  # files whose entries each carry a date line
        self.shells = set()  # files that hold no fact

    def add(self, shown, lines, fenced=(), rejecting=(), claiming=()):
        self.files[shown] = lines
        self.fenced[shown] = set(fenced)
        self.rejecting[shown] = set(rejecting)
        self.claiming[shown] = set(claiming)


def sentence(rng):
    return rng.choice(WORDS[rng.choice(sorted(WORDS))])


def fence(rng):
    """A fenced block of hazards, fenced with backticks or tildes, three or more."""
    mark = rng.choice(["```", "~~~", "````"])
    body = [hazard.format(gone=GONE) for hazard in rng.sample(HAZARDS, rng.randint(1, 4))]
    return [mark + rng.choice(["", "bash", "markdown", "text"])] + body + [mark]


def topic_file(rng, memory, shown, dated_entries):
    """A topic file or a note from random primitives; returns its lines into `memory`."""
    lines, fenced, rejecting, claiming = [], [], [], []
    if rng.random() < 0.3:
        lines += ["---", "name: %s" % sentence(rng), "description: %s" % sentence(rng),
                  "type: project", "---"]
    lines.append("# %s" % sentence(rng).capitalize())
    lines.append("")
    entries = rng.randint(2, 4) if dated_entries else 0
    for n in range(entries):
        lines += ["## %s %d" % (rng.choice(["Entry", "决定", "Eintrag"]), n + 1),
                  "date: 2026-0%d-1%d" % (rng.randint(1, 9), rng.randint(0, 9)),
                  "- `%s` %s." % (KEPT, sentence(rng)), ""]
    for _ in range(rng.randint(2, 7)):
        kind = rng.choice(["fact", "fence", "comment", "heading", "reject", "claim",
                           "placeholder", "link", "blank"])
        if kind == "fence":
            start = len(lines) + 1
            block = fence(rng)
            lines += block
            fenced += range(start, start + len(block))
            lines.append("")
        elif kind == "reject":
            lines.append(rng.choice(REJECTIONS).format(kept=KEPT, gone=GONE))
            rejecting.append(len(lines))
        elif kind == "claim":
            lines.append("- 2026-10-01: the loop is in `%s`." % GONE)
            claiming.append(len(lines))
        elif kind == "fact":
            lines.append("- 2026-10-01: %s." % sentence(rng))
        elif kind == "comment":
            lines.append("<!-- %s -->" % sentence(rng))
        elif kind == "heading":
            lines.append("## %s" % sentence(rng))
        elif kind == "placeholder":
            lines.append(rng.choice(PLACEHOLDERS))
        elif kind == "link":
            depth = "../" * (shown.count("/"))
            lines.append("- 2026-10-01: see [the app](%s%s)." % (depth, KEPT))
        else:
            lines.append("")
    memory.add(shown, lines, fenced, rejecting, claiming)
    if dated_entries:
        memory.entry_dated.add(shown)


def shell_file(rng, memory, shown):
    """A file that holds no fact: a title, headings, placeholders, a table with no entries."""
    lines = ["# %s" % rng.choice(["Bug template", "变更记录模板", "Journal", "Replay queue"]), ""]
    for _ in range(rng.randint(1, 4)):
        lines += rng.choice([["## %s" % rng.choice(["Entries", "条目", "Open"])],
                             [rng.choice(PLACEHOLDERS)],
                             ["| Date | Need |", "|------|------|", "| — | — |"],
                             ["- ID:", "- Cause:"]]) + [""]
    memory.add(shown, lines)
    memory.shells.add(shown)


def generate(seed):
    rng = random.Random(2026 * 1000 + seed)
    memory = Memory()
    names = ["alpha", "beta", "gamma", "delta"]
    pointed = []
    for n, name in enumerate(rng.sample(names, rng.randint(1, 4))):
        shown = "memory/%s-notes.md" % name
        topic_file(rng, memory, shown, dated_entries=rng.random() < 0.5)
        if rng.random() < 0.6:
            pointed.append(name)
    for name in rng.sample(["deploy", "queue"], rng.randint(0, 2)):
        topic_file(rng, memory, "memory/%s/%s-facts.md" % (name, rng.choice(names)),
                   dated_entries=rng.random() < 0.5)
    for n in range(rng.randint(0, 2)):
        shell_file(rng, memory, "memory/shell-%d.md" % n)
    index = ["# Memory", "", "## Topics"] + [
        "- [%s](%s-notes.md) — %s" % (name, name, sentence(rng)) for name in pointed]
    if rng.random() < 0.5:
        start = len(index) + 1
        block = fence(rng)
        index += [""] + block
        memory.add("memory/MEMORY.md", index, range(start + 1, start + 1 + len(block)))
    else:
        memory.add("memory/MEMORY.md", index)
    return memory


def write_memory(project, memory):
    shutil.rmtree(str(project / "memory"), ignore_errors=True)
    for shown, lines in memory.files.items():
        write(project / shown, "\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_generated_memories_keep_the_rules(project, seed, tmp_path):
    memory = generate(seed)
    write_memory(project, memory)
    env = with_advice({"HOME": str(tmp_path), "MCP_PROJECTS_DIR": str(tmp_path / "projects")})
    report = health(project, env)
    logs = set(log["file"] for log in report["session_logs"])
    for finding in report["findings"]:
        shown = finding["file"]
        if shown not in memory.files:
            continue
        lines = memory.files[shown]
        for number in finding["lines"]:
            assert 1 <= number <= len(lines), finding
            assert number not in memory.fenced[shown], (seed, finding, lines[number - 1])
            if finding["check"] == "missing-path":
                assert number not in memory.rejecting[shown], (seed, finding, lines[number - 1])
        if shown in memory.shells:
            assert finding["check"] not in ("missing-date", "orphan"), (seed, finding)
    assert not logs & memory.entry_dated, (seed, logs & memory.entry_dated)
    missing = set((f["file"], n) for f in report["findings"] if f["check"] == "missing-path"
                  for n in f["lines"])
    for shown, claiming in memory.claiming.items():
        for number in claiming:  # the same path, claimed: the check is seen to fire
            assert (shown, number) in missing, (seed, shown, number, report["findings"])
