"""The generated files match the contract: a changed openapi.json without a regenerated SDK fails
here (python3 clients/python/scripts/generate.py writes them)."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("generate", ROOT / "scripts" / "generate.py")
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)

# Operations the SDK deliberately leaves out (none today; a name here needs a reason beside it).
NOT_IN_SDK: set = set()


def test_generated_files_match_the_contract():
    assert generate.stale() == [], "run python3 clients/python/scripts/generate.py"


def test_a_contract_change_makes_the_models_stale():
    document = json.loads(generate.CONTRACT.read_text())
    changed = copy.deepcopy(document)
    changed["components"]["schemas"]["Claim"]["properties"]["new_field"] = {"type": "string"}
    changed["components"]["schemas"]["Claim"]["required"].append("new_field")
    before = generate.render_models(document)
    after = generate.render_models(changed)
    assert before != after and "new_field: str" in after


def test_every_operation_is_in_the_sdk_or_named_as_left_out():
    from cubicle._operations import OPERATIONS

    source = "".join(f.read_text() for f in (ROOT / "src" / "cubicle").glob("*_async.py"))
    used = set(re.findall(r'"([a-z][A-Za-z]+)"', source)) & set(OPERATIONS)
    missing = set(OPERATIONS) - used - NOT_IN_SDK
    assert missing == set(), f"operations without an SDK call: {sorted(missing)}"
    assert NOT_IN_SDK <= set(OPERATIONS), sorted(NOT_IN_SDK - set(OPERATIONS))


def test_every_generated_annotation_resolves():
    """Each TypedDict's fields and each alias name real types (no dangling forward reference)."""
    import typing

    from cubicle import _models

    namespace = vars(_models)
    for name in _models.__all__:
        value = namespace[name]
        if isinstance(value, str):  # a quoted alias
            eval(value, namespace)
        elif typing.is_typeddict(value):
            typing.get_type_hints(value, globalns=namespace)
