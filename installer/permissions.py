"""The permission rules the protocol needs: its Skill rules, and a deny rule per .claudeignore line.

Why it exists: the CLI never reads .claudeignore; only a Read(...) deny rule in the settings keeps
the agent's file tools away from what it lists, and the model runs /catchup, /handoff and /dream
without a prompt only where Skill(<name>) is allowed. This module turns .claudeignore lines into
deny rules, and adds or takes out rules in a settings object without touching the user's.
"""

import os
import re

from .files import read_text
from .protocol import CLAUDEIGNORE, LOCAL_SETTINGS, SETTINGS
from .settings import project_settings


def grant(settings, key, rules):
    """Add the rules missing from permissions[key] after the ones there, in
    order; returns the rules added."""
    present = settings.get("permissions", {}).get(key, [])
    added = [rule for rule in dict.fromkeys(rules) if rule not in present]
    if added:
        settings.setdefault("permissions", {}).setdefault(key, []).extend(added)
    return added


def revoke(settings, key, rules):
    """Remove the rules from permissions[key], then the list and the
    "permissions" object if that emptied them; returns the rules removed."""
    permissions = settings.get("permissions", {})
    present = permissions.get(key, [])
    removed = [rule for rule in present if rule in rules]
    if removed:
        permissions[key] = [rule for rule in present if rule not in rules]
        if not permissions[key]:
            del permissions[key]
        if not permissions:
            del settings["permissions"]
    return removed


def rules_in_force(project, files=(SETTINGS, LOCAL_SETTINGS)):
    """{"allow": rules, "deny": rules} of the project's settings, shared and local."""
    rules = {"allow": [], "deny": []}
    for _, settings in project_settings(project, files):
        for key in rules:
            rules[key] += rules_of(settings, key)
    return rules


def rules_of(settings, key):
    """The settings' permissions[key] rules ([] where there are none, or the
    settings hold something else there)."""
    permissions = settings.get("permissions")
    rules = permissions.get(key) if isinstance(permissions, dict) else None
    return rules if isinstance(rules, list) else []


# Characters a line of .claudeignore may not hold to become a rule: the rule's
# own parentheses, and a backslash (gitignore's escape, which the CLI's rule
# syntax does not share).
UNTRANSLATABLE = re.compile(r"[()\\]")


def deny_rules(text):
    """(rules, lines that cannot become one) for the text of a .claudeignore; see
    deny_rule_lines()."""
    lines, skipped = deny_rule_lines(text)
    return list(lines), skipped


def deny_rule_lines(text):
    """({rule: the line it comes from}, lines that cannot become one) for the text of a
    .claudeignore, in the file's order. The CLI matches a Read rule's path as a gitignore
    pattern and refuses the Read, Edit and Write tools on what it matches. A line without a
    slash (but a last one) matches at any depth, as in git, and becomes Read(./<line>); a line
    with a slash before its end is anchored at the project root in git, and becomes
    Read(/<line>), the form the CLI anchors there too (it reads "./docs/**" as any folder named
    docs). A negation ("!") has no deny form."""
    rules, skipped = {}, []
    for line in (text or "").splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        if pattern.startswith("!") or UNTRANSLATABLE.search(pattern):
            skipped.append(pattern)
            continue
        if "/" in pattern.rstrip("/"):
            rule = "Read(/{})".format(pattern.lstrip("/"))
        else:
            rule = "Read(./{})".format(pattern)
        rules.setdefault(rule, pattern)
    return rules, skipped


def claudeignore_text(project):
    return read_text(os.path.join(project, CLAUDEIGNORE), CLAUDEIGNORE)
