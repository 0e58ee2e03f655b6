"""The body of install.py: one module per responsibility, so each behaviour has one home.

Why a package folder, not modules beside install.py: the repository's top level is what a user
sees (install.py, hooks/, commands/, templates/, memory_health.py), and the installer's dozen
modules would crowd it with names (git.py, plan.py, settings.py) that read as if they were the
protocol's own parts. One folder keeps them together and out of the way, and its modules import
one another by relative imports, so no module of the same name elsewhere on sys.path can stand in
for one of them.

How it is loaded: install.py imports this package by its path (the folder beside the real path of
install.py) under the name `mcp_installer`, so it runs from any working folder, through a symbolic
link to a clone, and under `python3 -I -S`, where sys.path holds neither the script's folder nor
site-packages. It writes no bytecode. memory_health.py loads git.py the same way, by its path.

The modules, from the ground up (each imports only modules above it in this list):

  errors.py          exit codes; UsageError (exit 2) and Refusal (exit 1)
  git.py             the one hardened way to run git (shared with memory_health.py)
  files.py           reading files, atomic writes, owners, links, line endings
  protocol.py        the protocol's parts, the hook entries it owns (Wiring), the source files
  releases.py        this version, and what earlier releases shipped (digests, matchers)
  plan.py            a run's changes, planned in full, then made together; Ctrl-C held
  json_edit.py       the smallest edit that makes a JSON text hold new data
  settings.py        the settings files the harness reads: finding, parsing, writing back
  interpreter.py     the interpreter in a hook command: its grammar, and the probe
  permissions.py     Skill rules, and .claudeignore lines as deny rules
  wiring.py          the protocol's hook entries in a settings object
  blocks.py          marked blocks: the .gitignore and .gitattributes blocks, the CLAUDE.md section
  bash_edition.py    moving a project from the bash edition
  repository.py      what the installer asks git about a project
  memory_move.py     --update's move of a memory in the stamped format to the team format
  memory_index.py    the index --project writes where there is none, reaching the memory there
  agents.py          the agents besides Claude Code: their hooks files, skills and commands
  codex_review.py    whether Codex CLI runs the protocol's hooks for this user (its review)
  gemini_trust.py    whether Gemini CLI runs them for this user (its switch, its trusted folders)
  claims.py          the shared record read as claims, however git merged it
  record.py          what the protocol owns in a project, written down (shared and local)
  uninstall.py       --uninstall (Claude Code's parts and the other agents')
  project.py         --project and --update
  next_steps.py      what the user does after a run: the git add line, the agent step
  global_section.py  --global and --uninstall --global
  findings.py        what --check finds, one function per kind of finding
  check.py           --check, --check --memory and --check --recursive: gathering and printing
  cli.py             the command line, the modes, exit codes and the closing line

Standard library only, Python 3.8 or newer: install.py refuses an older Python before it loads
any of this.
"""
