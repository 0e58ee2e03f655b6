"""--version says what CHANGELOG.md says was released: the newest release's number and date, and,
while changes are listed under [Unreleased], that this is that release plus those changes, never
the release alone."""
import os
import re

from installtools import REPO, installer, load_installer  # noqa: F401  (fixtures are used by name)


def changelog():
    with open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8") as handle:
        return handle.read()


def newest_release():
    """(version, date) of the first `## [x.y.z] — date` heading."""
    match = re.search(r"^## \[(\d+\.\d+\.\d+)\] \u2014 (\d{4}-\d\d-\d\d)$", changelog(), re.M)
    assert match, "CHANGELOG.md names no release"
    return match.groups()


def unreleased_changes():
    """The lines under [Unreleased] that record a change (bullets)."""
    match = re.search(r"^## \[Unreleased\]\n(.*?)(?=^## \[)", changelog(), re.M | re.S)
    return [line for line in (match.group(1) if match else "").splitlines()
            if line.startswith("- ")]


def test_the_release_is_the_newest_one_the_changelog_names(installer):
    releases = load_installer(installer).releases
    assert (releases.VERSION, releases.RELEASE_DATE) == newest_release()
    assert releases.UNRELEASED == bool(unreleased_changes())


def test_version_says_what_was_released_and_whether_more_came_since(installer):
    line = installer.ok("--version").stdout.strip()
    version, date = newest_release()
    if unreleased_changes():
        assert line == ("install.py (memory-context-protocol) {0}+unreleased (release {0} of {1}, "
                        "and the changes CHANGELOG.md lists under [Unreleased])".format(
                            version, date))
    else:
        assert line == "install.py (memory-context-protocol) {} ({})".format(version, date)
