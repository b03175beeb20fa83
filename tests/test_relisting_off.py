"""When P10's second listing is not made: only a config given with --config that disables P10 turns it off (a config
found in the working directory cannot suppress P10's errors, so it never does), and the skip is the user's choice:
the scan stays complete."""

from __future__ import annotations

from scanner.config import Config
from scanner.pipeline.outcome import StageFacts, skipped_stages, status_of
from scanner.pipeline.scan_options import ScanOptions


def _options(config: Config) -> ScanOptions:
    return ScanOptions(target="npm:demo", config=config)


def test_an_explicit_config_that_disables_p10_turns_the_second_listing_off() -> None:
    off = _options(Config(disabled=frozenset({"P10"}), source="ci.toml", explicit=True)).relisting_off()
    assert off == "turned off: P10 is disabled by ci.toml"


def test_near_misses_a_found_config_or_another_rule_disabled_keep_it() -> None:
    assert _options(Config(disabled=frozenset({"P10"}), source="mcp-sandbox.toml")).relisting_off() is None
    assert _options(Config(disabled=frozenset({"P8", "S2"}), source="ci.toml", explicit=True)).relisting_off() is None
    assert _options(Config()).relisting_off() is None


def test_a_relisting_turned_off_is_a_chosen_skip_and_the_scan_stays_complete() -> None:
    facts = StageFacts(failure=None, listing_problem=None, probes_enabled=True, probes_problem=None,
                       teardown_problem=None, relisting_problem="turned off: P10 is disabled by ci.toml",
                       relisting_chosen=True)
    skipped = skipped_stages(facts)
    assert [(s.stage, s.chosen) for s in skipped] == [("relisting", True)]
    assert status_of(None, skipped, []) == "complete"
    failed = StageFacts(failure=None, listing_problem=None, probes_enabled=True, probes_problem=None,
                        teardown_problem=None, relisting_problem="the second server did not answer")
    assert status_of(None, skipped_stages(failed), []) == "incomplete"
