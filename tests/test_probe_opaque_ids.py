"""Opaque-ID detection and labelling (the measurement behind P2)."""

from __future__ import annotations

import json

from scanner.probes.opaque_ids import looks_random, opaque_ids, unlabelled_id_chars

UUID_A = "3f1c2a4e-8b7d-4c6e-9a5f-1d2e3f4a5b6c"
UUID_B = "9b2d4f6a-1c3e-4a5b-8c7d-0e1f2a3b4c5d"
SHA = "e4f9d403ebad42ffc659b2c421f2112b6c0e2a1e"
RANDOM = "aZ3kP9qL2mX7vB1nR8tY"


def test_finds_uuids_hex_and_random_tokens_once_each() -> None:
    found = opaque_ids(f"{UUID_A} then {SHA} and {RANDOM}")
    assert found == [UUID_A, SHA, RANDOM]


def test_words_and_short_numbers_are_not_ids() -> None:
    assert opaque_ids("the_quick_brown_fox_jumps_over released 2024-01-15 build 1234") == []
    assert not looks_random("file_2024_report_final_version")
    assert looks_random(RANDOM)


def test_bare_id_list_is_unlabelled() -> None:
    text = json.dumps([UUID_A, UUID_B])
    assert unlabelled_id_chars(text) == len(UUID_A) + len(UUID_B)


def test_ids_with_names_in_the_same_object_are_labelled() -> None:
    text = json.dumps([{"id": UUID_A, "name": "Quarterly report"}, {"id": UUID_B, "title": "Budget"}])
    assert unlabelled_id_chars(text) == 0


def test_ids_whose_only_neighbour_is_another_id_are_unlabelled() -> None:
    text = json.dumps([{"id": UUID_A, "parent": UUID_B}])
    assert unlabelled_id_chars(text) == len(UUID_A) + len(UUID_B)


def test_id_keys_are_labelled_by_their_objects() -> None:
    labelled = json.dumps({UUID_A: {"name": "Ana"}})
    bare = json.dumps({UUID_A: {"size": 3}})
    assert unlabelled_id_chars(labelled) == 0
    assert unlabelled_id_chars(bare) == len(UUID_A)


def test_plain_text_lines_with_words_label_their_ids() -> None:
    assert unlabelled_id_chars(f"Created issue 'Fix login' as {UUID_A}") == 0
    assert unlabelled_id_chars(f"id: {UUID_A}\n{SHA}\n") == len(UUID_A) + len(SHA)


def test_hostile_nesting_does_not_crash() -> None:
    assert unlabelled_id_chars("[" * 100_000 + "]" * 100_000) == 0
    nested = json.dumps(UUID_A)
    for _ in range(500):
        nested = "[" + nested + "]"
    assert unlabelled_id_chars(nested) == 0  # beyond the depth bound nothing is counted


def _base64(size: int) -> str:
    import base64
    import random
    return base64.b64encode(random.Random(7).randbytes(size)).decode()


def test_a_resource_blob_or_image_data_is_content_not_ids() -> None:
    blob = _base64(90)  # 120 characters: short enough that only the MIME type says it is a payload
    resource = {"content": [{"type": "resource", "resource": {"uri": "file:///w/a.png", "mimeType": "image/png",
                                                              "blob": blob}}]}
    assert unlabelled_id_chars(json.dumps(resource)) == 0
    image = [{"type": "image", "mimeType": "image/png", "data": _base64(3_000)}]
    assert unlabelled_id_chars(json.dumps(image)) == 0
    assert unlabelled_id_chars(f"here: data:image/png;base64,{_base64(60)}\n{_base64(600)}") == 0


def test_near_miss_ids_beside_a_blob_or_a_data_key_without_mime_type_still_count() -> None:
    ids = [RANDOM, "Q7wE2rT9yU4iO1pA6sD3"]
    beside = {"blob": _base64(900), "mimeType": "application/octet-stream", "ids": ids}
    assert unlabelled_id_chars(json.dumps(beside)) == sum(map(len, ids))
    not_a_payload = {"data": [UUID_A, UUID_B]}  # no MIME type: `data` is only a key
    assert unlabelled_id_chars(json.dumps(not_a_payload)) == len(UUID_A) + len(UUID_B)
