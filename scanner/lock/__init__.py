"""The lockfile: pin what a vetted server served and how it was installed, and report what changed since."""

from scanner.lock.build import build_lock
from scanner.lock.changes import Change, at_or_above, counts
from scanner.lock.diff import diff
from scanner.lock.io import load_lock, lock_bytes, write_lock
from scanner.lock.model import DEFAULT_LOCK_NAME, LockFile, ProvenancePins
from scanner.lock.source import LockSource, load_source

__all__ = ["DEFAULT_LOCK_NAME", "Change", "LockFile", "LockSource", "ProvenancePins", "at_or_above", "build_lock",
           "counts", "diff", "load_lock", "load_source", "lock_bytes", "write_lock"]
