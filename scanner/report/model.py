"""The one report model. The terminal, JSON, SARIF and Markdown outputs are views of it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr

from sandbox.run.netns import NetworkNamespace
from sandbox.run.policy import AppliedPolicy, SinkPolicy
from scanner import __version__
from scanner.conformance.model import ConformanceReport
from scanner.probes.model import ProbeResult
from scanner.report.base import ReportModel as _Model
from scanner.report.changes_since import ChangesSince
from scanner.report.source_scan import SourceLocation, SourceScanInfo
from scanner.report.target_origin import ImageInfo, LaunchOrigin, RemoteInfo
from scanner.provenance.model import ProvenanceReport
from scanner.report.severity import Severity

SCHEMA_VERSION = "1"

Category = Literal["security", "conformance", "ergonomics", "metadata"]
Verdict = Literal["pass", "review", "block", "incomplete"]
Status = Literal["complete", "incomplete", "failed"]
Stage = Literal["install", "provenance", "source", "plugin", "run", "listing", "lint", "probes", "relisting",
                "conformance", "teardown", "behavior"]
TargetKind = Literal["npm", "pypi", "folder", "archive", "file", "remote", "image"]


class Skipped(_Model):
    """A stage of the scan that did not run, or did not finish, and why (as pip-audit reports a skipped dependency)."""

    stage: Stage
    reason: str = Field(description="Why, one line: the error that stopped it, or the choice that turned it off.")
    chosen: bool = Field(default=False, description="Turned off by the user (--no-probes): a choice, so the scan is "
                         "still complete.")


class ScannerInfo(_Model):
    name: str = "mcp-sandbox"
    version: str = __version__


class TargetInfo(_Model):
    kind: TargetKind
    name: str
    requested: str = Field(description="The target exactly as the user gave it.")
    version: str | None = Field(default=None, description="The resolved version that was installed.")
    ecosystem: Literal["npm", "pypi"] | None = None
    launch: LaunchOrigin | None = Field(default=None, description="The launch command `requested` was mapped from; "
                                        "absent for a target given as such.")
    remote: RemoteInfo | None = Field(default=None, description="The remote server (kind `remote`); absent for "
                                      "sandboxed targets.")
    image: ImageInfo | None = Field(default=None, description="The container image (kind `image`): its digest, "
                                    "configuration and what it could not support; absent for packages.")


class ServerInfo(_Model):
    name: str | None = None
    version: str | None = None
    protocol_version: str | None = None
    capabilities: dict[str, Any] = Field(default_factory=dict)
    instructions: str | None = None


class Finding(_Model):
    rule_id: str
    rule_name: str
    severity: Severity
    category: Category
    tool: str | None = Field(default=None, description="The tool the finding is about; null for server-level.")
    message: str
    fix: str = ""
    evidence: str | None = None
    location: SourceLocation | None = Field(default=None, description="The source file and region, for a finding "
                                            "read from the package's files (V1); null for the others.")


class Suppression(_Model):
    """Why a finding does not count: the config entry that matched it."""

    config: str = Field(description="The config that holds the entry (its file, and the table in a pyproject.toml).")
    entry: str = Field(description='The matching entry: `disable "S2"` or `ignore "S8:*"` (rule ids, as resolved).')


class SuppressedFinding(Finding):
    """A finding a config suppressed: kept in the report, counted in no verdict, score or exit code."""

    suppression: Suppression


class RefusedSuppression(_Model):
    """A config entry that matched an error-level security finding it may not suppress: the finding stays active."""

    rule_id: str
    tool: str | None = None
    entry: str = Field(description='The entry that tried: `disable "S8"` or `ignore "S8:*"`.')
    reason: str


class ConfigInfo(_Model):
    """The config file in use (`disable` / `ignore`), as read when the scan ran."""

    path: str = Field(description="The config file.")
    table: str | None = Field(default=None, description="The table read, for a pyproject.toml (tool.mcp-sandbox).")
    sha256: str = Field(description="Digest of the file's bytes as read.")
    explicit: bool = Field(description="Given with --config. A config discovered in the working directory (the repo "
                           "under test may ship it) cannot suppress error-level security findings.")
    refused: list[RefusedSuppression] = Field(default_factory=list, description="Suppressions this config tried "
                                              "and was not allowed; those findings stay in `findings`.")
    unmatched: list[str] = Field(default_factory=list, description='`ignore` entries naming a tool the server does '
                                 'not list (`ignore "S7:list_directry"`, a typo?): they suppress nothing.')


class InstallStepWrites(_Model):
    """Files one install step wrote outside the install tree (the install prefix, node_modules, the venv, the package's
    own copy): HOME shown as `~`; paths are untrusted text, escaped and capped."""

    package: str | None = Field(default=None, description="The package whose step it was (name@version), or null "
                                "for a phase that runs no package's script.")
    script: str | None = Field(default=None, description="What the step ran, as install egress names it.")
    created: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    more: int = Field(default=0, description="Paths beyond the per-step cap, not listed.")
    unreadable: int = Field(default=0, description="Folders the listing could not read (files may hide there).")
    truncated: bool = Field(default=False, description="The listing was cut at its size cap: the record is "
                            "incomplete.")


class InstallInfo(_Model):
    image: str = Field(description="Tag of the image holding the installed server.")
    image_id: str
    runtime_image: str
    cached: bool = Field(description="True when an earlier install of the same resolved package was reused.")
    command: list[str] = Field(description="The launch command inside the sandbox.")
    installer_output: str = Field(default="", description="Tail of the installer's output, size-capped.")
    seconds: float = 0.0
    attribution_note: str | None = Field(
        default=None, description="Why install egress attempts (provenance.egress) name no package or script, when "
        "the install could not time its steps (the engine reported no usable clock); null when every attempt names "
        "the step that made it.")
    writes: list[InstallStepWrites] = Field(
        default_factory=list, description="Per install step that wrote outside the install tree (a marker in /tmp, a "
        "file in HOME), in step order; a step that wrote nothing there has no entry (I11).")


class ProcessSeen(_Model):
    pid: int
    args: str = Field(description="Command line (untrusted, capped).")
    role: Literal["server", "server child", "daemon"] | None = Field(
        default=None, description="Where it sits in the container's process tree: the server, a process of the "
        "server's own tree, or a daemon (a child of the container's init that is not the server: it outlived the "
        "parent that started it). Null when not classified.")


ServerEnd = Literal["eof", "sigterm", "sigkill", "exited before", "unknown"]


class ServerEnding(_Model):
    """How the server ended at teardown: its stdin closed (EOF), then SIGTERM, then SIGKILL, each after a short wait."""

    ended_by: ServerEnd = Field(description="eof: it exited when its stdin closed; sigterm: it ignored EOF and exited "
                                "on SIGTERM; sigkill: it ignored both and was killed; exited before: it had exited "
                                "already; unknown: the engine could not say.")
    exit_code: int | None = None
    seconds: float = Field(default=0.0, description="From closing its stdin to its exit.")

    def describe(self) -> str:
        """One line for the views: `ignored EOF, ignored SIGTERM, killed (SIGKILL), exit 137 after 4.1 s`."""
        steps = {"eof": "exited on EOF", "sigterm": "ignored EOF, exited on SIGTERM",
                 "sigkill": "ignored EOF, ignored SIGTERM, killed (SIGKILL)", "exited before": "had exited before "
                 "teardown", "unknown": "did not end within the teardown's waits (the engine could not say)"}
        code = "" if self.exit_code is None else f", exit {self.exit_code}"
        return steps[self.ended_by] + code + (f" after {self.seconds:.1f} s" if self.ended_by != "exited before" else "")


def process_summary(processes: list[ProcessSeen]) -> str:
    """`1 server, 2 server children, 1 daemon (sleep)`: the processes by role, for the views."""
    nouns = {"server": ("server", "servers"), "server child": ("server child", "server children"),
             "daemon": ("daemon", "daemons")}
    counts = {role: sum(1 for p in processes if p.role == role) for role in nouns}
    parts = [f"{count} {nouns[role][count != 1]}" for role, count in counts.items() if count]
    names = sorted({p.args.split()[0].rsplit("/", 1)[-1] for p in processes if p.role == "daemon" and p.args.split()})
    if not parts:
        return "none seen"
    return ", ".join(parts) + (f" ({', '.join(names)[:200]})" if names else "")


class TeardownInfo(_Model):
    complete: bool
    seconds: float
    removed: list[str] = Field(default_factory=list)
    leftovers: list[str] = Field(default_factory=list)
    processes: list[ProcessSeen] = Field(default_factory=list, description="The sandbox's processes when teardown "
                                         "began (before the server's stdin closed), by role.")
    server_ending: ServerEnding | None = Field(default=None, description="How the server ended; null when it never "
                                               "started.")


class SandboxInfo(_Model):
    session: str
    network: Literal["observe", "none"] | None = Field(
        default=None, description="observe: an egress sink answers and logs every DNS query and connection; "
        "none: loopback only.")
    # A stdlib dataclass from sandbox/: pydantic validates and serialises it with this model's config (extra
    # forbidden) and takes field descriptions from its dataclasses.field metadata, so the fields are listed once.
    applied: AppliedPolicy | None = None
    sink: SinkPolicy | None = Field(default=None, description="The egress sink container's own policy as applied, "
                                    "and its listener's identity; null when the network was not observed.")
    namespace: NetworkNamespace | None = Field(default=None, description="The server's network namespace as read "
                                               "from inside it at start: interfaces, addresses, routes.")
    namespace_unread: str | None = Field(default=None, description="Why the namespace could not be read (null when "
                                         "it was, or the server never started).")
    teardown: TeardownInfo | None = None
    stderr: str = Field(default="", description="The server's stderr (tail, size-capped, untrusted).")
    stderr_truncated: bool = False
    exit_code: int | None = None
    startup_processes: list[ProcessSeen] = Field(default_factory=list, description="The sandbox's processes after "
                                                 "listing, before the first call, by role (a daemon the server "
                                                 "started at start-up is here, and is B5).")
    looks: list[str] = Field(default_factory=list, description="How each sandbox's after-call snapshots were taken "
                             "(the first, then each restart's): `observer` (the in-sandbox observer, "
                             "docs/observer.md), `exec (why)` (one exec per look), `observer, then exec (why)` (the "
                             "observer was lost mid-scan).")


def _phase(what: str) -> Any:
    return Field(default=None, description=f"Seconds spent {what} (null: not run).")


class Timings(_Model):
    """Where the scan's time went. `install`, `start`, `first_tools_list` and `total` as before; then one field per
    phase (wall seconds). Phases with no order between them run at once (resolve with the engine connection and image
    check, the gc sweep beside the install, provenance beside the run, the second server beside the first), so the
    phases add up to more than `total`."""

    install: float | None = None
    start: float | None = None
    first_tools_list: float | None = None
    total: float | None = None
    resolve: float | None = _phase("resolving the target to an exact version (registry)")
    engine_connect: float | None = _phase("connecting to the Docker engine")
    gc_sweep: float | None = _phase("sweeping what killed scanners left behind (in a thread)")
    image_check: float | None = _phase("checking (or building) the runtime image")
    install_lookup: float | None = _phase("in the install stage: the cache lookups, and any fresh install whole")
    install_proxy: float | None = _phase("in a fresh install on the install proxy until squid and dnsmasq answered")
    install_container: float | None = _phase("in a fresh install starting its container, its writable places listed")
    install_steps: float | None = _phase("in a fresh install on the installer's steps and the checks between them")
    install_finish: float | None = _phase("in a fresh install after its steps: leftovers, the proxy's log, manifest")
    install_commit: float | None = _phase("in a fresh install saving the installed tree as an image (docker commit)")
    provenance: float | None = _phase("on provenance lookups (in a thread, beside the run)")
    sink_start: float | None = _phase("starting the egress sink until its listeners were ready")
    probe_plan: float | None = _phase("making the canaries and the workspace seed")
    container_create: float | None = _phase("creating and attaching the server container, its policy read back")
    container_start: float | None = _phase("starting the server container")
    namespace_read: float | None = _phase("reading the server's network namespace from inside it")
    seed: float | None = _phase("seeding the workspace and canaries and taking the baseline snapshot")
    first_answer: float | None = _phase("from the server's start to its answer to the handshake")
    listing: float | None = _phase("listing tools, prompts and resources after the handshake")
    probes: float | None = _phase("calling the tools and watching each call")
    relisting: float | None = _phase("on the second listing (a second server, beside the first at start-up)")
    late_egress: float | None = _phase("reading the egress sink's log after the listing and probes")
    server_end: float | None = _phase("ending the server (EOF, SIGTERM, SIGKILL)")
    teardown: float | None = _phase("removing the session's containers and networks")
    assemble: float | None = _phase("building the report from the stages' values (rules on probes, score)")


class ToolScore(_Model):
    tool: str
    score: int = Field(ge=0, le=100)
    tokens: int = Field(description="Estimated tokens of this tool's definition (4 characters of compact JSON ≈ 1 token).")
    wasted_tokens: int = Field(description="Estimated tokens an agent wastes per session on this tool (an estimate).")


class Score(_Model):
    """Agent-friendliness: what the definitions cost an agent in tokens. Not a security measure: security findings
    feed the verdict, never this score."""

    value: int = Field(ge=0, le=100, description="Agent-friendliness 0-100; halves per 10,000 estimated wasted "
                       "tokens.")
    tokens: int = Field(description="Estimated tokens of all definitions (4 characters of compact JSON ≈ 1 token).")
    wasted_tokens: int = Field(description="Estimated wasted tokens per session, summed over tools and server-level findings.")
    estimate: str = Field(default="4 characters of compact JSON ≈ 1 token", description="How tokens are estimated.")
    tools: list[ToolScore] = Field(default_factory=list)


class FileChanges(_Model):
    created: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    resized: list[str] = Field(default_factory=list, description="The modified paths whose size changed (the others "
                               "changed only their mtime, mode or type): B1 tells a git index refresh by it.")
    truncated: bool = Field(default=False, description="Too many files to list them all.")
    runs_commands: list[str] = Field(default_factory=list, description="The keys making git run a command "
                                     "(core.fsmonitor, core.hooksPath, a `!` alias, a filter driver...) found in a "
                                     "git config file the call created or modified, new in this sandbox, as "
                                     "`path: key` (B4).")


class CanaryEvent(_Model):
    where: str = Field(description="Where the canary was planted (file, or env variable).")
    how: Literal["read", "response", "egress"] = Field(description="Read (atime moved), or seen in a tool response or "
                                                       "in egress traffic.")
    encoding: str | None = Field(default=None, description="plain, base64, base32, hex, case changed, reversed or piece, for a canary seen in data.")


class ResourceUse(_Model):
    memory_peak_bytes: int | None = Field(default=None, description="Peak memory of the sandbox so far (cgroup).")
    memory_peak_raised: bool = Field(default=False, description="This call raised the peak.")
    memory_limit_hit: bool = False
    oom_killed: bool = False
    pids_peak: int | None = None
    pids_limit_hit: bool = Field(default=False, description="Forks or threads were refused at the pids limit.")
    pids_limit_evidence: str | None = Field(default=None, description="How the limit was seen: pids.events max "
                                            "rising, or the engine's stats at the limit when the scanner's own look "
                                            "could not fork.")
    cpu_seconds: float | None = Field(default=None, description="CPU time the sandbox used during the call.")
    seconds: float | None = Field(default=None, description="Wall-clock time between the looks before and after "
                                  "(the window of cpu_seconds).")
    cpu_wait_seconds: float | None = Field(default=None, description="Time the sandbox's threads were ready to run "
                                           "but waited for a CPU the machine's other work held (the kernel's "
                                           "schedstat run_delay) in the same window; none when the look was by exec.")


AFTER_LAST_CALL = "after the last call"  # the label of the record of what the server did after the last call's look


class CallBehavior(_Model):
    """What one probe call did, seen from outside the server (files, canaries, processes, resources, egress)."""

    call: int = Field(description="Index into `probes`; -1 for the server's start-up and listing.")
    tool: str | None = None
    label: str
    sandbox: int = Field(default=0, description="Which sandbox ran the call: 0 the first, 1.. after restarts.")
    files: FileChanges = Field(default_factory=FileChanges)
    canaries: list[CanaryEvent] = Field(default_factory=list)
    processes: list[ProcessSeen] = Field(default_factory=list, description="New processes still alive after the call.")
    resources: ResourceUse = Field(default_factory=ResourceUse)
    egress: list[dict[str, Any]] = Field(default_factory=list, description="Network attempts during the call (B2).")
    observed: bool = Field(default=True, description="False when the sandbox could not be looked at (it had died).")
    snapshot: str = Field(default="ok", description="ok, or `failed (reason)`: a file listing before or after the "
                          "call was not whole (a fork refused, the size cap, find failing), so no file changes or "
                          "reads are derived for this call.")


class NotificationSeen(_Model):
    """Server notifications of one method received during the probe session (list_changed, logging, progress, ...)."""

    method: str = Field(description="The notification's method, e.g. notifications/tools/list_changed.")
    count: int = Field(description="How many of them arrived.")
    first_params: str = Field(default="", description="The first one's params as ASCII JSON (escaped), capped.")


class Report(_Model):
    schema_version: str = SCHEMA_VERSION
    scanner: ScannerInfo = Field(default_factory=ScannerInfo)
    target: TargetInfo
    status: Status = Field(default="complete", description="complete: every stage ran; incomplete: a stage did not "
                           "run or finish (see `skipped`); failed: an internal error ended the scan early.")
    skipped: list[Skipped] = Field(default_factory=list, description="The stages that did not run or finish, and why.")
    verdict: Verdict | None = Field(default=None, description="block / review / pass from the security findings; "
                                    "incomplete when the scan did not complete and found nothing to block.")
    score: Score | None = None
    findings: list[Finding] = Field(default_factory=list, description="The findings that count.")
    suppressed: list[SuppressedFinding] = Field(default_factory=list, description="Findings a config suppressed, "
                                                "with the entry that did: shown, never counted.")
    config: ConfigInfo | None = Field(default=None, description="The config file in use; null when there was none.")
    server: ServerInfo = Field(default_factory=ServerInfo)
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Tool definitions as served (capped).")
    prompts: list[dict[str, Any]] = Field(default_factory=list)
    resources: list[dict[str, Any]] = Field(default_factory=list)
    resource_templates: list[dict[str, Any]] = Field(default_factory=list)
    install: InstallInfo | None = None
    sandbox: SandboxInfo | None = None
    provenance: ProvenanceReport | None = None
    probes: list[ProbeResult] = Field(default_factory=list, description="Every probe call and its outcome.")
    behavior: list[CallBehavior] = Field(default_factory=list, description="What each call did, seen from outside.")
    notifications: list[NotificationSeen] = Field(default_factory=list, description="Server notifications received "
                                                  "during the probe session, by method.")
    source: SourceScanInfo | None = Field(default=None, description="The installed package's own source, vetted "
                                          "for the 2026-07-28 revision (rule V1).")
    conformance: ConformanceReport | None = Field(default=None, description="Each protocol-revision check "
                                                  "(rules W*) and its outcome, with the probe's wire log.")
    timings: Timings = Field(default_factory=Timings)
    errors: list[str] = Field(default_factory=list, description="What stopped part of the scan, one line each.")
    changes_since: ChangesSince | None = Field(default=None, description="What changed against the last vetted "
                                               "release of the same package (batch, or `mcp-sandbox diff`); null "
                                               "when none was compared.")
    # The definitions and the server's identity exactly as served, uncapped (the fields above are capped for
    # storage). Not serialized: the lockfile fingerprints these, so an edit past a size cap cannot slip through.
    _served: dict[str, Any] | None = PrivateAttr(default=None)

    def as_served(self) -> Report:
        """A copy whose server, tools, prompts and resources are as served, uncapped (itself when there are none)."""
        if self._served is None:
            return self
        return self.model_copy(update=self._served)
