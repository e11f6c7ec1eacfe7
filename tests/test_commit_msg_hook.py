"""The commit-msg hook (.githooks/commit-msg, CONTRIBUTING.md): it warns on a subject over 72 characters or one
not followed by a blank line, never blocks a commit, counts characters rather than bytes and reads the message as
git's clean-up will keep it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / ".githooks" / "commit-msg"


def run_hook(tmp_path: Path, message: str) -> subprocess.CompletedProcess:
    msg = tmp_path / "COMMIT_EDITMSG"
    msg.write_text(message, encoding="utf-8")
    return subprocess.run(["sh", str(HOOK), str(msg)], capture_output=True, text=True, cwd=tmp_path, check=False)


def test_hook_is_executable():
    assert os.access(HOOK, os.X_OK)  # git skips a hook it cannot execute (with only a hint)


def test_short_subject_and_blank_line_pass_silently(tmp_path):
    out = run_hook(tmp_path, "Fix the greedy loop's refresh\n\nWhy, and the numbers.\n")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_long_subject_warns_with_its_length_and_does_not_block(tmp_path):
    out = run_hook(tmp_path, "A" * 73 + "\n\nBody.\n")
    assert out.returncode == 0
    assert out.stderr == "commit-msg: warning: the subject is 73 characters, over 72; say the rest in the body\n"


def test_subject_followed_by_text_warns(tmp_path):
    out = run_hook(tmp_path, "Add a rule\nand its body on the next line\n")
    assert out.returncode == 0
    assert out.stderr == "commit-msg: warning: the subject is not followed by a blank line\n"


def test_characters_not_bytes_and_comments_skipped(tmp_path):
    # 72 τ are 144 bytes: exactly at the limit in characters; the comment lines and the leading empty lines are
    # what git's clean-up removes, and blanks on the second line make it empty
    message = "\n# Please enter the commit message\n\n" + "τ" * 72 + "   \n  \n# " + "x" * 100 + "\nBody.\n"
    out = run_hook(tmp_path, message)
    assert (out.returncode, out.stderr) == (0, "")
    out = run_hook(tmp_path, "τ" * 73 + "\n")
    assert "the subject is 73 characters" in out.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_installed_hook_warns_and_the_commit_is_made(tmp_path):
    """Installed by the documented command, a long subject warns and the commit is made all the same."""
    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                              cwd=tmp_path, capture_output=True, text=True, check=True)

    git("init", "-q")
    shutil.copytree(HOOK.parent, tmp_path / ".githooks")
    git("config", "core.hooksPath", ".githooks")
    (tmp_path / "a.txt").write_text("a\n")
    git("add", "a.txt")
    out = git("commit", "-q", "-m", "B" * 80, "-m", "Body.")
    assert "the subject is 80 characters, over 72" in out.stderr
    assert git("log", "--format=%s").stdout == "B" * 80 + "\n"
