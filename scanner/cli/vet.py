"""`mcp-sandbox vet [PATHS…]`: the offline source scan for the MCP 2026-07-28 revision (no Docker). scanner.vet (and
tree-sitter) is imported only when the command runs, so the CLI starts as fast as before."""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.options import annotations_option, json_option, markdown_option, quiet_option, sarif_option
from scanner.cli.output import STDOUT, check_writable, print_annotations, write_json, write_text
from scanner.errors import UsageError

if TYPE_CHECKING:
    from scanner.vet.model import VetResult

FAIL_ON = ("breaking", "any", "none", "never")  # never: what every other command's --fail-on calls none
CONFIDENCES = ("low", "medium", "high")
FAILING_TIERS = {"breaking": {"BREAKING"}, "any": {"BREAKING", "DEPRECATED", "WARNING"}, "none": set(), "never": set()}


def register(app: typer.Typer) -> None:
    app.command("vet")(vet)


def _distinct(roots: list[Path]) -> list[Path]:
    """Each folder or file once, as first given (`vet src ./src` read both, and reported every finding twice)."""
    kept: dict[Path, Path] = {}
    for root in roots:
        kept.setdefault(root.resolve(), root)
    return list(kept.values())


def _check(paths: list[Path], fail_on: str, min_confidence: str, max_file_size: int, outputs: dict[str, str | None],
           annotations: bool) -> None:
    from scanner.vet.walk import LANGUAGES

    if fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if min_confidence not in CONFIDENCES:
        raise UsageError(f"--min-confidence must be one of {', '.join(CONFIDENCES)}, not {min_confidence!r}")
    if max_file_size < 0:
        raise UsageError(f"--max-file-size is in KB and must be 0 (no limit) or more, not {max_file_size}")
    for path in paths:
        if not path.exists():
            raise UsageError(f"no such file or folder: {path} (give the source folder or file to vet)")
        if not path.is_dir() and not path.is_file():  # read as an empty tree, it passed: exit 0, "no findings"
            raise UsageError(f"{path} is neither a folder nor a regular file (a pipe or a device); give the source "
                             "folder or file to vet")
        if path.is_file() and path.suffix.lower() not in LANGUAGES:
            raise UsageError(f"{path} is not a TypeScript, JavaScript or Python source file "
                             f"({', '.join(sorted(LANGUAGES))}); give one, or a folder")
    if sum(v == STDOUT for v in outputs.values()) + annotations > 1:
        raise UsageError("only one of --json/--sarif/--markdown (-) and --github-annotations can write to stdout")
    for what, target in outputs.items():
        check_writable(target, f"the {what} report", paths)
        _refuse_a_source_file(target, f"the {what} report", paths, LANGUAGES)


def _refuse_a_source_file(target: str | None, what: str, roots: list[Path], languages: Collection[str]) -> None:
    """An output over a source file of a vetted folder (`vet src --json src/server.ts`) would replace the code."""
    if target is None or target == STDOUT or Path(target).suffix.lower() not in languages:
        return
    path = Path(target).resolve()
    if path.is_file() and any(root.is_dir() and path.is_relative_to(root.resolve()) for root in roots):
        raise UsageError(f"cannot write {what} to {target}: it is a source file this command vets (the flag takes "
                         "the output PATH, or - for stdout)")


def vet(
    paths: list[Path] = typer.Argument(None, metavar="[PATHS]...", help="Source folders or files (default: .)."),
    json_path: str | None = json_option("Write the findings as JSON to PATH (- for stdout)."),
    sarif_path: str | None = sarif_option(),
    markdown_path: str | None = markdown_option(),
    github_annotations: bool = annotations_option(),
    min_confidence: str = typer.Option("low", "--min-confidence", metavar="LEVEL",
                                       help="Report only findings at or above: low|medium|high."),
    fail_on: str = typer.Option("breaking", "--fail-on", metavar="LEVEL",
                                help="Exit 1 on: breaking (a BREAKING finding), any (any non-advisory finding), none "
                                     "(or never)."),
    max_file_size: int = typer.Option(1536, "--max-file-size", metavar="KB", help="Skip files over KB (0: no limit)."),
    include_built: bool = typer.Option(False, "--include-built", help="Also scan dist/ and build/ folders below a "
                                                                      "root (built output)."),
    ignore: list[str] = typer.Option(None, "--ignore", metavar="GLOB", help="Skip paths matching GLOB (repeatable; "
                                                                            "a root's .mcpvetignore is read too)."),
    quiet: bool = quiet_option(),
    list_rules: bool = typer.Option(False, "--rules", help="Print the vet rules as a Markdown table and exit."),
    fix: bool = typer.Option(False, "--fix", help="Rewrite the mechanical error codes (-32002 -> -32602, -32001/3/4 "
                                                  "-> -32020/1/2) in place, where the rules matched."),
    dry_run: bool = typer.Option(False, "--dry-run", help="With --fix: print the diff, change nothing."),
) -> None:
    """Vet MCP server source for what breaks under the 2026-07-28 specification (TypeScript, JavaScript, Python).

    Exit 0 when clean (or only below --fail-on), 1 on a finding at --fail-on, 2 on unusable input. With --fix (and
    --dry-run), the exit code is that of the findings the rewrite leaves."""
    if list_rules:
        from scanner.vet.docs import markdown_table

        print(markdown_table(), end="")
        raise typer.Exit(0)
    if dry_run and not fix:
        raise UsageError("--dry-run only goes with --fix (vet --fix --dry-run PATH prints the rewrite's diff)")
    if dry_run and (STDOUT in (json_path, sarif_path, markdown_path) or github_annotations):
        raise UsageError("--fix --dry-run prints its diff on stdout: give --json/--sarif/--markdown a file path "
                         "instead of -, or drop --github-annotations")
    roots = list(paths or [Path(".")])
    outputs = {"JSON": json_path, "SARIF": sarif_path, "Markdown": markdown_path}
    _check(roots, fail_on, min_confidence, max_file_size, outputs, github_annotations)
    roots = _distinct(roots)
    from scanner.vet import VetOptions, vet_tree
    from scanner.vet.tree import merged
    from scanner.vet import sarif, views

    options = VetOptions(min_confidence, max_file_size, include_built, tuple(ignore or ()))
    result = merged([_fixed(vet_tree(root, options), dry_run) if fix else vet_tree(root, options)
                     for root in _shown(roots, "vetting")], Path.cwd().resolve())
    if not quiet:
        stream = sys.stderr if STDOUT in outputs.values() or github_annotations else sys.stdout
        print("\n".join(views.terminal_report(result)), file=stream)
    if json_path:
        write_json(json_path, result.as_json(), "the JSON report")
    if sarif_path:
        write_json(sarif_path, sarif.to_sarif(result), "the SARIF report")
    if markdown_path:
        write_text(markdown_path, views.markdown(result), "the Markdown report")
    if github_annotations:
        print_annotations(views.github_annotations(result))
    raise typer.Exit(1 if any(f.tier.value in FAILING_TIERS[fail_on] for f in result.findings) else 0)


def _shown(roots: list[Path], doing: str) -> Iterator[Path]:
    """Each root, with a spinner on stderr naming it while it is read when stderr is a terminal (a large tree,
    site-packages, takes most of a minute), nothing otherwise."""
    from scanner.cli.spinner import spinner_shows, spinning

    if not spinner_shows(sys.stderr):
        yield from roots
        return
    with spinning(doing) as step:
        for root in roots:
            step(f"{doing} {root}")
            yield root


def _fixed(result: VetResult, dry_run: bool) -> VetResult:
    """The --fix rewrite of one root (the diff on stdout with --dry-run, a line per file otherwise)."""
    from sandbox.core.untrusted import escape_for_terminal
    from scanner.vet.fix import fix_result, without

    outcome = fix_result(result, dry_run=dry_run)
    for line in outcome.not_fixed:
        print(escape_for_terminal(line, 300), file=sys.stderr)
    for relative, diff in zip(outcome.files, outcome.diffs):
        # the diff is for `git apply` (as written); a line to read has the file's name escaped (a package's own)
        print(diff, end="") if dry_run else print(escape_for_terminal(f"fixed: {relative}", 300), file=sys.stderr)
    return without(result, outcome.fixed)
