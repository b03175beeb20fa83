"""`vet --fix`: the mechanical rewrites, in local sources only: -32002 -> -32602 (ERROR_CODE_32002) and -32001 /
-32003 / -32004 -> -32020 / -32021 / -32022 (ERROR_CODE_RENUMBERED), only where the rule matched (an error-code
position), and only when the finding's region of the line still reads exactly the old literal. Each file is
written atomically (a temporary file in its folder, then renamed over it, its mode kept); `--dry-run` prints the
unified diff and writes nothing. A suppressed finding is not a finding, so it is never rewritten."""

from __future__ import annotations

import contextlib
import difflib
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from scanner.vet.model import Language, VetFinding, VetResult, source_lines
from scanner.vet.walk import LANGUAGES

REWRITES: dict[str, dict[str, str]] = {
    "ERROR_CODE_32002": {"-32002": "-32602"},
    "ERROR_CODE_RENUMBERED": {"-32001": "-32020", "-32003": "-32021", "-32004": "-32022"},
}

GIT_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r",
               0x22: '\\"', 0x5C: "\\\\"}
NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass
class FixOutcome:
    fixed: list[VetFinding] = field(default_factory=list)  # the findings a rewrite resolved
    diffs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    not_fixed: list[str] = field(default_factory=list)  # one line per file left as it is, and why


def _rewrite(text: str, language: Language, findings: list[VetFinding]) -> tuple[str, list[VetFinding]]:
    lines = source_lines(text, language, keepends=True)  # numbered as the parser numbered the findings' lines
    done = []
    for found in sorted(findings, key=lambda f: (f.line, f.column), reverse=True):
        if not 0 < found.line <= len(lines):
            continue
        line, start, end = lines[found.line - 1], found.column - 1, found.end_column - 1
        new = REWRITES[found.rule_id].get(line[start:end])
        if new is not None:
            lines[found.line - 1] = line[:start] + new + line[end:]
            done.append(found)
    return "".join(lines), done


def git_path(path: str) -> str:
    """A diff header's path as git writes it: C-quoted when it holds a control character, a quote, a backslash or a
    byte past ASCII (a newline in a file name would otherwise end the header and start a line of the patch)."""
    raw = path.encode("utf-8", "surrogateescape")
    if all(0x20 <= b < 0x7F and b not in GIT_ESCAPES for b in raw):
        return path
    return '"' + "".join(GIT_ESCAPES.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}") for b in raw) + '"'


def unified_diff(relative: str, before: str, after: str) -> str:
    """The rewrite of one file as a patch `git apply` takes: lines split at LF only (as git counts them), a last
    line without one marked `\\ No newline at end of file` (else the next line of the patch is glued to it)."""
    lines = difflib.unified_diff(_lf_lines(before), _lf_lines(after), git_path(f"a/{relative}"),
                                 git_path(f"b/{relative}"))
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}" for line in lines)


def _lf_lines(text: str) -> list[str]:
    lines = [f"{line}\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # what follows the last LF: '' when the file ends with one
    return lines if lines[-1] else lines[:-1]


def _write_atomically(path: Path, text: str) -> None:
    """Replace the file by a new one with its mode and, where the process may set it (root in a CI container on the
    user's checkout), its owner and group: else the fixed file would be root's, and the user's next step locked out."""
    info = path.stat()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".vetfix")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(temporary, info.st_mode & 0o7777)
        if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(PermissionError):  # not ours to give: it stays the runner's, as any edit would
                os.chown(temporary, info.st_uid, info.st_gid)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def fix_result(result: VetResult, *, dry_run: bool) -> FixOutcome:
    """Rewrite the mechanical findings of one vetted root (paths in `result` are relative to it)."""
    base = result.root if result.root.is_dir() else result.root.parent
    by_file: dict[str, list[VetFinding]] = defaultdict(list)
    for found in result.findings:
        if found.rule_id in REWRITES:
            by_file[found.file].append(found)
    outcome = FixOutcome()
    for relative, findings in sorted(by_file.items()):
        path = base / relative
        if path.is_symlink() or not path.is_file():
            continue
        why = _fix_file(path, relative, findings, dry_run, outcome)
        if why is not None:
            outcome.not_fixed.append(f"not fixed: {relative} {why} (its findings stay; edit it by hand)")
    return outcome


def _fix_file(path: Path, relative: str, findings: list[VetFinding], dry_run: bool, outcome: FixOutcome) -> str | None:
    """Rewrite one file, adding what it fixed to `outcome`; why it was left as it is, or None."""
    try:  # vet read it with "replace": rewriting that text would write U+FFFD over the file's own bytes
        before = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8"
    except OSError as exc:
        return f"could not be read ({exc.strerror or exc})"
    after, done = _rewrite(before, LANGUAGES[path.suffix.lower()], findings)
    if not done:
        return None
    if not dry_run:
        try:  # a folder it may not write in (the file is replaced by a new one beside it): this file only
            _write_atomically(path, after)
        except OSError as exc:
            return f"could not be written ({exc.strerror or exc})"
    outcome.fixed += done
    outcome.files.append(relative)
    outcome.diffs.append(unified_diff(relative, before, after))
    return None


def without(result: VetResult, fixed: list[VetFinding]) -> VetResult:
    """The result with the rewritten findings taken out (what is left to migrate by hand)."""
    gone = set(map(id, fixed))
    result.findings = [f for f in result.findings if id(f) not in gone]
    return result
