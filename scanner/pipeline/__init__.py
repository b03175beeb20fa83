"""The stages of one scan, each a module whose function returns a value; `scan.run_scan` runs them in order and
`assemble` builds the Report from their values: targets/refusal → install_request → installation →
provenance_check → server_start → listing → served → lint → probes.phase → teardown → assemble."""
