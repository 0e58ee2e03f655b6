#!/usr/bin/env python3
"""memory_health: the full health report of a project's memory, for `install.py --check`.

Why it exists: the budgets weigh the memory; this report reads it. It checks the paths a memory
cites against the branch's git history (one pass), lints the index, the topic files and the
notes of the topic folders, and lays out everything that loads before the first turn. It is judged on memories people really keep:
a finding a reasonable owner would dismiss is a bug, so a path is missing only when git knew it,
a memory in a tool's own format is valid, a session log or a line that records a change is
history rather than a claim, a line is read as a sentence (whole words, in its clause), and the
protocol's stricter conventions are advice. That costs a walk through every memory file and a
git log, so it never runs at session start, and it is never copied into a project: it lives
beside install.py, which loads it by path.

What it promises:
- `memory_health(project, env)` returns the report as a JSON-able dict, `format_health(report)`
  the text for a person. Neither writes anything; git runs read-only, with a time limit.
- One reading of Markdown for the whole protocol: the scanner of comments, code spans and links
  is the session-start hook's (hooks/context-budget.py), loaded by its path, so a memory is never
  read one way at session start and another way here.
- It reads the memory as the hooks read what they show the agent (context-budget.py's
  read_project_text): a file outside the project, not a regular file, or under a `Read(...)`
  deny rule is named as not read, and nothing of it reaches the report.
- Standard library only; Python 3.8 or newer.
"""
import os
import sys

ROOT = os.path.dirname(os.path.realpath(os.path.abspath(__file__)))
HOOKS = os.path.join(ROOT, "hooks")


def load_hook(file_name, module_name):
    """A hook file beside this one (hooks/<file_name>), imported by its path, writing no
    bytecode beside the hooks, which are the project's files once installed."""
    return load_by_path(os.path.join(HOOKS, file_name), module_name)


def load_by_path(path, module_name):
    """The Python file at path, imported as a module of that name, writing no bytecode."""
    from importlib.machinery import SourceFileLoader
    module = type(sys)(module_name)
    module.__file__ = path
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        SourceFileLoader(module.__name__, path).exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


BUDGET = load_hook("context-budget.py", "mcp_context_budget_for_health")
# The installer's one way to run git, hardened against what a repository's configuration could
# make it start (its fsmonitor, hooks, pager, diff programs): the memory is checked in
# repositories nobody has trusted yet.
GIT = load_by_path(os.path.join(ROOT, "installer", "git.py"), "mcp_git_for_health")
# The team format's move (install.py --update), for its one reading of a stamp.
FORMAT = load_by_path(os.path.join(ROOT, "memory_format.py"), "mcp_memory_format_for_health")

# Every finding names a file and a line; a finding about a whole file names its line 1. A line
# that carries the hook's ignore marker silences every finding at that line; a file that carries
# FILE_IGNORE_MARKER anywhere is silenced whole.

SEVERITY = {
    "dead-pointer": "broken",          # the agent is sent to a memory that is not there
    "unclosed-comment": "broken",      # the rest of the index is hidden from readers
    "auto-memory-overflow": "broken",  # part of the harness's memory never loads
    "missing-path": "warning",         # a path git knew is gone, and the memory still cites it
    "injection-cut": "over",           # the session-start injection hit the hook limit
    "oversized-topic": "warning",      # a topic file too long to open whole without cost
    "possibly-stale": "warning",       # the cited file changed after the fact was dated
    "hidden-history": "warning",       # history filed as comments: paid for, never seen
    "not-a-pointer": "warning",        # content in the index that belongs in a topic file
    "duplicate-pointer": "warning",
    "orphan": "warning",               # a topic file nothing in the memory leads to
    "machine-local-path": "warning",   # a path on one person's machine, in shared memory
    "missing-date": "advice",          # the protocol's conventions: advice, never an error
    "feedback-parts": "advice",
    "session-log": "advice",           # history kept among the topic files
    "not-read": "warning",             # a memory file the hooks would not show: not checked
}
SEVERITIES = ("broken", "over", "warning", "advice")
# Checks that run only when MCP_HEALTH_CHECKS names them. Judged finding by finding on memories
# nobody had tuned the checks on, a file without a date was most often a runbook, a spec, a
# template or a generated table, which a reasonable owner leaves undated; and a record among the
# topic files was most often a decisions log kept there on purpose. The protocol's conventions
# (date each fact, keep logs in a folder of their own) are a choice a team makes, not a defect
# it has. A record's paths are history either way: that reading does not depend on the advice.
# The same measure on four samples of public memories put four more checks below what their
# level must reach (a warning right 95% of the time): a fact whose cited file changed since
# its date (most commits to a file leave most facts about it true), a path gone from a line
# that may be history (a decision's record, an incident, a plan), content in the index (a
# memory tool's own index keeps its context there), a topic file no link reaches (a tool's
# file, a briefing kept apart) and a home path (a server's, a plan the harness keeps in its own
# folder). They read what the memory says, not only its shape: the owner asks for them
# (`MCP_HEALTH_CHECKS=all`), and reads each finding knowing it may be history or a choice.
OPT_IN = frozenset(("missing-date", "session-log", "possibly-stale", "missing-path",
                    "not-a-pointer", "orphan", "machine-local-path"))
FILE_IGNORE_MARKER = "mcp-health: ignore-file"
# A topic file is read whole when a task calls for it. Past this estimate each opening costs
# 5% of a 200,000-token context window (and past 25,000 the harness's Read tool refuses to
# open it whole at all). Fires at TOPIC_TOKENS * 4 + 1 characters: 40,001 by default.
TOPIC_TOKENS = 10000
# A cited path that at least this share of the branch's commits changed tells nothing by
# changing again (a version manifest, a folder everything lives in); only for histories of
# at least CHURN_MIN_COMMITS commits.
CHURN_SHARE = 0.5
CHURN_MIN_COMMITS = 10
MAX_IMPORT_HOPS = 4
CHARACTERS_PER_TOKEN = 4
INJECTION_LIMIT = 10000
GIT_SECONDS = 60
# How a line says that the path it cites changed, or will (records_change), in the languages
# memories are kept in: words that say it happened...
CHANGED_WORDS = frozenset("""
removed deleted dropped renamed moved replaced gone retired deprecated obsolete superseded
migrated ported converted merged switched archived relocated extracted consolidated inlined
folded absorbed rewritten rewrote purged eliminated discontinued formerly former
removing deleting dropping renaming moving replacing migrating merging retiring deprecating
removal deletion deprecation
eliminado eliminada borrado borrada renombrado renombrada movido movida reemplazado
reemplazada migrado obsoleto removido removida excluído excluido renomeado renomeada
substituído substituido supprimé supprimée supprimés renommé renommée déplacé déplacée
remplacé remplacée migré obsolète gelöscht entfernt umbenannt verschoben ersetzt migriert
veraltet rimosso rimossa eliminato rinominato spostato sostituito
удалён удален удалена удалено удалены переименован переименована перемещён перемещен заменён
заменен
""".split())
CHANGED_PHRASES = ("no longer", "not anymore", "got rid of", "get rid of", "in favour of",
                   "in favor of")
# ...and words that plan it (`Delete `x/``, `TODO: remove `y``). Session start weighs none of
# them: its marks are facts git shows, and a line that says its path changed is dated after the
# change (§4.5.7).
PLANNED_WORDS = frozenset("""
delete remove drop rename move replace retire deprecate migrate purge merge consolidate
relocate eliminate
eliminar borrar renombrar mover reemplazar remover excluir renomear substituir supprimer
renommer déplacer remplacer löschen entfernen umbenennen verschieben ersetzen rimuovere
eliminare rinominare spostare удалить переименовать
""".split())
# ...words of succession with another cited path that exists (`now`, `->`) count too.
SUCCESSION_WORDS = frozenset("now became becomes old new legacy previous previously was were "
                             "instead".split())
ARROWS = ("→", "->", "=>", "⇒", "⟶", "➜", "➡")
# The word just before a path that a change leads to: that path is what the line says exists.
DESTINATION_WORDS = frozenset("to into onto as by with now toward towards vers nach zu "
                              "hacia para".split())
BE_WORDS = frozenset("is are was were be been being am get gets got it's that's".split())
# Scripts written without spaces between words: their words of change are matched as text.
CHANGE_MARKS_WITHOUT_SPACES = (
    "删除", "删掉", "移除", "重命名", "改名", "迁移", "移到", "移至", "合并到", "合并至",
    "废弃", "弃用", "替换为", "替换成", "已删", "去掉", "下线", "清理", "削除", "廃止", "移動", "移行",
    "名前変更", "置き換", "삭제", "제거", "이동", "이름 변경", "폐기", "대체", "통합", "폐지")
# A path named only to be turned down (rejects): the word just before it, past a preposition.
REFUSAL_WORDS = frozenset("not never nor instead nicht nie statt anstatt pas jamais plutôt não "
                          "nunca no non mai не".split())
REFUSAL_PHRASES = frozenset((("rather", "than"), ("instead", "of"), ("in", "place"),
                             ("en", "lugar"), ("em", "vez"), ("au", "lieu")))
PREPOSITIONS = frozenset("in under into to from at of inside within on unter nach aus en dans "
                         "sous em de а в во из на под".split())
REFUSAL_MARKS_WITHOUT_SPACES = ("不是", "而非", "并非", "並非", "非", "不在", "不要", "不用", "而不是",
                                "ではなく", "じゃなく", "아니라", "아닌")
# Home paths that are not one machine's (is_placeholder_home, on_a_server).
PLACEHOLDER_MARKS = ("path/to", "...", "\u2026", "your", "<", "$")
# The accounts a container image or a CI runner comes with: their homes are the image's, the
# same on every machine that runs it (`/home/node/.bashrc` in a devcontainer).
IMAGE_ACCOUNTS = ("node", "vscode", "codespace", "runner", "ubuntu", "ec2-user", "debian",
                  "jovyan", "gitpod")
STANDARD_HOME_FOLDERS = ("desktop", "documents", "downloads", "pictures", "music", "videos",
                         "movies", "applications", "projects", "src", "code", "repos")
SERVER_WORDS = frozenset("server servers vm vms vps host hosts hypervisor droplet container "
                         "containers docker remote".split())
LOCAL_WORDS = frozenset("local laptop desktop".split())
# Narration of work done (narrates_work): true of its day, never stale. Past tenses of work.
NARRATION_WORDS = frozenset("""
added fixed updated changed modified created introduced implemented refactored synced wired
bumped raised lowered reverted rewired recalibrated reworked tweaked patched corrected resolved
shipped landed was were had crashed broke built called got ran returned caused excluded failed
done completed finished
añadido agregado corregido implementado creado actualizado modificado completado terminado
adicionado corrigido implementada criado atualizado modificado concluído feito
ajouté corrigé implémenté créé modifié terminé
hinzugefügt behoben implementiert erstellt aktualisiert geändert erledigt
aggiunto aggiunta corretto implementato implementata creato creata aggiornato modificato
completato fatto
""".split())
NARRATION_MARKS_WITHOUT_SPACES = ("已执行", "已完成", "已收官", "修复", "已修", "新增", "已更新",
                                  "修正", "完了", "修正済", "추가", "수정")
# A line that only points to a document (points_to_a_document): where to read, not what it says.
DOCUMENT_EXTENSIONS = (".md", ".markdown", ".rst", ".txt", ".adoc", ".pdf", ".html")
POINTER_WORDS = frozenset("see spec design details documented documentation docs refer reference "
                          "recorded tracked listed noted siehe voir ver veja".split())
POINTER_MARKS_WITHOUT_SPACES = ("见", "参见", "详见", "参考", "参照", "记在", "记录在", "참고", "참조")
# Headings of sections that list where to read (`## References`, `### Internal Documentation`).
# Not `design` or `spec`: a section of that name states facts.
POINTER_HEADING_WORDS = frozenset("documentation docs references reference resources related links "
                                  "reading sources bibliography see".split())
# A command in a code span that moves or removes files records a change, not a claim.
COMMANDS_OF_CHANGE = BUDGET.COMMANDS_OF_CHANGE
# Words of a stamp's label (is_stamp): when the index was last kept, in the languages memories use.
STAMP_WORDS = ("updated", "update", "consolidated", "reviewed", "dream", "atualizad", "actualizad",
               "mis à jour", "aktualisiert", "aggiornat", "обновлен", "更新", "업데이트", "갱신")
# A line that holds no fact yet (is_placeholder): what a placeholder aside says, and the words
# that stand alone for nothing yet, in the languages memories are kept in.
PLACEHOLDER_PHRASES = ("none yet", "nothing yet", "empty", "to be filled", "to be added",
                       "to fill", "fill in", "filled in", "tbd", "todo", "placeholder",
                       "coming soon", "not yet", "no data", "no entries", "n/a", "populated",
                       "待补充", "待填", "待定", "暂无", "尚无", "未填", "待記入", "未記入", "なし", "없음",
                       "미정", "pendiente", "por definir", "a definir", "preencher", "à remplir",
                       "à définir", "ausstehend", "noch leer")
PLACEHOLDER_WORDS = frozenset(("tbd", "tba", "todo", "n/a", "na", "none", "none yet", "nothing yet",
                               "empty", "pending", "placeholder", "暂无", "无", "空", "待补充", "待定",
                               "なし", "未定", "없음", "미정", "ninguno", "nenhum", "aucun", "keine"))
# Headings of sections that talk about the index rather than hold memory.
GUIDANCE_HEADINGS = ("usage", "how to use", "how this works", "conventions", "rules", "format",
                     "about", "meta", "guidelines", "instructions", "legend", "maintenance",
                     # the same headings in the languages memories are kept in
                     "使用说明", "使用說明", "使用方法", "用法", "规则", "規則", "约定", "約定", "维护",
                     "維護", "使い方", "ルール", "規約", "사용법", "규칙", "관리 방법", "uso", "reglas",
                     "regras", "convenciones", "convenções", "instrucciones", "instruções",
                     "nutzung", "verwendung", "regeln", "konventionen", "utilisation", "règles",
                     "правила", "использование")
# A session log (session_log_reason) is history: its frontmatter type, or a word its name ends in.
LOG_TYPES = frozenset("log logs session sessions session-log session_log journal diary daily "
                      "daily-log worklog work-log devlog changelog history minutes meeting "
                      "meeting-notes transcript handoff handoffs adr decision-record".split())
LOG_NAMES = frozenset("log logs journal diary changelog history sessions devlog worklog "
                      "minutes handoff handoffs historico histórico historial historique "
                      "verlauf archive archives archived report reports bericht rapport "
                      "relatorio relatório informe".split())
# Any word of a file's name that makes it a record of its day, wherever it stands in the name
# (`post-mortem-v4-go-live.md`, `_PROPOSTA-protocolo-v2.md`): a post-mortem, a retrospective,
# and a proposal or a research note, whose statements of what might be done claim nothing of
# what is (`research-agent-patterns.md`).
RECORD_NAME_WORDS = frozenset("postmortem mortem retrospective retro proposal proposals proposta "
                              "propostas propuesta propuestas rfc rfcs research recherche "
                              "pesquisa investigacion investigación brainstorm 调研".split())
# A title's date that says since when something holds (says_since_when).
SINCE_WORDS = frozenset("since seit desde depuis dal dalla dès sinds от с".split())
# A file named as a template is a form to fill in, not a fact (states_something).
TEMPLATE_NAME_WORDS = frozenset("template templates vorlage vorlagen plantilla plantillas "
                                "gabarit 模板 テンプレート".split())
# Words by which a file says, at its head, that a tool wrote it (says_it_is_generated).
GENERATED_MARKS_WITHOUT_SPACES = ("自动生成", "自動生成", "자동 생성", "자동생성")
# A topic folder of records (session_log_reason): its notes are history, whatever their names.
LOG_FOLDERS = LOG_NAMES | frozenset("sessions session daily events digests digest archive archived "
                                    "archives meetings handoffs retros retrospectives "
                                    "standups adr adrs sprint sprints cycles iterations "
                                    "plans proposals rfcs ideas".split())
# A section whose heading names it a log, an archive or the work done is history (read_sections),
# in the languages memories are kept in (`## Archiviato`, `## Storico`, `## Erledigt`).
LOG_HEADINGS = frozenset("log logs changelog journal diary history devlog worklog minutes "
                         "timeline archive archived archives done completed finished "
                         "storico cronologia archiviato archiviati completati historique "
                         "archivé archivés terminé terminés historial histórico archivado "
                         "archivados arquivado arquivados completado completados concluído "
                         "concluídos verlauf archiv archiviert erledigt abgeschlossen "
                         "历史 归档 已完成 履歴 完了 아카이브 완료".split())
DATE_KEYS = ("date", "updated", "last_updated", "last-updated", "lastupdated", "modified",
             "created", "last_verified", "verified")


class MemoryFile(object):
    """One memory file, read once: its lines, its comments and code (spans and fenced blocks),
    its frontmatter, and where its lines start."""

    def __init__(self, project, path, text):
        self.path = path
        self.name = os.path.basename(path)
        self.shown = BUDGET.shown_path(project, path)
        if text.startswith("\ufeff"):  # an editor's byte-order mark is no part of the first line
            text = text[1:]
        self.text = text
        self.lines = text.split("\n")
        self.comments, self.code, self.unclosed = BUDGET.hidden_spans(text)
        self.fences = BUDGET.fenced_blocks(text)
        self.frontmatter = frontmatter_keys(text)
        self.starts = [0]
        newline = text.find("\n")
        while newline != -1:
            self.starts.append(newline + 1)
            newline = text.find("\n", newline + 1)
        self.fenced_lines = set()
        for start, end in self.fences:
            self.fenced_lines.update(range(self.line_of(start), self.line_of(max(start, end - 1)) + 1))
        self.silenced_whole = FILE_IGNORE_MARKER in text
        self.log = None  # why it is a session log (session_log_reason), for a topic file
        self.note = False  # a note in a topic folder beside the index
        self.headings = None  # the heading each line sits under (section_heading)
        self.entry_dates = None  # {line: date} of its `date:` lines (entry_dates)
        self.states = None  # whether it states something (states_something)

    def line_of(self, offset):
        import bisect
        return bisect.bisect_right(self.starts, offset)

    def silenced(self, line):
        return self.silenced_whole or (
            0 < line <= len(self.lines) and BUDGET.is_silenced(self.lines[line - 1]))

    def in_auto_memory_format(self):
        """A memory tool's format: frontmatter that names the note (`name`, or `title` as Basic
        Memory writes it) and gives a description or a type, as Claude Code's own files do."""
        keys = self.frontmatter
        return ("name" in keys or "title" in keys) and (
            "description" in keys or "type" in keys or "metadata.type" in keys)


def frontmatter_keys(text):
    """{key: value} of a leading `---` block, one level of nesting as `parent.key`; {} if none."""
    end = BUDGET.frontmatter_end(text)
    keys = {}
    parent = None
    for line in text[:end].split("\n")[1:-2]:
        if not line.strip() or line.lstrip().startswith("#") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        nested = line[:1] in (" ", "\t")
        key = key.strip().lower()
        if nested and parent:
            keys["%s.%s" % (parent, key)] = value.strip().strip("\"'")
        elif not nested:
            parent = key if not value.strip() else None
            keys[key] = value.strip().strip("\"'")
    return keys


class Findings(object):
    """The findings of one report, folded: one finding per file, check and subject (a cited
    path, a section), whatever the number of lines it is seen on."""

    def __init__(self, asked=OPT_IN):
        self.items = []
        self.by_key = {}
        self.left_out = OPT_IN - set(asked)  # the opt-in checks not asked for: never recorded

    def add(self, check, source, line, message, repair, lines=None, subject=None):
        """Record a finding unless its line or file is silenced. `source` is a MemoryFile, or a
        shown path with the file's `lines` given separately."""
        if check in self.left_out:
            return
        if isinstance(source, MemoryFile):
            if source.silenced(line):
                return
            shown = source.shown
        else:
            if lines and 0 < line <= len(lines) and BUDGET.is_silenced(lines[line - 1]):
                return
            shown = source
        key = (shown, check, subject)
        if subject is not None and key in self.by_key:
            finding = self.by_key[key]
            if line not in finding["lines"]:
                finding["lines"].append(line)
            return
        finding = {"check": check, "severity": SEVERITY[check], "file": shown, "line": line,
                   "lines": [line], "message": message, "repair": repair,
                   "at_session_start": False}
        self.items.append(finding)
        if subject is not None:
            self.by_key[key] = finding


PATTERNS = {}


def patterns():
    if not PATTERNS:
        import re
        PATTERNS.update({
            "file-name": re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z][A-Za-z0-9]{0,9}"
                                    r"|\.[A-Za-z][A-Za-z0-9_.-]{1,40})$"),
            "date": re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d])"),
            "last-updated": re.compile(r"last[ _-]?updated\W{0,6}(\d{4}-\d{2}-\d{2})", re.I),
            # `Date: 2026-03-03`, and a date so labelled in the languages memories are kept in
            # or by what it dates (`Recherche-Datum:`, `Audit date:`); not `Stand:` or `As of`,
            # which a living file rewrites as it is kept current, as it would `Last updated`
            "date-header": re.compile(
                r"^\W{0,4}(?:(?:research|recherche|audit|report|review|snapshot|analysis|analyse|"
                r"survey|study|run|session|meeting)[ -]?)?(?:date|datum|fecha|data|日期)\W{0,6}"
                r"(\d{4}-\d{2}-\d{2})", re.I),
            "code-span": re.compile(r"(`+)([^`\n]+?)\1"),
            "word": re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?"),
            "clause-mark": re.compile(r"[.;!?](?=\s|$)|[。；！？]"),
            "name-word": re.compile(r"[-_. ]+"),
            "brace-word": re.compile(r"\{[^{},]*\}"),  # `{name}`; `{a,b}` is a shell's list
            "named-commit": re.compile(r"(?<![\w#])#\d{1,6}\b|(?<![\w/])[0-9a-f]{7,40}(?![\w/])"),
            "value-change": re.compile(r"\d[\d.,%]*\s*(?:→|->|=>)\s*\d"),
            "ip-address": re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])"),
            "import": re.compile(r"(?:^|\s)@(\S+)"),
            "name-date": re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)"),
            # the day a name or a title gives, however it is spelled: `2026-04-21`, `2026_04_21`,
            # `2026.04.21`, `2026/04/21`, `20260421`, `21.04.2026`, `2026年4月21日`
            # a tool's words for what it wrote, where they open a sentence, a bracket or a dash
            # (`Generated: 2026-04-14`, `(auto-generated 2026-04-14, run #10)`, `Generiert von
            # AutoDream.`), or follow `this file is`; never `vectors generated by x.py are …`
            "generated": re.compile(
                r"(?:^|[.!?(\[—–]\s*|-\s+|\bthis\s+\w+\s+(?:is|was)\s+)(?:auto[- ]?(?:generated|"
                r"captured)|automatically\s+(?:generated|captured|written)|generated\s*(?:by|on|at|"
                r"from|with|:)|(?:auto)?generiert\s+(?:von|durch|am|mit)|automatisch\s+(?:generiert|"
                r"erzeugt)|(?:gerado|generado|généré|generato)\s+(?:por|par|da|automaticamente|"
                r"automáticamente|automatiquement|el|em|le|il))", re.I),
            "spelled-date": re.compile(
                r"(?<![\d.])((?:19|20)\d{2})([-_./])(\d{2})\2(\d{2})(?![\d])"
                r"|(?<![\d.])((?:19|20)\d{2})(\d{2})(\d{2})(?!\d)"
                r"|(?<![\d.])(\d{2})\.(\d{2})\.((?:19|20)\d{2})(?!\d)(?!\.\d)"
                r"|((?:19|20)\d{2})年(\d{1,2})月(\d{1,2})日"),
            "name-month": re.compile(r"(?<!\d)(?:19|20)\d{2}-\d{2}(?!\d)(?!-\d)"),
            "wiki-link": re.compile(r"\[\[([^\]|#\n]+)"),
            "decision-label": re.compile(r"^\W{0,6}(?:decision|decisione|decisión|decisão|décision|"
                                         r"entscheidung|besluit|beslut|决定|决策|決定|결정)\s*[:：]",
                                         re.I),
            "adr-title": re.compile(r"#\s+ADR[-\s]?\d+\b"),
            # cPanel's and Hostinger's layout: `public_html`, `domains/<domain name>/`
            "web-host-home": re.compile(r"/public_html(?:/|$)|/domains/[^/\s]+\.[A-Za-z]{2,}(?:/|$)",
                                        re.I),
            "list-item": re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s"),
            "template-value": re.compile(r"^(?:y{4}-m{2}-d{2}|<[^<>]*>|\{\{[^{}]*\}\}|x{3,}|\?+)$"),
            # a path ends where a space, a quote, a bracket or a CJK punctuation mark begins
            "machine-path": re.compile((
                r"(?<![\w/.~-])(~/[^\s`'\"()<>\[\]{cjk}]+|/(?:Users|home)/[^\s`'\"()<>\[\]/{cjk}]+/"
                r"[^\s`'\"()<>\[\]{cjk}]*|[A-Za-z]:[\\/]Users[\\/][^\s`'\"()<>\[\]\\/{cjk}]+[\\/]?"
                r"[^\s`'\"()<>\[\]{cjk}]*)").format(cjk="\u3000-\u303f\uff01-\uff0f\uff1a-\uff20")),
        })
    return PATTERNS


# --- the files of the memory folder -----------------------------------------------------------

class MemoryFolder(object):
    """The memory as the report reads it: the index, the topic files beside it and the notes of
    its topic folders, each read once and only as the hooks may read it (read_memory_file);
    and the folders read in part, past the hooks' cap on entries."""

    def __init__(self):
        self.index = None
        self.topics = []
        self.notes = []
        self.read_in_part = []


def is_folder_rule(name):
    """An instruction file an agent loads for the folder that holds it (Claude Code's CLAUDE.md
    and CLAUDE.local.md, Codex CLI's AGENTS.md, Gemini CLI's GEMINI.md): in a memory folder, the
    folder's rules, read by the harness whenever the agent works there: not a note, so never
    undated, never an orphan, never a note's lint. The hooks list no note of these names."""
    return name.lower() in BUDGET.NOT_NOTES and name.lower() != "readme.md"


def memory_files(project, env, folder, index_path, findings):
    """The MemoryFolder of the index at `index_path`: every Markdown file directly in its folder,
    and the notes of the topic folders there (notes_of_topic_folders). A README beside the index
    explains the folder to people; it is neither the index nor a topic. Each folder is read as
    session start lists it, at most BUDGET.ENTRIES_AT_MOST entries, so the cost is bounded
    whatever the memory holds. A memory folder that is a link out of the project is read not at
    all: each file in it would be refused."""
    memory = MemoryFolder()
    if leads_out_of_the_project(project, folder):
        findings.add("not-read", BUDGET.shown_path(project, folder), 1,
                     "%s was not read: it is a symbolic link whose target lies outside the "
                     "project, and so is every memory file in it" % BUDGET.shown_path(project, folder),
                     NOT_READ_REPAIR)
        return memory
    entries, more = BUDGET.first_entries(folder)
    if more:
        memory.read_in_part.append(BUDGET.shown_path(project, folder))
    index_key = os.path.normcase(os.path.abspath(index_path))
    index_listed = False
    for entry in sorted(entries, key=lambda entry: entry.name):
        name = entry.name
        is_index = os.path.normcase(os.path.abspath(entry.path)) == index_key
        index_listed = index_listed or is_index
        if not is_index and (name.startswith(".") or not name.endswith(".md")
                             or name.lower() == "readme.md" or BUDGET.is_real_folder(entry)):
            continue
        if not is_index and is_folder_rule(name):
            continue  # the folder's rules for an agent, not a topic file
        record = read_memory_file(project, env, entry.path, findings)
        if record is not None and is_index:
            memory.index = record
        elif record is not None:
            memory.topics.append(record)
    if not index_listed:  # not there, or past the entries read
        memory.index = read_memory_file(project, env, index_path, findings)
    if BUDGET.strictly_inside(folder, project):  # an index at the top lists no topic folders
        memory.notes = notes_of_topic_folders(project, env, entries, findings, memory.read_in_part)
    return memory


def notes_of_topic_folders(project, env, entries, findings, read_in_part):
    """The notes of every topic folder among the memory folder's `entries`, read once: the
    Markdown files directly in a folder there, as session start lists them (BUDGET.notes_in):
    never through a symlink, never a README or a dot file, at most BUDGET.ENTRIES_AT_MOST
    entries a folder. A folder read in part is added to `read_in_part`."""
    notes = []
    for entry in sorted(entries, key=lambda entry: entry.name):
        if entry.name.startswith(".") or not BUDGET.is_real_folder(entry):
            continue
        names, more = BUDGET.notes_in(entry.path)
        if more:
            read_in_part.append(BUDGET.shown_path(project, entry.path))
        for name in names:
            if is_folder_rule(name + ".md"):
                continue  # the folder's rules for an agent, not a note
            note = read_memory_file(project, env, os.path.join(entry.path, name + ".md"), findings)
            if note is not None:
                note.note = True
                notes.append(note)
    return notes


# What the report reads of the memory it reads as the hooks read what they show the agent
# (BUDGET.read_project_text, spec §8.8): --check runs on clones nobody has trusted yet, and the
# report quotes the lines it reads.
MEMORY_READ_LIMIT = 8 * BUDGET.MIB
NOT_READ_REPAIR = ("keep the memory's files regular files inside the project, outside every "
                   "`Read(...)` deny rule: the hooks refuse the others too, and a teammate's clone "
                   "has no file outside it")


def read_memory_file(project, env, path, findings):
    """The MemoryFile at `path`, or None: when there is nothing there, or when the hooks would
    not show it to the agent (a link out of the project, a special file, a file a `Read(...)`
    deny rule covers), which is then a `not-read` finding that names it, and nothing of it
    reaches the report."""
    text, refusal = BUDGET.read_project_text(project, env, path, MEMORY_READ_LIMIT)
    if refusal is not None:
        findings.add("not-read", BUDGET.shown_path(project, path), 1,
                     refusal[2:].rstrip("."), NOT_READ_REPAIR)
    return MemoryFile(project, path, text) if text is not None else None


def leads_out_of_the_project(project, path):
    """Whether `path`, named inside the project, resolves outside it through a link."""
    return BUDGET.lies_within(os.path.normpath(os.path.abspath(path)), project) and not \
        BUDGET.lies_within(os.path.realpath(path), os.path.realpath(project))


def environment_the_hooks_trust(project, env, findings):
    """The environment the hooks themselves run with (BUDGET.trusted_environment): a path
    variable a project settings file set to lead outside the project is dropped, as the hooks
    drop it, and named as a `not-read` finding on that settings file."""
    for name, line in BUDGET.refused_settings(project, env):
        origin = BUDGET.project_setting_origin(project, name, env.get(name))
        findings.add("not-read", origin or name, 1, line[2:].rstrip("."),
                     "set the variable inside the project, or in your own environment")
    return BUDGET.trusted_environment(project, env)[0]


# --- index lint -------------------------------------------------------------------------------

def is_pointer_line(text):
    """A line that points: a list item or a table row holding a relative link."""
    stripped = text.strip()
    if not (patterns()["list-item"].match(text) or stripped.startswith("|")):
        return False
    if any(BUDGET.is_relative_file_link(target) for _, target in BUDGET.markdown_links(text, [])):
        return True
    # an index that names its files in a wiki's, an import's or a code span's form points as well
    # (`- @decisions.md — [[decisions]] — …`, `- `lessons.md` - …`)
    return bool(patterns()["wiki-link"].search(text)) or any(
        word.lstrip("@").endswith(".md") for word in text.split() if word.startswith("@")) or any(
        match.group(2).strip().endswith(".md") for match in patterns()["code-span"].finditer(text)
        if text.strip()[2:].lstrip().startswith(match.group(0)) or
        stripped.startswith("|"))


def is_table_rule(text, next_text):
    """A table's separator row, or its header row (the row just above a separator)."""
    def separator(line):
        stripped = line.strip()
        return stripped.startswith("|") and set(stripped) <= set("|-: ") and "-" in stripped
    return separator(text) or (text.strip().startswith("|") and separator(next_text or ""))


def is_stamp(text):
    """A dated stamp, in a comment or on a line of its own (`*Last consolidated: 2026-05-21*`,
    `*Atualizado: 2026-06-22*`): it says when the index was last kept, which is not content. A
    label of a few words that says so, then the date, and nothing else."""
    lowered = text.strip().strip("*_> ").lower()
    if lowered.startswith(("last dream", "last updated", "last-updated")):
        return True
    label, _, rest = lowered.partition(":") if ":" in lowered else lowered.partition("：")
    return bool(patterns()["date"].match(rest.strip(" *_"))) and len(label.split()) <= 3 and any(
        word in label for word in STAMP_WORDS) and len(rest.strip(" *_")) <= 25


def index_line_kinds(index):
    """Each line's kind, and the heading of the section it sits in. Kinds: blank, comment
    (nothing visible once comments go), heading, pointer, code (in a fenced block), table (a
    table's header or separator), prose (guidance: a paragraph under the title, in a section
    about the index, or introducing a list; never a list item or a dated line) and content."""
    visible = dict((number, rest) for number, rest, _ in BUDGET.visible_lines(index.text, index.comments))
    kinds = []
    section = ""
    headings = []  # (level, title) of the open headings, outermost first
    preamble = True  # under the title, before the first section: where an index says what it is
    count = len(index.lines) - (1 if index.lines[-1:] == [""] else 0)
    # a leading `---` block is the file's metadata (`updated:`, `tags:`), read by tools, not shown
    metadata = index.line_of(BUDGET.frontmatter_end(index.text)) - 1 \
        if BUDGET.frontmatter_end(index.text) else 0
    for number in range(1, count + 1):
        raw = index.lines[number - 1]
        rest = visible.get(number)
        following = visible.get(number + 1, "")
        if number <= metadata:
            kind = "comment"
        elif rest is None:
            kind = "comment"
        elif number in index.fenced_lines:
            kind = "code"
        elif not rest.strip():
            kind = "blank"
        elif rest.lstrip().startswith("#"):
            kind = "heading"
            level = heading_level(rest.lstrip()) or 1
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, rest.strip().lstrip("#").strip().lower()))
            # a section under one about the index is about the index too (`## Usage` > `### Adding`)
            section = next((title for _, title in headings if is_guidance_section(title)),
                           headings[-1][1])
            preamble = preamble and not rest.lstrip().startswith("##")
        elif is_pointer_line(rest):
            kind = "pointer"
        elif is_table_rule(rest, following):
            kind = "table"
        elif is_placeholder(rest):
            kind = "blank"  # a slot kept for a fact: `_(none yet)_`, `- Symptom:`, `| — | — |`
        elif is_stamp(rest) or is_note(rest):
            kind = "prose"
        elif set(rest.strip()) <= set("-*_ ") and len(rest.strip().replace(" ", "")) >= 3:
            kind = "blank"  # a thematic break, `---`
        elif patterns()["list-item"].match(rest) or rest.strip().startswith("|") \
                or patterns()["date"].search(rest):
            kind = "content"
        elif preamble or is_guidance_section(section) or rest.rstrip().endswith(":"):
            kind = "prose"  # what the index is, how to use it, the words before a list
        else:
            kind = "content"
        kinds.append((number, kind, section, rest if rest is not None else raw))
    return kinds


def history_comments(index):
    """The comments that hide content: all but one-line stamps, the ignore marker, and the one
    short guidance comment the index format allows (the first other one-line comment)."""
    blocks = []
    guidance_allowed = True
    for start, end in index.comments:
        body = index.text[start + 4:end - 3]
        first, last = index.line_of(start), index.line_of(end - 1)
        one_line = first == last
        if one_line and (is_stamp(body) or BUDGET.is_silenced(body)):
            continue
        if one_line and guidance_allowed:
            guidance_allowed = False
            continue
        blocks.append((first, last, " ".join(body.split())))
    return blocks


def is_placeholder(text):
    """A line that holds no fact, only a slot for one: a placeholder wrapped as an aside
    (`_(none yet)_`, `[To be filled from lessons learned]`, `(empty — populated later)`), a word
    that stands for nothing yet (`TBD`, `None yet.`, `—`, `暂无`), a form's field with no value
    (`- Symptom:`, `- 日期：`, `**Cause:**`), or a table row whose cells after the first are all
    empty or placeholders (`| — | — |`, `| Owner | |`)."""
    stripped = text.strip()
    if stripped.startswith("|"):
        cells = [cell.strip().strip("*_`") for cell in stripped.strip("|").split("|")]
        return len(cells) > 1 and all(is_empty_value(cell) for cell in cells[1:]) and (
            is_empty_value(cells[0]) or len(cells[0].split()) <= 4)
    body = patterns()["list-item"].sub("", text, count=1).strip()
    body = body[3:].strip() if body[:3].lower() in ("[ ]", "[x]") else body
    plain = body.strip("*_ ")
    if not plain:
        return bool(body)  # a bare list marker, or emphasis around nothing
    if plain.endswith((":", "：")) and len(plain.split()) <= 6 and "`" not in plain \
            and "](" not in plain and patterns()["list-item"].match(text):
        return True  # a form's field, left empty
    wrapped = plain[:1] in "([<{" and plain[-1:] in ")]>}"
    lowered = plain.lower()
    if wrapped and any(phrase in lowered for phrase in PLACEHOLDER_PHRASES):
        return True
    return is_empty_value(plain.rstrip(".。"))


def is_empty_value(text):
    """A cell or a line that stands for nothing yet: empty, dashes, `TBD`, `None yet`, `暂无`,
    an unfilled template's `YYYY-MM-DD`, `<name>` or `{{BODY}}`."""
    lowered = text.strip().strip("*_`").strip().lower()
    return lowered in PLACEHOLDER_WORDS or not lowered.strip("-—–…. ") or bool(
        patterns()["template-value"].match(lowered))


def is_note(text):
    """A note about the memory, set apart as one (`**Note:** …`, `Note: …`, a blockquote
    `> …`): guidance."""
    return text.lstrip().startswith(">") or \
        text.strip().lstrip("*_> ").lower().startswith(("note:", "note**:", "notes:"))


def is_guidance_section(section):
    return section == "active context" or any(word in section for word in GUIDANCE_HEADINGS)


def lint_index(project, index, folder, topics, notes, findings):
    kinds = index_line_kinds(index)
    counts = {}
    for number, kind, section, rest in kinds:
        counts[kind] = counts.get(kind, 0) + 1
        unclosed_here = index.unclosed is not None and number == index.line_of(index.unclosed)
        if kind == "content" and not is_guidance_section(section) and not unclosed_here:
            findings.add("not-a-pointer", index, number,
                         "holds content, not pointers, under \"%s\": \"%s\""
                         % (section or "the title", BUDGET.entry_name(rest)),
                         "move it into a note of its own in a topic folder beside the index "
                         "(`<topic>/<what>.md`), which session start lists with no pointer (/dream)",
                         subject=("section", section))
    hidden_lines = 0
    for first, last, body in history_comments(index):
        size = last - first + 1
        hidden_lines += size
        findings.add("hidden-history", index, first,
                     "%s an HTML comment that no session sees but every budget pays "
                     "for: \"%s\"" % ("holds" if size == 1 else "lines %d-%d (%d lines) are"
                                      % (first, last, size), BUDGET.entry_name(body)),
                     "let /dream carry what is still true into notes, then delete the comment")
    if index.unclosed is not None:
        line = index.line_of(index.unclosed)
        findings.add("unclosed-comment", index, line,
                     "opens an HTML comment that never closes: renderers, and the harness in "
                     "instruction files, drop everything after it (%d line(s) below it)"
                     % (len(kinds) - line),
                     "close it with `-->`, or delete the stray `<!--`")
    index_links(project, index, folder, findings)
    reached = reachable_memory(index, topics, notes)
    unreached = [t for t in topics if os.path.normcase(os.path.normpath(t.path)) not in reached]
    # Logs need no pointer, unless the memory keeps pointers to its logs of that kind: then one
    # left out is a log nobody will find, as any other topic would be. Records named by their
    # day are a series (a table of daily logs, a list of meetings), and a dated snapshot is not
    # one of the handoffs an index lists. A log that names itself one, or that a tool writes,
    # is found by its name, by whoever appends to it: it needs no pointer either way.
    indexed = [t for t in topics if t.log and t not in unreached]
    dated_logs_are_indexed = any(named_by_its_day(t) for t in indexed)
    for topic in unreached:
        if topic.log and (found_by_its_writer(topic) or not (
                dated_logs_are_indexed if named_by_its_day(topic) else indexed)):
            continue
        if states_something(topic):
            findings.add("orphan", topic, 1,
                         "nothing in %s leads to this file, so no session learns it exists"
                         % index.shown,
                         "add a pointer line for it to the index, or move it into a topic folder "
                         "beside the index, where session start lists it")
    return {
        "file": index.shown,
        "lines": len(kinds),
        "pointer_lines": counts.get("pointer", 0),
        "other_lines": counts.get("content", 0),
        "prose_lines": counts.get("prose", 0),
        "code_lines": counts.get("code", 0),
        "heading_lines": counts.get("heading", 0),
        "blank_lines": counts.get("blank", 0),
        "comment_only_lines": counts.get("comment", 0),
        "hidden_history_lines": hidden_lines,
        "unclosed_comment_line": index.line_of(index.unclosed) if index.unclosed is not None else None,
    }


def named_by_its_day(memory):
    """Whether the file's name gives its day or its month (`2026-10-01.md`, `notes_2026_04.md`)."""
    month = patterns()["name-month"].search(memory.name)
    return bool(name_date(memory.name)) or bool(month and 1 <= int(month.group(0)[5:7]) <= 12)


def found_by_its_writer(record):
    """A record whose name says it is a log, an archive or a report (`activity-log.md`,
    `learnings-archive.md`, `wiki-lint-report.md`), or that says a tool generated it: the
    session, the hook or the tool that appends to it finds it by that name, and an index that
    lists the memory's other logs leaves it out on purpose."""
    stem = record.name[:-len(".md")] if record.name.endswith(".md") else record.name
    return patterns()["name-word"].split(stem.lower())[-1] in LOG_NAMES or \
        says_it_is_generated(record)


def memory_links(memory, folder, names=False):
    """(offset, normalised path) of the memory file's relative links outside comments and code,
    and of its `[[wiki links]]`, resolved from the file's folder; with `names`, of the Markdown
    files it names as well (named_markdown_files)."""
    hidden = sorted(memory.comments + memory.code)
    found = []
    for offset, target in BUDGET.markdown_links(memory.text, hidden):
        if BUDGET.is_relative_file_link(target):
            found.append((offset, os.path.normcase(os.path.normpath(os.path.join(folder, target)))))
    for match in patterns()["wiki-link"].finditer(memory.text):
        name = match.group(1).strip()
        name = name if name.endswith(".md") else name + ".md"
        found.append((match.start(), os.path.normcase(os.path.normpath(os.path.join(folder, name)))))
    # A file what session start shows names, to be opened, leads there as a link does: an
    # import (`@decisions.md`) or a code span that is a Markdown file's path (`- `lessons.md` -
    # …`, `read `memory/lessons.md` first`), read from its folder or the project's root. A name
    # deep in a topic file is a mention, not a way a session is led.
    if not names:
        return found
    root = memory.path[:len(memory.path) - len(memory.shown)] if memory.path.replace(
        os.sep, "/").endswith(memory.shown) else folder
    for offset, name in named_markdown_files(memory):
        for base in (folder, root):
            found.append((offset, os.path.normcase(os.path.normpath(os.path.join(base, name)))))
    return found


def named_markdown_files(memory):
    """(offset, path) of the Markdown files the memory names outside comments and fenced code:
    its imports (`@decisions.md`) and its code spans that are a relative `.md` path."""
    fenced = [(start, end) for start, end in memory.fences]
    inside = lambda at: any(start <= at < end for start, end in fenced + memory.comments)
    found = []
    for match in patterns()["import"].finditer(memory.text):
        name = match.group(1).rstrip(".,;:)")
        if name.endswith(".md") and not name.startswith(("/", "~")) and not inside(match.start()):
            found.append((match.start(1), name))
    for match in patterns()["code-span"].finditer(memory.text):
        name = match.group(2).strip()
        if name.endswith(".md") and not name.startswith(("/", "~", "-")) and " " not in name \
                and "://" not in name and not inside(match.start()):
            found.append((match.start(2), name))
    return found


def reachable_memory(index, topics, notes):
    """The memory files a session can reach by following links, however deep, from what session
    start shows: the index, and the notes it lists under it."""
    by_path = dict((os.path.normcase(os.path.normpath(t.path)), t) for t in topics)
    reached = set()
    pending = [index] + list(notes)
    shown = set(id(memory) for memory in pending)
    while pending:
        memory = pending.pop()
        for _, path in memory_links(memory, os.path.dirname(memory.path),
                                    names=id(memory) in shown):
            if path not in reached:
                reached.add(path)
                if path in by_path:
                    pending.append(by_path[path])
    return reached


def index_links(project, index, folder, findings):
    """Check the index's links: dead ones, and pointer lines that repeat another's target."""
    first_pointer_to = {}
    hidden = sorted(index.comments + index.code)
    for offset, target in BUDGET.markdown_links(index.text, hidden):
        if not BUDGET.is_relative_file_link(target):
            continue
        line = index.line_of(offset)
        path = os.path.normcase(os.path.normpath(os.path.join(folder, target)))
        if not os.path.exists(path):
            findings.add("dead-pointer", index, line,
                         "links `%s`, which does not exist in %s/"
                         % (target, BUDGET.shown_path(project, folder)),
                         "correct the link, or drop the line with /dream")
        elif is_pointer_line(index.lines[line - 1]):
            if path in first_pointer_to and first_pointer_to[path] != line:
                findings.add("duplicate-pointer", index, line,
                             "points to `%s` again (first at line %d)"
                             % (target, first_pointer_to[path]),
                             "keep one pointer per topic file and merge the clauses")
            first_pointer_to.setdefault(path, line)


# --- topic and feedback files -----------------------------------------------------------------

def valid_date(text):
    import datetime
    try:
        return datetime.date(int(text[:4]), int(text[5:7]), int(text[8:10])).isoformat()
    except ValueError:
        return None


def file_date(memory):
    """The date a memory file gives itself, wherever people put it: `Last updated`, a date key
    of its frontmatter, a `**Date**:` line near the top, or an ISO date in its name."""
    found = patterns()["last-updated"].search(memory.text)
    if found and valid_date(found.group(1)):
        return valid_date(found.group(1))
    for key in DATE_KEYS + tuple("metadata." + key for key in DATE_KEYS):
        value = memory.frontmatter.get(key, "")
        date = valid_date(value[:10]) if patterns()["date"].match(value) else None
        if date:
            return date
    headed = date_at_the_head(memory)
    if headed:
        return headed
    return name_date(memory.name)


def name_date(name):
    """The day a file's name gives, in any of the spellings spelled_date reads, or None:
    `2026-08-15.md`, `20260622-runtime-baseline.md`, `reference_setup_2026_04_21.md`."""
    return spelled_date(name)


def spelled_date(text):
    """The first valid day the text gives, as an ISO date, however it is spelled (`2026-04-21`,
    `2026_04_21`, `2026.04.21`, `2026/04/21`, `20260421`, `21.04.2026`, `2026年4月21日`; a year
    from 1900 to 2099), or None. A name or a title is read this way; the facts of a file are
    dated by ISO dates only (line_date), the spelling the protocol writes."""
    for found in patterns()["spelled-date"].finditer(text):
        groups = found.groups()
        if groups[0]:
            year, month, day = groups[0], groups[2], groups[3]
        elif groups[4]:
            year, month, day = groups[4], groups[5], groups[6]
        elif groups[7]:
            day, month, year = groups[7], groups[8], groups[9]
        else:
            year, month, day = groups[10], groups[11].zfill(2), groups[12].zfill(2)
        date = valid_date("%s-%s-%s" % (year, month, day))
        if date:
            return date
    return None


def date_at_the_head(memory):
    """The date of a `**Date:** 2026-03-03` line in the file's first 30 lines, before its first
    `##` section, when it is the file's only such line; None otherwise. A file with two is a
    file of entries, each dated by its own line (entry_dates), not a document dated once."""
    dated = entry_dates(memory)
    if len(dated) != 1 or min(dated) > 30 or not before_first_section(memory, min(dated)):
        return None  # a date in a section dates that section's entry, not the document
    return dated[min(dated)]


def entry_dates(memory):
    """{line number: date} of the lines outside fenced code that give their entry's date on a
    line of its own (`date: 2026-03-03`, `**Date:** 2026-03-03`), worked out once a file."""
    if memory.entry_dates is None:
        memory.entry_dates = {}
        for number, line in enumerate(memory.lines, start=1):
            header = patterns()["date-header"].match(line.strip().replace("*", ""))
            if header and valid_date(header.group(1)) and number not in memory.fenced_lines:
                memory.entry_dates[number] = valid_date(header.group(1))
    return memory.entry_dates


def lint_topics(project, index, topics, findings, tracked, env):
    """The lints of each file beside the index or in a topic folder (`topics`, notes among
    them): its size, its date, a feedback file's parts, paths on one machine; and one advice
    for the session logs among the topic files."""
    limit = BUDGET.number_setting(env, "MCP_TOPIC_TOKENS", TOPIC_TOKENS)
    opted_in = checks_opted_in(env)
    for topic in topics:
        tokens = estimated_tokens(len(topic.text))
        if tokens > limit and not (topic.note and topic.log):  # a record kept where records go
            findings.add("oversized-topic", topic, 1,
                         "is %s characters, about %s tokens (budget %s tokens): every session "
                         "that opens it pays that much" % (format(len(topic.text), ","),
                                                           format(tokens, ","), format(limit, ",")),
                         "split it into notes a task can open one at a time, one thing each "
                         "(`memory/<topic>/<what>.md`), and leave what is history to the git log")
        if topic.log:
            continue
        if "missing-date" in opted_in and not topic.in_auto_memory_format() \
                and file_date(topic) is None and not patterns()["date"].search(topic.text) \
                and states_something(topic):
            findings.add("missing-date", topic, 1,
                         "gives no date anywhere (none on its facts, in its name or in its "
                         "frontmatter), so nothing tells a reader how old a fact is",
                         "start each fact with the day it was learned, `- YYYY-MM-DD: `; git "
                         "dates the file, not the facts in it")
        if is_feedback(topic) and not topic.in_auto_memory_format() and labelled_parts(topic) < 2:
            findings.add("feedback-parts", topic, 1,
                         "is a feedback file without labelled parts: the lesson, then why "
                         "(**Why:**) and how to apply it (**How to apply:**)",
                         "state the lesson, then add the **Why:** and **How to apply:** parts")
    logs = [topic for topic in topics if topic.log and not topic.note]
    if logs and "session-log" in opted_in:
        report_session_logs(logs, findings)
    # The index is committed memory too, and the one file every session is shown.
    shared = [m for m in ([index] if index else []) + topics if not m.log]
    committed = [m for m in shared if BUDGET.shown_path(project, m.path) in tracked] \
        if tracked is not None else []
    for memory in committed:
        machine_local_paths(project, memory, findings)


def checks_opted_in(env):
    """The opt-in checks (OPT_IN) that MCP_HEALTH_CHECKS names, comma- or space-separated, or
    all of them for `all`."""
    named = (env.get("MCP_HEALTH_CHECKS") or "").replace(",", " ").lower().split()
    return OPT_IN if "all" in named else OPT_IN.intersection(named)


def states_something(memory):
    """Whether the file holds a line that says something about the project: not only headings,
    a table's header rows, comments, placeholders (is_placeholder) and how to use the file, as
    a tracker kept empty until its first entry (`| ID | Title |` under `## Open`), an unfilled
    form or an empty journal. In a file that keeps such slots for its entries (a section, a
    table, a placeholder), the words under its title say what the file is for, not a fact of
    the project. What states nothing has no age to give, and nothing for a session to find."""
    if memory.states is None and is_named_as_a_template(memory.name):
        memory.states = False  # a form to copy: what it holds is the form's, not the project's
    if memory.states is None:
        kinds = index_line_kinds(memory)
        slots = any(kind in ("heading", "table") or (kind == "blank" and rest.strip())
                    for number, kind, _, rest in kinds if number > 1)
        memory.states = any(
            kind not in ("blank", "comment", "heading", "table") and not is_guidance_section(section)
            and not (slots and kind == "prose" and before_first_section(memory, number))
            for number, kind, section, _ in kinds)
    return memory.states


def is_named_as_a_template(name):
    """A file whose name says it is a template (`agent-briefing-template.md`, `模板.md`)."""
    stem = name[:-len(".md")] if name.endswith(".md") else name
    return bool(TEMPLATE_NAME_WORDS.intersection(patterns()["name-word"].split(stem.lower())))


def before_first_section(memory, number):
    """Whether line `number` lies under the file's title, before its first `##` section."""
    return not any(heading_level(line) >= 2 for at, line in enumerate(memory.lines[:number - 1], 1)
                   if at not in memory.fenced_lines)


def is_feedback(memory):
    """A correction from the owner: a note in the `feedback` topic folder, or a feedback file
    beside the index as earlier releases named it (`feedback_<slug>.md`)."""
    if memory.note:
        return os.path.basename(os.path.dirname(memory.path)).lower() == "feedback"
    return memory.name.startswith(("feedback_", "feedback-"))


# --- session logs -------------------------------------------------------------------------------

def report_session_logs(logs, findings):
    """One advice for all the logs among the topic files, at the first one's line 1 (the oldest,
    for logs named by their dates), so a folder of a log a day is one line, not one a day."""
    first = logs[0]
    others = "" if len(logs) == 1 else " and %d more" % (len(logs) - 1)
    findings.add("session-log", first, 1,
                 "%s%s %s session log%s or dated record%s (this one %s): %s what happened, so the "
                 "paths %s name%s are history and are not checked against git"
                 % (first.name, others, "are" if others else "is a", "s" if others else "",
                    "s" if others else "", first.log, "they tell" if others else "it tells",
                    "they" if others else "it", "" if others else "s"),
                 "nothing in a record needs fixing; but a log among the topic files is read as "
                 "memory, so let /dream carry what is still true into notes, and keep logs in a "
                 "topic folder of their own (memory/logs/, which session start lists by name "
                 "only) or in the git history")


def session_log_reason(memory):
    """Why a topic file is a session log, a record of what happened or of a state at a date
    rather than claims about the project now, or None. First of all, a note is a record when
    its topic folder is named as one keeps records (`logs/`, `sessions/`, `archive/`). Then, in
    this order: its frontmatter `type` is a log's kind; its title names it an ADR; its name or
    its title carries its date, whatever `type` its frontmatter gives (a dated snapshot: what it
    says held on that day, `reference_setup_2026_04_21.md`, `# Setup — Stand 2026-04-21`), or
    a date labelled once at its head (minutes, a report, an audit: dated_at_its_head); it says
    a tool generated it (a generated index, report or log: says_it_is_generated); its name ends
    in a log's word (`session-log.md`, `journal.md`, `lint-report.md`) or holds a record's
    (`post-mortem-…`, `proposal-…`, `research-…`); or it has a log's structure, sections
    headed by dates, at least two of them and at least half the file's sections."""
    folder = os.path.basename(os.path.dirname(memory.path))
    if memory.note and patterns()["name-word"].split(folder.lower())[-1] in LOG_FOLDERS:
        return "kept in `%s/`, a folder of records" % folder
    kind = (memory.frontmatter.get("type") or memory.frontmatter.get("metadata.type") or "")
    kind = kind.strip().lower()
    if kind in LOG_TYPES:
        return "its frontmatter says `type: %s`" % kind
    if patterns()["adr-title"].match(memory.text[BUDGET.frontmatter_end(memory.text):].lstrip()):
        return "an architecture decision record, by its title"
    named = name_date(memory.name)
    if named:
        return "named by its date, %s" % named
    month = patterns()["name-month"].search(memory.name)
    if month and 1 <= int(month.group(0)[5:7]) <= 12:
        return "named by its month, %s" % month.group(0)
    dated_once = dated_at_its_head(memory)
    if dated_once:
        return "a document dated once, at its head: %s" % dated_once
    if says_it_is_generated(memory):
        return "generated by a tool, by its own words at its head"
    stem = memory.name[:-len(".md")] if memory.name.endswith(".md") else memory.name
    words = patterns()["name-word"].split(stem.lower())
    if words[-1] in LOG_NAMES:
        return "named as a log"
    if RECORD_NAME_WORDS.intersection(words):
        return "named as a record of its day (a post-mortem, a retrospective, a proposal, " \
               "a research note)"
    dated, sections = dated_sections(memory)
    if dated >= 2 and dated * 2 >= sections:
        return "its sections are headed by dates"
    return None


def dated_at_its_head(memory):
    """The date of a document dated once, or None: a title that carries its day (its first
    heading, `# Dependency audit — 2026-04-06`, or the `name` or `title` of its frontmatter,
    `name: Claude setup 2026-04-21`, in any spelling spelled_date reads), or a date labelled
    once in its first lines (`**Date:** 2026-03-03`, `Recherche-Datum: 2026-04-02`); in a file
    not kept current (no `Last updated`) whose entries are not dated apart (entry_dates)."""
    if patterns()["last-updated"].search(memory.text):
        return None
    title = next((line for number, line in enumerate(memory.lines, start=1)
                  if heading_level(line) and number not in memory.fenced_lines), "")
    titles = [title] if heading_level(title) == 1 else []
    titles += [memory.frontmatter.get(key, "") for key in ("name", "title")]
    dated = [spelled_date(text) for text in titles if spelled_date(text)
             and not says_since_when(text)]
    if dated and not entry_dates(memory):
        return dated[0]
    return date_at_the_head(memory)


def says_since_when(title):
    """Whether a title's date says since when something holds (`Notion integration (active
    since 2026-04-21)`, `seit`, `desde`, `depuis`, `自`, `以来`): a state that still holds,
    not the day the file records."""
    at = patterns()["spelled-date"].search(title)
    before = title[:at.start()].lower() if at else ""
    words = patterns()["word"].findall(before)[-2:]
    return bool(SINCE_WORDS.intersection(words)) or any(
        mark in title[max(0, at.start() - 2):at.end() + 3] for mark in ("自", "从", "以来", "起")) \
        if at else False


def says_it_is_generated(memory):
    """Whether the file says, at its head (its title and the lines before its
    first `##` section, at most the first ten lines of its body), that a tool wrote it: a
    generated index, a lint report, a log a hook appends to (`Generated: 2026-04-14 12:23`,
    `Auto-captured by the PostToolUse hook.`, `# Wiki index (auto-generated 2026-04-14)`).
    What a tool wrote is its record of one run, kept where the tool finds it."""
    first = memory.line_of(BUDGET.frontmatter_end(memory.text))
    for number in range(first, min(len(memory.lines), first + 10) + 1):
        line = memory.lines[number - 1]
        if number in memory.fenced_lines or heading_level(line) >= 2:
            break
        plain = line.strip().lstrip("#>*_<!- ").replace("*", "").replace("_", " ")
        if patterns()["generated"].search(plain) or \
                any(mark in line for mark in GENERATED_MARKS_WITHOUT_SPACES):
            return True
    return False


def dated_sections(memory):
    """(sections headed by a date, sections): the `##` and deeper headings outside fences."""
    dated = sections = 0
    for number, line in enumerate(memory.lines, start=1):
        if not line.startswith("##") or number in memory.fenced_lines:
            continue
        sections += 1
        found = patterns()["date"].search(line)
        dated += 1 if found and valid_date(found.group(0)) else 0
    return dated, sections


def labelled_parts(topic):
    """Lines that open with a label (`**Why:**`, `Why:`, `## How to apply`), in any language:
    the structure of a feedback file, whatever words it uses."""
    count = 0
    for line in topic.text[BUDGET.frontmatter_end(topic.text):].split("\n"):
        stripped = line.strip().lstrip("-*>_ ")
        if line.lstrip().startswith("#") and len(line.strip()) < 60:
            count += 1
        elif line.strip().startswith(("**", "__")) and ":" in stripped[:40]:
            count += 1
        elif 0 < stripped.find(":") < 25 and stripped[:stripped.find(":")].replace(" ", "").isalpha():
            count += 1
    return count


def machine_local_paths(project, memory, findings):
    """Absolute paths on one person's machine (a home folder), in a file the team shares."""
    server_note = is_named_for_a_server(memory.name)
    checkout = "~/" + os.path.basename(os.path.abspath(project)).lower()
    for number, line in enumerate(memory.lines, start=1):
        for match in patterns()["machine-path"].finditer(line):
            written = match.group(1)
            path = written.rstrip(".,;:")
            if line[match.end():match.end() + 1] in ("<", "{", "$", "["):
                continue  # `C:\Users\me\.claude\projects\<path>\`: a pattern, not a path
            if is_placeholder_home(written) or on_a_server(path, line, match.start(), server_note) \
                    or says_it_changed(line, match.start()) or quotes_an_error(line, match.start()) \
                    or (path.lower() + "/").startswith(checkout + "/") \
                    or leads_into_this_repository(project, path):
                continue  # an example, a server's, what was, an error's, or a reader's checkout
            findings.add("machine-local-path", memory, number,
                         "names `%s`, a path on one machine: it does not exist for anyone else "
                         "who reads this committed memory" % path,
                         "write it relative to the repository, or as a setting each person "
                         "makes (an environment variable), and keep the machine's copy local",
                         subject=("path", path))


def leads_into_this_repository(project, path):
    """Whether a home path is this repository checked out under a folder of its own name:
    `~/<folder>/<rest>` (or `/home/<name>/<folder>/<rest>`) where `<rest>` is a path this
    repository holds (`~/openclaw/templates/self-review.md` in a repository with
    `templates/self-review.md`): each reader's own checkout, wherever they keep it."""
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    if parts and parts[0] == "~":
        rest = parts[2:]
    elif len(parts) > 1 and parts[0].lower() in ("users", "home") or \
            len(parts) > 2 and parts[1].lower() == "users":
        rest = parts[3:] if parts[0].lower() in ("users", "home") else parts[4:]
    else:
        return False
    return bool(rest) and not rest[0].startswith(".") and \
        os.path.lexists(os.path.join(project, *rest))


def is_placeholder_home(path):
    """Not one machine's path: an example (`~/path/to/data`, `~/Documents/...`,
    `/home/user/...`, `/Users/<you>/`), an application's folder every account has (`~/.config/`,
    macOS's `~/Library/` and `~/Applications/`), or a standard folder alone (`~/Downloads`)."""
    lowered = path.lower().rstrip("/\\")
    if any(mark in lowered for mark in PLACEHOLDER_MARKS) or patterns()["brace-word"].search(lowered):
        return True
    if lowered.startswith("~"):
        parts = lowered[1:].strip("/").split("/")
        return parts[0].startswith(".") or parts[0] in ("", "library", "applications") or (
            len(parts) == 1 and parts[0] in STANDARD_HOME_FOLDERS)
    parts = lowered.replace("\\", "/").split("/")  # ['', 'home', name, ...] or ['c:', 'users', name, ...]
    user = parts[2] if len(parts) > 2 else ""
    return user.strip("<>{}$") in ("user", "username", "you", "me", "name", "yourname",
                                   "your-name", "your_name", "someone", "example", "") + \
        IMAGE_ACCOUNTS


def on_a_server(path, line, at, server_note):
    """Whether the memory puts this home folder on a server, where whoever runs the server finds
    it: the file is named for a server or VM (`pteachlab_server.md`, `app_on_vm120.md`), or an
    account's home is written out (`/home/app/...`) on a line that names a server (a server, VM,
    VPS, host, container or Docker, or an IP address); unless a word next to the path calls it
    local (`rsynced from local `~/Projects/app``, `~/backups/db.sql` on laptop`). `~/...` elsewhere is the reader's
    own home, wherever it is written."""
    words = [(m.start(), m.group(0).lower()) for m in patterns()["word"].finditer(line)]
    before = [word for offset, word in words if offset < at][-2:]
    after = [word for offset, word in words if offset >= at + len(path)][:2]
    if any(word in LOCAL_WORDS for word in before + after):
        return False
    if patterns()["web-host-home"].search(path):
        return True  # a web host's document root: a hosting account's home, not a person's
    return server_note or (not path.startswith("~") and names_a_server(line))


def is_named_for_a_server(name):
    """A note named for the machine it describes: its name ends in `server`, `vm`, `vps` or
    `host` (`pteachlab_server.md`, `app_on_vm120.md`), not one that merely mentions one
    (`proxmox_vm_bot.md`)."""
    stem = name[:-len(".md")] if name.endswith(".md") else name
    last = patterns()["name-word"].split(stem.lower())[-1].rstrip("0123456789")
    return last in ("server", "servers", "vm", "vps", "host", "hosts")


def names_a_server(text):
    return bool(patterns()["ip-address"].search(text)) or any(
        m.group(0).lower() in SERVER_WORDS for m in patterns()["word"].finditer(text))


def quotes_an_error(line, at):
    """Whether the path sits in quoted error output (`FileNotFoundError: ~/config.yaml`, `No
    such file or directory: ...`): it names what was missing, not a path to use."""
    before = line[:at]
    tick = before.rfind("`")
    quoted = before[tick + 1:] if tick >= 0 and before.count("`") % 2 == 1 else before[-60:]
    lowered = quoted.lower()
    return "error" in lowered or "no such file" in lowered or "not found" in lowered


def says_it_changed(line, at):
    """Whether the clause around offset `at` opens with a word of change (`Removed the stray copy
    at ...`, `Deprecated: ...`): then the path is what was, not what is."""
    start, _ = clause_around(line, at)
    first = patterns()["word"].search(line, start, at)
    return bool(first) and first.group(0).lower() in CHANGED_WORDS


# --- references to repository paths -----------------------------------------------------------

class Citation(object):
    def __init__(self, memory, line, written, candidates, date, link, bare, span):
        self.memory = memory
        self.line = line
        self.written = written
        self.candidates = candidates  # project-relative paths it may mean, most likely first
        self.date = date
        self.link = link
        self.bare = bare  # a file name alone, without a folder
        self.span = span  # (start, end) of the code span or link that cites it, in its line
        self.lookup = written  # the path as it is looked for, read from its list's folder
        self.spans = []  # every code span and link of its line
        self.written_on = None  # the date on its line or over its section, never the file's
        self.siblings = []  # every citation of its line, itself included
        self.done = False  # in a list item checked off as done (`- [x] …`)


# What a path is: the hooks' one reading, shared with session start's marks; this report also
# reads a bare file name (`app.py`), which session start does not.
looks_like_repository_path = BUDGET.looks_like_repository_path


def cited_path(text):
    """The repository path or bare file name a piece of code names (BUDGET.cited_path), or None."""
    text = BUDGET.without_line_suffix(text)
    return text if looks_like_repository_path(text) or patterns()["file-name"].match(text) \
        else None


def paths_in_code(content):
    """The paths a code span cites (BUDGET.paths_in_code), its whole content a bare name too."""
    whole = cited_path(content)
    return [whole] if whole else BUDGET.paths_in_code(content)



def spans_by_line(memory, with_links):
    """{line number: [(start, end, kind, text), ...]} of the file's code spans (kind "code",
    text their content) and, when asked, its relative links (kind "link", text the target),
    outside comments and fenced blocks, with offsets within their line. The spans come from the
    hook's scanner, so a memory is read one way everywhere."""
    fences = set(memory.fences)
    spans = {}
    for start, end in memory.code:
        if (start, end) in fences:
            continue
        ticks = len(memory.text[start:end]) - len(memory.text[start:end].lstrip("`"))
        number = memory.line_of(start)
        offset = memory.starts[number - 1]
        spans.setdefault(number, []).append(
            (start - offset, end - offset, "code", memory.text[start + ticks:end - ticks]))
    if with_links:
        hidden = sorted(memory.comments + memory.code)
        for start, end, target in BUDGET.link_spans(memory.text, hidden):
            number = memory.line_of(start)
            offset = memory.starts[number - 1]
            spans.setdefault(number, []).append((start - offset, end - offset, "link", target))
    for items in spans.values():
        items.sort()
    return spans


def masked(line, spans):
    """The line with every code span and link blanked out, offsets kept: the words its sentence
    says, apart from what it cites."""
    pieces = []
    cursor = 0
    for start, end, _, _ in spans:
        if start >= cursor:
            pieces.append(line[cursor:start])
            pieces.append(" " * (end - start))
            cursor = end
    pieces.append(line[cursor:])
    return "".join(pieces)


def line_date(words):
    """The newest ISO date in the words of a line (never one inside a code span or a link: the
    citation itself, or a navigation link, dates nothing), or None."""
    dates = [valid_date(m.group(0)) for m in patterns()["date"].finditer(words)]
    dates = [d for d in dates if d]
    return max(dates) if dates else None


def citations_in(project, memory, is_index):
    """Every repository path the file cites, outside comments, fenced blocks and the parts that
    are a log (read_sections), with the date of the fact that cites it (its line's, else the
    file's own) and the day it was written, as far as the line or its section says. A path in a
    list item nested under an item that cites a folder is read from that folder first. The
    index's links are pointers, checked as such (§9.3); a topic file's relative links are
    citations, read from where they point."""
    found = []
    fallback = file_date(memory)
    sections = read_sections(memory)
    folder = os.path.dirname(memory.path)
    by_line = spans_by_line(memory, not is_index)
    parents = list_parents(memory, by_line)
    items = list_items(memory)
    for number, spans in sorted(by_line.items()):
        section_date, history, entry_date = sections.get(number, (None, False, None))
        if history:
            continue
        line = memory.lines[number - 1]
        first, done = items.get(number, (number, False))
        date = line_date(masked(line, spans)) or (
            line_date(memory.lines[first - 1]) if first != number else None) or entry_date
        written_on = date or section_date
        date = date or fallback
        for start, end, kind, text in spans:
            if kind == "link":
                if BUDGET.is_relative_file_link(text):
                    path = inside_project(project, os.path.normpath(os.path.join(folder, text)))
                    if path:
                        found.append(Citation(memory, number, text, [path], date, True, False,
                                              (start, end)))
                continue
            outer, own, after = parents.get(number, (None, None, 0))
            parent = own if own and start >= after else outer
            for written in paths_in_code(text):
                bare = "/" not in written
                bases = [folder] if bare else [project, folder]
                lookup = written
                if parent and not written.startswith(parent):
                    lookup = parent.rstrip("/") + "/" + written  # read from its list's folder
                    bases, bare = [project], False
                candidates = [inside_project(project, os.path.normpath(
                    os.path.join(base, lookup.rstrip("/")))) for base in bases]
                candidates = [c for c in candidates if c]
                if candidates:
                    citation = Citation(memory, number, written, candidates, date, False, bare,
                                        (start, end))
                    citation.lookup = lookup
                    found.append(citation)
        on_this_line = [c for c in found if c.line == number and c.memory is memory]
        for citation in on_this_line:
            citation.spans, citation.siblings, citation.written_on = spans, on_this_line, written_on
            citation.done = done
    return found


def list_items(memory):
    """{line number: (the item's first line, whether it is checked off)} for the lines of list
    items: an item's own line and the indented lines that continue it, with no blank between
    (`- [x] **Window maximised** (2026-08-05, commit a60e456):` then `  the duplicates in …`).
    A continuation line is dated by its item, and an item checked off as done tells work done."""
    items = {}
    current = None
    for number, line in enumerate(memory.lines, start=1):
        if number in memory.fenced_lines or not line.strip() or heading_level(line):
            current = None
            continue
        marker = patterns()["list-item"].match(line)
        if marker:
            rest = line[marker.end():].lstrip()
            current = (number, rest[:3].lower() == "[x]")
        elif not line[:1].isspace():
            current = None
        if current:
            items[number] = current
    return items


def list_parents(memory, by_line):
    """{line number: (outer folder, own folder, offset)} for list items whose paths are read
    from a folder: an item nested under one that cites a folder reads from it (`- `src/tracker/``
    then `  - `innovation/card.py``), and the description of an item that opens with a folder,
    past `offset`, reads from that folder (`- `themes/` — a repository of its own, with its own
    `scripts/browse.py``). A line that is not a list item and not indented ends the list."""
    parents = {}
    open_items = []  # (indent, folder the item reads its children from, or None), outermost first
    for number, line in enumerate(memory.lines, start=1):
        item = patterns()["list-item"].match(line)
        if not item:
            if line.strip() and not line[:1].isspace():
                open_items = []
            continue
        indent = len(line) - len(line.lstrip())
        while open_items and open_items[-1][0] >= indent:
            open_items.pop()
        outer = next((f for _, f in reversed(open_items) if f), None)
        spans = [(start, end, text.strip()) for start, end, kind, text in by_line.get(number, ())
                 if kind == "code"]
        opening = spans[0] if spans and opens_the_item(line, item.end(), spans[0]) else None
        own = None
        if opening:
            own = opening[2] if not outer or opening[2].startswith(outer) else \
                outer.rstrip("/") + "/" + opening[2]
        if outer or own:
            parents[number] = (outer, own, opening[1] if opening else 0)
        open_items.append((indent, own))
    return parents


def opens_the_item(line, item_start, span):
    """Whether a list item opens with this code span, a folder, followed by what it is (` — `,
    ` - `, `:`, `(`): `- `themes/` — BGA themes`."""
    start, end, text = span
    if line[item_start:start].strip(" *_") or not text.endswith("/") \
            or not looks_like_repository_path(text):
        return False
    rest = line[end:].lstrip(" *_")
    return rest.startswith(("—", "–", "- ", ":", "(")) or not rest


def read_sections(memory):
    """{line number: (date of its section, whether it lies in a log's part)} for the lines under
    a heading or a dated entry. A section is dated by a date in its heading (`### Install model
    (decided 2026-05-02)`). A log's part is history, not claims: a section whose heading names a
    log (`## Progress log`, `## Changelog`, `## History`), and an entry that opens with its date,
    as a heading (`## 2026-05-29 — Phase 3 done`) or a paragraph in bold (`**2026-05-29 — Phase 3
    done**`), down to the next heading of the same or a higher level (an entry in bold, to the
    next heading or entry). A list item that opens with a date is a dated fact, not an entry.
    The third part is the date of the entry a line belongs to, given on a line of its own
    (`date: 2026-03-03`, entry_dates): it dates the lines below it, to the next heading or the
    next such line, as the date of the facts there."""
    sections = {}
    open_sections = []  # (level, date, history), outermost first
    entry = None
    dated_entry = None
    decisions = decision_records(memory)
    for number, line in enumerate(memory.lines, start=1):
        level = 0 if number in memory.fenced_lines else heading_level(line)
        if level:
            while open_sections and open_sections[-1][0] >= level:
                open_sections.pop()
            title = line.strip().lstrip("#").strip()
            outer = open_sections[-1] if open_sections else (0, None, False)
            open_sections.append((level, first_date(title) or outer[1],
                                  outer[2] or opens_with_date(title) or names_a_log(title)
                                  or number in decisions))
            entry = dated_entry = None
        elif number not in memory.fenced_lines and line.startswith(("**", "__")) \
                and opens_with_date(line):
            entry = first_date(line)
        dated_entry = entry_dates(memory).get(number, dated_entry)
        if entry or open_sections or dated_entry:
            section = open_sections[-1] if open_sections else (0, None, False)
            sections[number] = (entry or section[1], bool(entry) or section[2], dated_entry)
    return sections


def decision_records(memory):
    """The heading lines of the sections that are a decision's record: a section that gives
    its date on a line of its own (`- **Data:** 2026-08-05`, entry_dates) and labels its
    decision (`**Decision:**`, `Decisione:`, `Decisión:`, `Entscheidung:`, `决定：`), as an ADR
    does in miniature. A decision is recorded on its day and superseded, not edited: what it
    cites is what was there when it was taken (§9.4.5). A decision in the team format
    (`- 2026-10-01: the queue is Redis`) has no such label: it is a fact, kept true."""
    dated = entry_dates(memory)
    found, heading, labelled, has_date = set(), None, False, False
    for number, line in enumerate(memory.lines + ["# end"], start=1):
        if heading_level(line) and number not in memory.fenced_lines:
            if heading and labelled and has_date:
                found.add(heading)
            heading, labelled, has_date = number, False, False
            continue
        has_date = has_date or number in dated
        labelled = labelled or bool(patterns()["decision-label"].match(line.replace("*", "")))
    return found


def heading_level(line):
    """The level of an ATX heading (`## Title` is 2), or 0 for any other line."""
    marks = len(line) - len(line.lstrip("#"))
    return marks if 0 < marks <= 6 and line[marks:marks + 1] in (" ", "\t", "") else 0


def first_date(text):
    found = patterns()["name-date"].search(text)
    return valid_date(found.group(0)) if found else None


def opens_with_date(text):
    """Whether a title or a line opens with a date, past its emphasis and brackets."""
    start = text.strip().lstrip("*_[(` ")
    return bool(patterns()["name-date"].match(start)) and first_date(start) is not None


def names_a_log(title):
    """A heading that names a log (`## Progress log`, `## Changelog`, `## History`); a heading
    that merely mentions sessions (`## Session start checklist`) does not."""
    return any(word in LOG_HEADINGS for word in
               (m.group(0).lower() for m in patterns()["word"].finditer(title)))


def inside_project(project, path):
    try:
        relative = os.path.relpath(path, project)
    except ValueError:
        return None
    if relative == os.curdir or relative.split(os.sep)[0] == os.pardir:
        return None
    return relative.replace(os.sep, "/")


# --- what a line says about the path it cites ---------------------------------------------------

def records_change(citation, existing):
    """Whether the line, read as a sentence, records that the cited path changed or plans that
    it will: then a path that is gone is what the line says, not a stale fact. Decided on the
    clause that holds the citation (the words between sentence marks), by whole words:

    - a word saying the path changed (`removed`, `renamed`, `merged`, `ported`, `used to` after
      anything but a form of *be* ...), anywhere in the clause;
    - a word planning the change (`delete`, `remove`, `rename`, `move` ...), before the path,
      or anywhere in a table row (`| `src/old.py` | DELETE |`), which is one record;
    - a word of succession (`now`, `became`, `instead of`, an arrow ...) with another cited path
      in the clause that exists: `src/helpers.py` -> `src/utils.py`.

    A path the change leads to (after `to`, `into`, `as`, `by`, `with`, `now` or an arrow) is
    what the line says exists, so no word of change excuses it when it is gone."""
    line = citation.memory.lines[citation.line - 1]
    words_line, start, end, words, before = citation_clause(citation)
    if leads_to(before, words_line[start:citation.span[0]]):
        return False
    names = [word for _, word in words]
    if any(word in CHANGED_WORDS for word in names) or used_to_for_the_past(names):
        return True
    if any(phrase in " ".join(names) for phrase in CHANGED_PHRASES):
        return True
    planned = names if line.lstrip().startswith("|") else before  # a table row is one record
    if any(word in PLANNED_WORDS for word in planned):
        return True
    clause = words_line[start:end]
    if any(mark in clause for mark in CHANGE_MARKS_WITHOUT_SPACES):
        return True
    succession = any(word in SUCCESSION_WORDS for word in names) or \
        any(arrow in clause for arrow in ARROWS)
    return succession and any(
        other is not citation and other.line == citation.line and start <= other.span[0] < end
        and other in existing for other in citation.siblings)


def rejects(citation):
    """Whether the line names the path only to turn it down: a word of refusal just before it,
    after the last comma or other citation (`under `journal/`, not `logs/``, `rather than
    `logs/``, `而不是 `logs/``). The line claims nothing about that path, so a path gone from
    history is no finding, and its repair would only repeat the path the line already gives.
    A refusal with a verb between (`do not edit `x.py``) still sends the reader to the path."""
    line = masked(citation.memory.lines[citation.line - 1], citation.spans)
    start = max([0] + [end for at, end, _, _ in citation.spans if end <= citation.span[0]])
    before = line[start:citation.span[0]]
    before = before[max(before.rfind(","), before.rfind("，"), before.rfind("、")) + 1:]
    words = [m.group(0).lower() for m in patterns()["word"].finditer(before)]
    if words[-1:] and words[-1] in PREPOSITIONS:
        words = words[:-1]  # `not in `logs/``, `nicht unter `logs/``
    return bool(words) and (words[-1] in REFUSAL_WORDS or tuple(words[-2:]) in REFUSAL_PHRASES) \
        or before.rstrip(" *_(「『\"'").endswith(REFUSAL_MARKS_WITHOUT_SPACES)


def names_another_place(citation):
    """Whether the clause of a citation names a place outside the repository, a home folder or
    an absolute path (`the app in `~/Projects/app`: `install.sh` builds it`): a bare file name
    there is that place's file, not the one of the same name the repository once held."""
    line = citation.memory.lines[citation.line - 1]
    start, end = clause_around(masked(line, citation.spans), citation.span[0])
    if patterns()["machine-path"].search(line, start, end):
        return True
    return any(kind == "code" and text.strip().startswith(("/", "~")) and start <= at < end
               for at, _, kind, text in citation.spans)


def citation_clause(citation):
    """The citation's line with its code and comments masked, the (start, end) of the clause that
    holds the citation, that clause's words as (offset, lowercased word), and the words before
    the citation."""
    words_line = masked(citation.memory.lines[citation.line - 1], citation.spans)
    start, end = clause_around(words_line, citation.span[0])
    words = [(m.start(), m.group(0).lower()) for m in
             patterns()["word"].finditer(words_line, start, end)]
    return words_line, start, end, words, [word for at, word in words if at < citation.span[0]]


def leads_to(before, text_before):
    """Whether the words just before a path make it where a change leads: `renamed to`,
    `merged into`, `replaced by`, `in favour of`, an arrow; not `such as`."""
    if text_before.rstrip(" *_([").endswith(ARROWS):
        return True
    if before[-2:] == ["such", "as"]:
        return False
    return bool(before) and before[-1] in DESTINATION_WORDS or \
        before[-3:] in (["in", "favour", "of"], ["in", "favor", "of"])


def clause_around(words_line, position):
    """(start, end) of the clause of the masked line around `position`: the text between
    sentence marks (`.`, `;`, `!`, `?` followed by a space or the end, and `。`, `；`)."""
    start = 0
    for match in patterns()["clause-mark"].finditer(words_line):
        if match.end() <= position:
            start = match.end()
        else:
            return start, match.start()
    return start, len(words_line)


def used_to_for_the_past(names):
    """`used to` as the past (`it used to live in ...`, `used to be`), not as purpose
    (`is used to generate ...`, or a description that opens with `used to ...`)."""
    for at in range(len(names) - 1):
        if names[at] == "used" and names[at + 1] == "to":
            if names[at + 2:at + 3] == ["be"]:
                return True
            if at > 0 and names[at - 1] not in BE_WORDS and not names[at - 1].endswith("'s"):
                return True
    return False


# --- what git knows ---------------------------------------------------------------------------

class History(object):
    """One pass over the checked branch's first-parent history (merges by the date they landed),
    with renames: every path it ever held, what became of each, and the commits to cited paths."""

    def __init__(self):
        self.state = "unavailable"  # checked, shallow or unavailable
        self.commits = 0
        self.seen = set()
        self.folders = set()  # every folder of a path in `seen`
        self.names = {}  # file name -> set of paths that had it
        self.renamed = {}  # old path -> (new path, commit)
        self.removed = {}  # path -> commit that deleted it (the newest)
        self.touches = {}  # cited path or folder -> [commit, ...], newest first
        self.tracked = None  # files in the index now, relative to the project
        self.tracked_names = {}  # file name -> tracked paths with it
        self.tracked_stems = set()  # tracked file names without their extensions


def git_output(project, *args):
    """git's stdout in project, or None when it fails or gives no answer in time."""
    code, out = GIT.git_bytes(project, *args, timeout=GIT_SECONDS)
    return out if code == 0 else None


def tracked_files(project):
    """The files git tracks here, relative to the project; None outside a repository."""
    listed = git_output(project, "ls-files", "-z")
    if listed is None:
        return None
    return set(n for n in listed.decode("utf-8", "replace").split("\0") if n)


def read_history(project, wanted):
    """History of the branch checked out at `project`, keeping the commits of `wanted` paths."""
    history = History()
    shallow = git_output(project, "rev-parse", "--is-shallow-repository")
    log = git_output(project, "log", "--first-parent", "-m", "-M", "--relative", "--name-status",
                     "-z", "--format=%x1e%h%x1f%cI%x1f%s", *GIT.NO_DIFF_PROGRAMS)
    if log is None:
        return history
    history.state = "shallow" if shallow and shallow.strip() == b"true" else "checked"
    for record in log.decode("utf-8", "replace").split("\x1e")[1:]:
        header, _, body = record.partition("\0")
        fields = header.split("\x1f")
        if len(fields) < 3:
            continue
        history.commits += 1
        commit = (fields[0], fields[1][:10], fields[2])
        parts = body.lstrip("\n").split("\0")
        touched = []
        at = 0
        while at < len(parts) and parts[at]:
            status = parts[at]
            if status[:1] in ("R", "C") and at + 2 < len(parts):
                old, new = parts[at + 1], parts[at + 2]
                if status[:1] == "R":
                    history.renamed.setdefault(old, (new, commit))
                touched += [old, new]
                at += 3
                continue
            path = parts[at + 1] if at + 1 < len(parts) else ""
            if status[:1] == "D":
                history.removed.setdefault(path, commit)
            touched.append(path)
            at += 2
        touched_set = set(touched)
        for path in touched:
            if path and path not in history.seen:
                history.seen.add(path)
                history.folders.update(folders_and_path(path)[1:])
                history.names.setdefault(path.rsplit("/", 1)[-1], set()).add(path)
            for cited in folders_and_path(path):
                if cited in wanted:
                    history.touches.setdefault(cited, []).append((commit, touched_set))
    return history


def folders_and_path(name):
    parts = name.split("/")
    return ["/".join(parts[:end]) for end in range(len(parts), 0, -1)] if name else []


def ignored_paths(project, paths, history):
    """The paths git ignores here: local files, never the repository's to miss. A folder is
    asked about with its trailing `/`, which a folder's pattern (`data/`) needs when the folder
    is not there to look at."""
    if not paths:
        return set()
    asked = [p + "/" if p in history.folders and p not in history.seen else p for p in paths]
    _, out = GIT.git_bytes(project, "check-ignore", "--no-index", "-z", "--stdin",
                           stdin="\0".join(asked).encode("utf-8"), timeout=GIT_SECONDS)
    return set(n.rstrip("/") for n in out.decode("utf-8", "replace").split("\0") if n)


def resolve(project, citation, history):
    """(project-relative path that exists now, or None; path git knew, or None). Lookups go by
    file name, so the cost does not grow with the number of files times the citations."""
    for candidate in citation.candidates:
        if os.path.exists(os.path.join(project, candidate)):
            return candidate, None
    written = citation.lookup.rstrip("/")
    name = written.rsplit("/", 1)[-1]
    ending = "/" + written
    now = [p for p in history.tracked_names.get(name, ()) if citation.bare or ("/" + p).endswith(ending)]
    if now:  # a bare name, or a path written relative to another folder, that git tracks now
        return (now[0] if len(now) == 1 else None), None
    if citation.bare:
        if name.rsplit(".", 1)[0] in history.tracked_stems:
            return None, None  # `extract.js` beside `src/extract.ts`: that file, or its build
        known = history.names.get(name, set())
        return None, (next(iter(known)) if len(known) == 1 else None)
    for candidate in citation.candidates:
        if candidate in history.seen or candidate in history.folders:
            return None, candidate
    known = [p for p in history.names.get(name, ()) if ("/" + p).endswith(ending)]
    return None, (known[0] if len(known) == 1 else None)


def what_became_of(project, path, history):
    """(`renamed to X in <commit>` or `deleted in <commit>`, the new path or None, the commit or
    None): the verdicts' fate_of, told for a person."""
    fate = BUDGET.fate_of(path, history.renamed, history.removed,
                            lambda name: os.path.exists(os.path.join(project, name)))
    if fate is None:
        return "gone from the working tree", None, None
    new_path, commit = fate
    if new_path:
        return "renamed to `%s` in %s on %s" % (new_path, commit[0], commit[1]), new_path, commit
    return "deleted in %s on %s, \"%s\"" % (commit[0], commit[1], commit[2]), None, commit


def check_citations(project, citations, history, findings):
    """Missing paths: cited, known to git, and gone. Returns {citation: existing path}."""
    existing = {}
    candidates = []
    for citation in citations:
        now, known = resolve(project, citation, history)
        if now:
            existing[citation] = now
        elif known:
            candidates.append((citation, known))
    gone = [(citation, known) for citation, known in candidates
            if not records_change(citation, existing) and not rejects(citation)
            and not (citation.bare and names_another_place(citation))]
    ignored = ignored_paths(project, sorted(set(known for _, known in gone)), history)
    for citation, known in gone:
        if known in ignored:
            continue
        became, new_path, commit = what_became_of(project, known, history)
        if commit and citation.written_on and commit[1] <= citation.written_on:
            continue  # written on or after the day the path went: it does not name that path
        if commit and citation.written_on and narrates_work(citation):
            continue  # work told on its day, before the path went: true of that day
        findings.add("missing-path", citation.memory, citation.line,
                     "%s `%s`, which git knew as `%s`: %s" % (
                         "links" if citation.link else "cites", citation.written, known, became),
                     "update the fact to `%s`" % new_path if new_path else
                     "update the fact to the current path, or delete it if it no longer holds",
                     subject=("path", known))
    return existing


def check_dated_facts(project, folder, citations, existing, history, findings):
    """Possibly stale: a dated fact whose existing cited path changed on the branch after the
    fact's date, by a commit that did not also touch the memory file citing it. A memory file
    cited from another (`see `memory/reference/hosts.md``) is where to read: it is checked on
    its own, and an edit to it makes nothing stale in the file that points to it."""
    dated = [c for c in citations if c.date and c in existing]
    churning = set()
    memory_folder = inside_project(project, folder)
    for citation in dated:
        path = existing[citation]
        if os.path.isdir(os.path.join(project, path)):
            continue  # a folder is a place: stale when gone or renamed, not when its files change
        if memory_folder and (path + "/").startswith(memory_folder.rstrip("/") + "/"):
            continue  # another memory file: a pointer within the memory
        if narrates_work(citation) or points_to_a_document(citation) or rejects(citation) or \
                heading_level(citation.memory.lines[citation.line - 1]):
            continue  # history, a pointer, or a heading: none says what the file holds now
        commits = history.touches.get(path, [])
        if history.commits >= CHURN_MIN_COMMITS and len(commits) >= CHURN_SHARE * history.commits:
            churning.add(path)
            continue
        memory = inside_project(project, citation.memory.path)
        named = commits_named_in(citation.memory.lines[citation.line - 1])
        later = [commit for commit, touched in commits
                 if commit[1] > citation.date and memory not in touched
                 and not is_named(commit, named)]
        if not later:
            continue
        newest = max(later, key=lambda commit: commit[1])
        findings.add("possibly-stale", citation.memory, citation.line,
                     "a fact dated %s cites `%s`, which has changed since: %d commit(s), the "
                     "newest %s on %s, \"%s\"" % (citation.date, citation.written, len(later),
                                                 newest[0], newest[1], newest[2]),
                     "check the fact against the file (take numbers from the artefact, not "
                     "from memory), then correct it and its date",
                     subject=("path", path, citation.date))
    return {"dated_facts": len(dated), "churning": sorted(churning)}


def narrates_work(citation):
    """Whether the clause of the citation tells work done (`added`, `fixed`, `updated`, `was`,
    `removed` …, or a value changed, `9.0→7.0`) rather than how things are: narration is true of
    its day, and later commits do not make it stale. A path the work led to (`moved the loop into `src/worker.py``) is what
    the line says is there now, and is still checked."""
    words_line, start, end, words, before = citation_clause(citation)
    if leads_to(before, words_line[start:citation.span[0]]):
        return False
    return citation.done or any(word in NARRATION_WORDS or word in CHANGED_WORDS for _, word in words) or any(
        mark in words_line[start:end] for mark in NARRATION_MARKS_WITHOUT_SPACES) or bool(
        patterns()["value-change"].search(words_line, start, end))


def points_to_a_document(citation):
    """Whether the line only points to a document (`see `docs/design.md``, `Spec: …`, `详见 …`):
    it says where to read, not what the document says, so a change to it makes nothing stale."""
    if not citation.lookup.lower().endswith(DOCUMENT_EXTENSIONS):
        return False
    stem = citation.lookup.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    if patterns()["name-word"].split(stem)[-1] in LOG_NAMES:
        return True  # a log grows by design: a line that cites one says where to read
    line = citation.memory.lines[citation.line - 1]
    words_line = masked(line, citation.spans)
    start, end = clause_around(words_line, citation.span[0])
    clause = words_line[start:end].lower()
    heading = section_heading(citation.memory, citation.line).lower()
    return any(m.group(0).lower() in POINTER_WORDS
               for m in patterns()["word"].finditer(clause)) or any(
        mark in clause for mark in POINTER_MARKS_WITHOUT_SPACES) or any(
        m.group(0) in POINTER_HEADING_WORDS for m in patterns()["word"].finditer(heading))


def section_heading(memory, number):
    """The text of the nearest heading above line `number`, outside fenced code; '' if none.
    Worked out once a file."""
    if memory.headings is None:
        memory.headings = []
        current = ""
        for at, line in enumerate(memory.lines, start=1):
            if at not in memory.fenced_lines and heading_level(line):
                current = line.strip().lstrip("#").strip()
            memory.headings.append(current)
    return memory.headings[number - 1] if 0 < number <= len(memory.headings) else ""


def commits_named_in(line):
    """The pull requests (`#22`) and commits (`b8b1eec`) a line names: the work it records."""
    return set(m.group(0).lower() for m in patterns()["named-commit"].finditer(line))


def is_named(commit, named):
    """Whether a commit is one the fact's line names: its hash, or a pull request its subject
    merges or mentions (`Merge pull request #22 from …`)."""
    if not named:
        return False
    subject = commit[2].lower()
    return any(name.startswith("#") and (name + " ") in (subject + " ") or
               (not name.startswith("#") and commit[0].lower().startswith(name[:len(commit[0])]))
               for name in named)


# --- the auto-memory cap ------------------------------------------------------------------------

def auto_memory_report(project, env, findings):
    path = BUDGET.auto_memory_index(project, env)
    if path is None:
        return None
    text = BUDGET.read_text(path) or ""
    load = BUDGET.auto_memory_load(text)
    shown = BUDGET.home_shown(path, env)
    if load["lost_lines"]:
        findings.add("auto-memory-overflow", shown, load["lost"][0][0],
                     "%d of its %d counted lines never load (the harness reads %s), from %s"
                     % (load["lost_lines"], load["lines"], BUDGET.overflow_cause(load),
                        BUDGET.named_list(BUDGET.first_lost_entries(load["lost"]), 3)),
                     "move detail into topic files and keep one short line per entry; the lines "
                     "that fall off are usually the newest", lines=text.split("\n"))
    summary = dict((key, value) for key, value in load.items() if key != "lost")
    summary["file"] = shown
    summary["first_lost"] = BUDGET.first_lost_entries(load["lost"])
    return summary


# --- what loads before the first turn ----------------------------------------------------------

def estimated_tokens(characters):
    return -(-characters // CHARACTERS_PER_TOKEN)


def load_part(part, path, text, env, project, cap=None, over=False, note=None):
    characters = len(text)
    return {"part": part, "file": display_path(path, env, project), "characters": characters,
            "tokens": estimated_tokens(characters), "cap": cap, "over": bool(over), "note": note}


def display_path(path, env, project):
    if path is None:
        return None
    shown = BUDGET.shown_path(project, path)
    return shown if shown != path else BUDGET.home_shown(path, env)


def folders_from_root(project):
    """The project folder and every folder above it, the filesystem root first."""
    folders = []
    folder = os.path.abspath(project)
    while True:
        folders.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return folders[::-1]
        folder = parent


def instruction_chain(project, env):
    """(part, path) of every instruction file that loads at launch, in the harness's order."""
    chain = [("managed policy instructions", BUDGET.managed_instruction_file())]
    config = BUDGET.user_config_dir(env)
    if config:
        chain.append(("user instructions", os.path.join(config, "CLAUDE.md")))
    for folder in folders_from_root(project):
        where = "project" if folder == os.path.abspath(project) else "parent folder"
        chain.append(("%s instructions" % where, os.path.join(folder, "CLAUDE.md")))
        chain.append(("%s instructions" % where, os.path.join(folder, ".claude", "CLAUDE.md")))
        chain.append(("%s local instructions" % where, os.path.join(folder, "CLAUDE.local.md")))
    return chain


def imports_of(path, text, env):
    """Files a CLAUDE.md imports with `@path`: relative to the importing file, `@~/` from home,
    or absolute; never inside a code span or a fenced block. Only files that exist count."""
    found = []
    fenced = False
    home = env.get("HOME") or os.path.expanduser("~")
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = patterns()["code-span"].sub(" ", line)
        for match in patterns()["import"].finditer(line):
            target = import_target(match.group(1), os.path.dirname(path), home)
            if target:
                found.append(target)
    return found


def import_target(written, folder, home):
    candidate = written
    while candidate:
        if candidate.startswith("~/"):
            path = os.path.join(home, candidate[2:])
        else:
            path = os.path.join(folder, candidate)
        if BUDGET.regular_file_size(path) is not None:
            return os.path.normpath(path)
        stripped = candidate.rstrip(".,;:!?)]}\"'")
        if stripped == candidate:
            return None
        candidate = stripped
    return None


def add_with_imports(parts, seen, part, path, env, project, hops=0, via=None, cap=None, over=False):
    """Add a file that loads, then what it imports, to at most MAX_IMPORT_HOPS hops; each file once."""
    key = os.path.normcase(os.path.realpath(path))
    text = None if key in seen else BUDGET.read_text(path)
    if text is None:
        return
    seen.add(key)
    note = "hop %d, from %s" % (hops, display_path(via, env, project)) if via else None
    parts.append(load_part(part, path, text, env, project, cap, over, note))
    if hops >= MAX_IMPORT_HOPS:
        return
    for target in imports_of(path, text, env):
        add_with_imports(parts, seen, "import", target, env, project, hops + 1, path)


def rules_without_paths(folder):
    """Every `.md` under a rules folder, recursively, whose frontmatter has no `paths:`: those
    load at launch; the others wait for a matching file to be read."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            text = BUDGET.read_text(path) if name.endswith(".md") else None
            if text is not None and not has_paths_frontmatter(text):
                found.append((path, text))
    return found


def has_paths_frontmatter(text):
    end = BUDGET.frontmatter_end(text)
    return any(line.strip().startswith("paths:") for line in text[:end].split("\n")[1:])


def session_start_preview(project):
    """What this project's session-start hook would inject now, from hooks/ beside this file,
    loaded by path; with nothing pruned or recorded, and no bytecode written beside the hooks.
    (None, reason) when it cannot be previewed."""
    path = os.path.join(HOOKS, "session-start.py")
    if not os.path.isfile(path):
        return None, "session-start.py is not in %s" % HOOKS
    # The siblings the preview loads must not write bytecode beside the hooks either.
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        module = load_hook("session-start.py", "mcp_session_start_preview")
        return module.preview_injection(os.path.abspath(project)), None
    except Exception as error:  # a broken sibling costs only its row
        return None, "preview failed: %s" % error
    finally:
        sys.dont_write_bytecode = writes_bytecode


def session_start_marks(project):
    """The marks this project's session start shows (hooks/ beside this file, loaded by path;
    its reads of git are the hooks' own); None when it cannot say."""
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        module = load_hook("session-start.py", "mcp_session_start_marks")
        spoke = module.the_loader()
        shared = spoke["load_sibling"]("context-budget.py")
        git, guard = module.the_git(spoke, shared, os.path.abspath(project),
                                    __import__("time").monotonic())
        return git.memory_marks(guard, guard.start_reads())
    except Exception:  # a broken sibling costs only the column
        return None
    finally:
        sys.dont_write_bytecode = writes_bytecode


def start_of_session_load(project, env, findings, auto, preview=True, installed=None, index=None):
    parts, seen = [], set()
    budget_kb = BUDGET.number_setting(env, "MCP_CLAUDE_KB", 8)
    measured = os.path.normcase(os.path.realpath(BUDGET.instruction_file(project, env)))
    for part, path in instruction_chain(project, env):
        size = BUDGET.regular_file_size(path)
        if size is None:
            continue
        is_measured = os.path.normcase(os.path.realpath(path)) == measured
        cap = "protocol budget %d KB, fires at %s bytes" % (
            budget_kb, format((budget_kb + 1) * 1024, ",")) if is_measured else None
        add_with_imports(parts, seen, part, path, env, project, cap=cap,
                         over=is_measured and size // 1024 > budget_kb)
    config = BUDGET.user_config_dir(env)
    rule_folders = [("user rule", os.path.join(config, "rules"))] if config else []
    rule_folders.append(("project rule", os.path.join(project, ".claude", "rules")))
    for part, folder in rule_folders:
        for path, text in rules_without_paths(folder):
            key = os.path.normcase(os.path.realpath(path))
            if key not in seen:
                seen.add(key)
                parts.append(load_part(part, path, text, env, project))
    if auto:
        parts.append({
            "part": "auto memory, the part that loads", "file": auto["file"],
            "characters": auto["loaded_characters"],
            "tokens": estimated_tokens(auto["loaded_characters"]),
            "cap": "harness loads %d lines / %s bytes" % (BUDGET.AUTO_MEMORY_LINES,
                                                        format(BUDGET.AUTO_MEMORY_BYTES, ",")),
            "over": auto["lost_lines"] > 0, "note": None})
    if preview:
        if installed is None:
            installed = os.path.isfile(os.path.join(project, ".claude", "hooks", "session-start.py"))
        parts.append(injection_part(project, env, findings, installed, index))
    total = sum(part["characters"] for part in parts)
    return {
        "estimate": "tokens = characters / %d, rounded up; a rough rule for English text and "
                    "code, not the model's tokenizer" % CHARACTERS_PER_TOKEN,
        "parts": parts,
        "total": {"characters": total, "tokens": estimated_tokens(total)},
    }


def injection_part(project, env, findings, installed=True, index=None):
    text, problem = session_start_preview(project)
    cap = "harness hook limit %s characters" % format(INJECTION_LIMIT, ",")
    part = "session-start injection" if installed else \
        "session-start injection, hypothetical: the protocol is not installed here"
    if text is None:
        return load_part(part, None, "", env, project, cap, note=problem)
    # session-start cuts an injection that would pass the limit and marks the cut this way
    cut = "[cut here: the injection limit is" in text
    note = None
    if cut:
        where = index_cut_line(text, index)
        note = "the index is cut before its line %d" % where if where else None
    if cut and installed:  # where the protocol is not installed, nothing is cut today: the row says it
        findings.add("injection-cut", "session-start injection", 1,
                     "the session-start injection would pass the harness's %s-character limit, "
                     "so it is cut and the agent sees only part of the memory index%s"
                     % (format(INJECTION_LIMIT, ","), " (%s)" % note if note else ""),
                     "shrink the memory index with /dream")
    return load_part(part, None, text, env, project, cap, cut, note)


def index_cut_line(text, index):
    """The index's first line the cut injection leaves out, or None. The injection shows the
    index's visible lines in order under its heading, so the count shown gives the line."""
    if index is None:
        return None
    lines = text.split("\n")
    heading = next((n for n, line in enumerate(lines) if line.startswith("## Memory index (")), None)
    if heading is None:
        return None
    notice = "read %s in full]" % index.shown
    shown = 0
    for line in lines[heading + 1:]:
        if line.startswith("[cut here:") and line.endswith(notice):
            visible = BUDGET.visible_lines(index.text, index.comments)
            return visible[shown][0] if shown < len(visible) else None
        shown += 1
    return None


# --- what a merge leaves behind --------------------------------------------------------------
#
# The team's memory merges in git (spec §4.5). A committed .gitattributes gives it git's union
# merge, so a merge in a clone never stops in memory/: where two branches changed the same line it
# keeps both versions, one under the other. A forge ignores that attribute, as does a checkout made
# before it, and a conflict resolved in haste leaves its markers behind. These checks find what
# either leaves: conflict markers, a note's title twice, a stamp or a frontmatter key twice, the
# same line twice in one file, and two versions of one fact side by side. They read the index,
# the memory files beside it and the notes in its topic folders (memory/<folder>/<note>.md).

MERGE_LEFTOVERS = {
    "conflict-markers": "broken",  # a merge stopped here and nobody finished it
    "doubled-title": "warning",    # two branches' notes of one name, merged into one file
    "doubled-stamp": "warning",    # a stamp or frontmatter key once per branch
    "doubled-line": "warning",     # the same fact or pointer twice in one file
    "diverged-fact": "warning",    # two branches' versions of one fact, both kept
    "stamped-format": "advice",    # lines every save rewrites: saves on two branches collide
}
SEVERITY.update(MERGE_LEFTOVERS)
FACT_WORDS_AT_LEAST = 4  # a shorter list item ("- None.") may well repeat on purpose
# The .gitattributes block install.py writes, whose first line tells a project it set up.
GITATTRIBUTES_TEMPLATE = os.path.join(ROOT, "templates", "gitattributes")


def merge_leftovers(project, index, topics, notes, findings):
    """Everything a merge left in the memory, as findings; and a memory still in the format that
    makes merges collide."""
    stamped_format(project, index, topics + notes, findings)
    memories = ([index] if index else []) + topics + notes
    touching = [m for m in memories if facts_side_by_side(m) and not m.log and not stamped(m)]
    titled = [m for m in notes if len(titles(m)) > 1]
    union = union_merged(project, touching + titled)  # git is asked only about files that need it
    for memory in memories:
        conflict_markers(memory, findings)
        doubled_stamps(memory, findings)
        if not memory.log:  # a log may well record one change twice
            doubled_lines(memory, findings, memory is index)
        if memory.path in union:
            if memory.note:
                doubled_title(memory, findings)
            diverged_facts(memory, findings)


def union_merged(project, memories):
    """The paths of the memory files git merges with its union driver here: where the team
    format's .gitattributes rule applies. Empty outside git, or when git cannot say."""
    relative = {}
    for memory in memories:
        shown = os.path.relpath(memory.path, project)
        if not shown.startswith(os.pardir):
            relative[shown.replace(os.sep, "/")] = memory.path
    if not relative:
        return set()
    listed = git_output(project, "check-attr", "-z", "merge", "--", *sorted(relative))
    if listed is None:
        return set()
    fields = listed.decode("utf-8", "replace").split("\0")
    return set(relative[fields[n]] for n in range(0, len(fields) - 2, 3)
               if fields[n + 2] == "union" and fields[n] in relative)


def conflict_markers(memory, findings):
    """Lines git writes around a conflict it could not merge. A line of seven `=` alone is also a
    heading's underline, so it counts only in a file that holds an opening or closing marker."""
    marked = BUDGET.marker_lines(memory.lines, memory.fenced_lines)
    for number in marked:
        findings.add("conflict-markers", memory, number,
                     "holds the markers of a merge conflict nobody finished (%s): whatever "
                     "reads it reads both sides and the markers" % BUDGET.named_list(
                         "line %d" % n for n in marked),
                     "keep what is true of both sides, delete the marker lines, and commit",
                     subject="markers")


def doubled_stamps(memory, findings):
    """A stamp (`Last updated`, `Last dream`) twice, or a frontmatter key twice: each branch
    wrote its own, and a union merge kept both."""
    stamps = []
    for start, end in memory.comments:
        if is_stamp(memory.text[start + 4:end - 3]):
            stamps.append(memory.line_of(start))
    if len(stamps) > 1:
        for number in stamps[1:]:
            findings.add("doubled-stamp", memory, number,
                         "holds %d stamps where one belongs (lines %s): a merge kept each "
                         "branch's" % (len(stamps), ", ".join(str(n) for n in stamps)),
                         "keep the newest date; the team format needs no stamp at all, since git "
                         "dates every change (`git log -1 --format=%cs -- <file>`)",
                         subject="stamps")
    seen = {}
    end = BUDGET.frontmatter_end(memory.text)
    for number, line in enumerate(memory.text[:end].split("\n")[1:-2], start=2):
        key = line.partition(":")[0]
        if not line[:1].strip() or ":" not in line or key.lstrip().startswith("#"):
            continue
        if key in seen:
            findings.add("doubled-stamp", memory, number,
                         "gives the frontmatter key `%s` twice (lines %d and %d): a merge kept "
                         "each branch's value" % (key, seen[key], number),
                         "keep the one value that is true", subject=("key", key))
        seen.setdefault(key, number)


def doubled_lines(memory, findings, is_index):
    """The same list item twice in one file, as a union merge leaves a line two branches both
    added, or a conflict resolved by keeping both sides: in one list, since both copies come
    from one hunk; a dated fact anywhere in the file. The same step in two lists (`- Submit the
    payload` under two `**Detection:**` labels) is a document's repetition, not a merge's. In
    the index, a pointer line twice is duplicate-pointer's finding."""
    first = {}
    for number, line, block in list_items_by_block(memory):
        words = " ".join(line.split())
        if len(words.split()) < FACT_WORDS_AT_LEAST + 1 or (is_index and is_pointer_line(line)):
            continue
        key = words if BUDGET.is_dated_fact(line.lstrip()) else (block, words)
        if key in first:
            findings.add("doubled-line", memory, number,
                         "says the same thing twice (line %d and line %d): \"%s\""
                         % (first[key], number, BUDGET.entry_name(line)),
                         "delete the second copy", subject=("line", words))
        else:
            first[key] = number


def list_items_by_block(memory):
    """(line number, line, list) of each list item outside fenced code, where a list is named by
    its number in the file and, for a nested item, the line of the item it is nested under: a
    sub-item belongs to its own item's list, so the same step under two items (two flows of
    one document) is in two lists. A list goes on across blank lines (the team format keeps
    facts a blank line apart), indented lines and fenced code within it; a heading, or any other
    line at the margin, ends it."""
    items = []
    block = 0
    parents = []  # (indent, line number) of the open items, outermost first
    for number, line in enumerate(memory.lines, start=1):
        indented = line[:1] in (" ", "\t")
        if number in memory.fenced_lines:
            block += 0 if indented else 1
        elif patterns()["list-item"].match(line):
            indent = len(line) - len(line.lstrip())
            while parents and parents[-1][0] >= indent:
                parents.pop()
            items.append((number, line, (block, parents[-1][1] if parents else None)))
            parents.append((indent, number))
        elif line.strip() and not indented:
            block += 1
            parents = []
    return items


def doubled_title(memory, findings):
    """A note with a second `# ` title, in a file git merges with the union driver: two branches
    each added a note of this name, and the union merge put both in one file. Where git does
    not merge by union, that merge stops with markers (conflict-markers), so two `# ` lines are
    a document's sections, as a report that a remediation was appended to keeps them."""
    found = titles(memory)
    if len(found) > 1:
        findings.add("doubled-title", memory, found[1],
                     "has %d titles (lines %s): two notes of this name, written on two branches, "
                     "were merged into one file" % (len(found), ", ".join(str(n) for n in found)),
                     "split it into two notes, or fold them into one with one title")


def titles(memory):
    """The numbers of the lines outside code samples that open with a `# ` title."""
    return BUDGET.title_lines(memory.lines, memory.fenced_lines)


def stamped_format(project, index, topics, findings):
    """Advice, on the index, when the memory is still in the stamped format in a project where
    this release set up the team format (its .gitattributes block): a `Last dream` stamp or an
    Active Context in the index, or a `Last updated` stamp in a topic file or a note. Each is a
    line every save rewrites, so two developers' saves on two branches collide there in git; the memory
    works, and `install.py --update` moves it without losing a line. A stamp is what that move
    takes out (memory_format.py): a comment that says more than a date is left alone. A memory
    kept without this release's install is not asked to move."""
    if index is None or not team_format_set_up(project):
        return
    parts = []
    stamp_lines = stamp_line_numbers(index)
    context_lines = [number for number, line in enumerate(index.lines, start=1)
                     if FORMAT.ACTIVE_CONTEXT.match(line)]
    if stamp_lines:
        parts.append("a `Last dream` line")
    if context_lines:
        parts.append("an Active Context")
    files = [topic for topic in topics if stamped(topic)]
    if files:
        parts.append("%d file(s) with a `Last updated` line" % len(files))
    if parts:
        findings.add("stamped-format", index, min(stamp_lines + context_lines or [1]),
                     "is in the stamped format: %s, which every save rewrites, so two "
                     "developers' saves on two branches collide in git"
                     % BUDGET.named_list(parts),
                     "`install.py --update` moves the memory to the team format without losing "
                     "a line (spec §4.5)")


def team_format_set_up(project):
    """Whether the project's .gitattributes holds the block this release's installer writes."""
    path = os.path.join(project, ".gitattributes")
    if os.path.islink(path):
        return False
    text = BUDGET.read_text(path, 64 * 1024)
    mark = (BUDGET.read_text(GITATTRIBUTES_TEMPLATE) or "").split("\n")[0].strip()
    return bool(text and mark) and mark in text


def stamp_line_numbers(memory):
    return [number for number, line in enumerate(memory.lines, start=1)
            if number not in memory.fenced_lines and FORMAT.is_stamp(line)]


def stamped(memory):
    """A file still in the stamped format, which kept its facts on adjacent lines: what the
    move to the team format (install.py --update) spaces, not what a merge left."""
    return bool(stamp_line_numbers(memory))


def facts_side_by_side(memory):
    """(line, line, whether one is a deletion) of each two facts that touch outside fenced code
    (the hooks' facts_side_by_side)."""
    return BUDGET.facts_side_by_side(memory.lines, memory.fenced_lines)


def diverged_facts(memory, findings):
    """Two facts that touch, in a file merged with the union driver: the team format keeps facts
    a blank line apart, and corrects or deletes a fact by replacing its line where it stands, so
    two facts that touch are the two versions a union merge keeps when two branches changed the
    same fact, or deleted it on one branch and changed it on the other."""
    for first, second, deletion in facts_side_by_side(memory):
        start, end = BUDGET.run_of_facts(memory.lines, first, second, memory.fenced_lines)
        if (start, end) != (first, second):
            findings.add("diverged-fact", memory, second,
                         "holds two facts that touch (lines %d and %d) in a run of facts (lines "
                         "%d-%d): where two branches changed neighbouring facts, the union merge "
                         "keeps one branch's versions of them all, then the other's"
                         % (first, second, start, end),
                         "compare the facts of lines %d-%d and keep one version of each (the "
                         "`(deleted)` line or the fact, for a deletion)" % (start, end),
                         subject=("run", start))
            continue
        if deletion:
            findings.add("diverged-fact", memory, second,
                         "holds a deleted fact next to a version of it (lines %d and %d): one "
                         "branch deleted the fact while another changed it, and the union merge "
                         "kept both" % (first, second),
                         "keep the deletion (the `(deleted)` line) or the fact, not both",
                         subject="deleted facts")
            continue
        findings.add("diverged-fact", memory, second,
                     "holds two dated facts on adjacent lines (%d and %d): where two branches "
                     "changed the same fact, the union merge keeps both versions this way"
                     % (first, second),
                     "keep the version that is true and delete the other; if they are two "
                     "facts, put a blank line between them, so their corrections merge apart",
                     subject="facts")


# --- the report ---------------------------------------------------------------------------------

def memory_health(project, env, preview=True, installed=None):
    """The full health report of a project's memory, as a JSON-able dict. `preview=False` leaves
    out the session-start injection (which runs git) from the load table; `installed=False`
    marks that injection as what the protocol would add, not what loads today."""
    project = os.path.abspath(project)
    findings = Findings(checks_opted_in(env))
    env, index_path, files = read_memory(project, env, findings)
    folder = os.path.dirname(index_path)
    index, topics, notes = files.index, files.topics, files.notes
    index_summary = lint_index(project, index, folder, topics, notes, findings) if index else None
    citations = []
    for memory in ([index] if index else []) + topics + notes:
        if not memory.log:  # a log's paths are history: nothing to check against git
            citations += citations_in(project, memory, memory is index)
    history = history_for(project, citations)
    lint_topics(project, index, topics + notes, findings, history.tracked, env)
    merge_leftovers(project, index, topics, notes, findings)
    existing = check_citations(project, citations, history, findings)
    facts = check_dated_facts(project, folder, citations, existing, history, findings)
    auto = auto_memory_report(project, env, findings)
    load = start_of_session_load(project, env, findings, auto, preview, installed, index)
    index_size = BUDGET.regular_file_size(index_path)
    index_shown = BUDGET.shown_path(project, index_path)
    marks = session_start_marks(project) if preview else None
    for finding in findings.items:
        finding["at_session_start"] = reported_at_session_start(finding, index_size, env,
                                                                index_shown, marks)
    items = sorted(findings.items, key=finding_order)
    counts = dict((severity, sum(1 for f in items if f["severity"] == severity))
                  for severity in SEVERITIES)
    status = next((s for s in ("broken", "over", "warning") if counts[s]), "ok")
    return {
        "project": project,
        "status": status,
        "counts": counts,
        "findings": items,
        "index": index_summary,
        "topic_files": len(topics),
        "notes": len(notes),
        "read_in_part": files.read_in_part,
        "session_logs": [{"file": m.shown, "reason": m.log} for m in topics + notes if m.log],
        "citations": {"paths": len(citations), "dated_facts": facts["dated_facts"],
                      "git": history.state if citations else "not needed",
                      "commits": history.commits, "churning": facts["churning"]},
        "auto_memory": auto,
        "load": load,
    }


def read_memory(project, env, findings):
    """(the environment the hooks trust, the index's path, its MemoryFolder with each topic
    file's and note's session-log reason): the memory as every part of the report reads it."""
    env = environment_the_hooks_trust(project, env, findings)
    index_path = BUDGET.project_path(project, env, "MCP_MEMORY_INDEX", BUDGET.DEFAULT_INDEX)
    files = memory_files(project, env, os.path.dirname(index_path), index_path, findings)
    for memory in files.topics + files.notes:
        memory.log = session_log_reason(memory)
    return env, index_path, files


def merge_leftover_findings(project, env):
    """The findings of what a merge left in the memory (MERGE_LEFTOVERS), read as the full report
    reads it, without the rest of the report: for the team benchmark."""
    project = os.path.abspath(project)
    findings = Findings()
    _, _, files = read_memory(project, env, findings)
    merge_leftovers(project, files.index, files.topics, files.notes, findings)
    return [finding for finding in findings.items if finding["check"] in MERGE_LEFTOVERS]


def history_for(project, citations):
    """The one history pass, keeping commits for every path a citation may mean: as written,
    or a tracked file it names relative to another folder."""
    tracked = tracked_files(project)
    names = {}
    for path in tracked or ():
        names.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    wanted = set()
    for citation in citations:
        wanted.update(citation.candidates)
        written = citation.lookup.rstrip("/")
        wanted.update(p for p in names.get(written.rsplit("/", 1)[-1], ())
                      if ("/" + p).endswith("/" + written))
    history = read_history(project, wanted)
    history.tracked, history.tracked_names = tracked, names
    history.tracked_stems = set(name.rsplit(".", 1)[0] for name in names)
    return history


def reported_at_session_start(finding, index_size, env, index_shown, marks=None):
    """Whether session start shows this finding too. The start-time checks read the index's
    first INDEX_HEAD_BYTES, and look for dead pointers only within the index budget's lines.
    Session start refuses the index and the path settings the report does not read, and names
    them. Its marks (`marks`, as session_start_marks gives them) cover a leftover or a missing
    path they name at the finding's file and line (conflict markers anywhere in the file)."""
    check = finding["check"]
    if check in MARKED_AT_START:
        return any(mark["file"] == finding["file"] and mark["kind"] in MARKED_AT_START[check] and
                   (check == "conflict-markers" or mark["line"] in finding["lines"])
                   for mark in marks or ())
    if check == "not-read":
        return finding["file"] == index_shown or finding["file"] in BUDGET.PROJECT_SETTINGS_FILES
    whole_index_read = index_size is not None and index_size <= BUDGET.INDEX_HEAD_BYTES
    if check == "dead-pointer":
        return whole_index_read and finding["line"] <= BUDGET.number_setting(env, "MCP_MEM_LINES", 80)
    if check == "unclosed-comment":
        return whole_index_read
    return check == "auto-memory-overflow"


# The findings session start's marks cover, and the kinds of mark that cover each.
MARKED_AT_START = {"conflict-markers": ("markers",), "doubled-title": ("two-notes",),
                   "diverged-fact": ("versions", "deleted-changed"), "missing-path": ("gone",)}
SEVERITY_ORDER = dict((severity, rank) for rank, severity in enumerate(SEVERITIES))


def finding_order(finding):
    return (SEVERITY_ORDER[finding["severity"]], finding["file"], finding["line"], finding["check"])


def format_health(health, at_most=BUDGET.NAMED_AT_MOST):
    """The report for a person: a heading with the same counts as the JSON, then the findings
    grouped by file (worst file first), at most `at_most` per file, then the load table."""
    lines = []
    shown = health["findings"]
    if shown:
        lines.append("## Memory health — %s" % describe_counts(health["counts"]))
        if health["index"]:
            lines.append("  %s" % describe_index(health["index"], health["topic_files"],
                                                 health["notes"]))
        by_file = {}
        for finding in shown:
            by_file.setdefault(finding["file"], []).append(finding)
        for name, group in by_file.items():
            lines.append("  %s (%s)" % (name, describe_counts(dict(
                (s, sum(1 for f in group if f["severity"] == s)) for s in SEVERITIES))))
            for finding in group[:at_most]:
                lines.append("    %-7s line %s  %s; %s" % (
                    finding["severity"].upper(), describe_lines(finding["lines"]),
                    finding["message"], finding["repair"]))
            if len(group) > at_most:
                lines.append("    ... and %d more in this file (--json lists them all; "
                             "`mcp-health: ignore-file` in a file silences it whole)"
                             % (len(group) - at_most))
    if health["read_in_part"]:
        lines.append("## Memory health: %s held more than %d entries; the first %d of each "
                     "were checked, as session start lists them"
                     % (BUDGET.named_list(health["read_in_part"]), BUDGET.ENTRIES_AT_MOST,
                        BUDGET.ENTRIES_AT_MOST))
    if health["citations"]["git"] == "shallow":
        lines.append("## Memory health: git history is shallow, so paths and changes older than "
                     "its first commit are not known (`git fetch --unshallow` to check them)")
    lines += format_load(health["load"])
    return "\n".join(lines) + "\n"


def describe_counts(counts):
    words = {"broken": "broken", "over": "over", "warning": "warning(s)", "advice": "advice"}
    return ", ".join("%d %s" % (counts[s], words[s]) for s in SEVERITIES if counts.get(s))


def describe_lines(numbers):
    if len(numbers) <= 4:
        return ", ".join(str(n) for n in numbers)
    return "%s and %d more" % (", ".join(str(n) for n in numbers[:3]), len(numbers) - 3)


def describe_index(index, topic_files, notes):
    return ("%s: %d lines: %d pointer line(s), %d content line(s), %d line(s) of history "
            "in comments; %d topic file(s) beside it, %d note(s) in topic folders" % (
                index["file"], index["lines"], index["pointer_lines"], index["other_lines"],
                index["hidden_history_lines"], topic_files, notes))


def format_load(load):
    lines = ["## Loaded before the first turn (%s)" % load["estimate"].split(";")[0],
             "  %10s %8s  %s" % ("characters", "~tokens", "part")]
    for part in load["parts"]:
        label = part["file"] or part["part"]
        extras = [part["part"]] if part["file"] else []
        extras += [part["note"]] if part["note"] else []
        if part["cap"]:
            extras.append(("OVER: " if part["over"] else "cap: ") + part["cap"])
        lines.append("  %10s %8s  %s%s" % (format(part["characters"], ","),
                                           format(part["tokens"], ","), label,
                                           " (%s)" % "; ".join(extras) if extras else ""))
    lines.append("  %10s %8s  total" % (format(load["total"]["characters"], ","),
                                        format(load["total"]["tokens"], ",")))
    return lines

