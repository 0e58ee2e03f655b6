"""A hook for measuring what an agent CLI gives its hooks and does with their answers: it appends
one JSON line per run to the log named by its first argument (the input it was given, its
working folder, the variables the CLIs set for hooks and the transcript as it stood), then
answers as its second argument says:

  quiet                 print nothing, exit 0
  plain TEXT            print TEXT
  context EVENT TEXT    print {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}
  block-exit TEXT       the first time for this log: exit 2 with TEXT on stderr; then quiet
  block-json TEXT       the first time for this log: print {"decision": "block", "reason": TEXT}; then quiet
"""
import json
import os
import sys

SEEN = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "GEMINI_CWD", "GEMINI_SESSION_ID", "CODEX_HOME", "PWD")


def main(log, mode, *words):
    given = json.loads(sys.stdin.buffer.read().decode("utf-8") or "{}")
    with open(log, "a", encoding="utf-8") as record:
        record.write(json.dumps({"input": given, "cwd": os.getcwd(), "transcript": transcript(given),
                                 "env": {name: os.environ.get(name) for name in SEEN}}) + "\n")
    first_block = mode.startswith("block-") and not os.path.exists(log + ".blocked")
    if mode == "plain":
        sys.stdout.write(words[0])
    elif mode == "context":
        sys.stdout.write(json.dumps({"hookSpecificOutput": {"hookEventName": words[0],
                                                            "additionalContext": words[1]}}))
    elif first_block:
        open(log + ".blocked", "w").close()
        if mode == "block-exit":
            sys.stderr.write(words[0])
            return 2
        sys.stdout.write(json.dumps({"decision": "block", "reason": words[0]}))
    return 0


def transcript(given):
    try:
        with open(given.get("transcript_path") or "", encoding="utf-8") as handle:
            return handle.read()
    except (OSError, ValueError):
        return None


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
