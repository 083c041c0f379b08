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


def test_each_call_has_the_typescript_sdks_name():
    """The two SDKs name a call alike (the TypeScript name in snake_case), so it does the same in
    both: `claim.screenshot()` is the PNG in each, `screenshot_image` the JSON form."""
    sdk = ROOT.parents[1] / "packages" / "sdk" / "src"
    routes = (sdk / "generated" / "routes.ts").read_text()
    operation_id = dict(re.findall(r"(\w+): \{\s*operationId: '(\w+)'", routes))
    typescript = {
        operation_id[name]: method.rsplit(".", 1)[-1]
        for name, method in re.findall(r"^  (\w+): '([\w.]+)',$", (sdk / "method-map.ts").read_text(), re.M)
    }
    assert len(typescript) == len(operation_id), "packages/sdk/src/method-map.ts: not every operation read"
    python: dict = {}
    for module in (ROOT / "src" / "cubicle").glob("*_async.py"):
        method = r"^ +(?:async )?def (\w+)\((.*?)(?=^ +(?:async )?def |^class |\Z)"
        for name, body in re.findall(method, module.read_text(), re.M | re.S):
            for operation in set(re.findall(r'"([a-z][A-Za-z]+)"', body)) & set(typescript):
                python.setdefault(operation, set()).add(name.lstrip("_"))  # claims._create serves create
    snake = lambda name: re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), name)  # noqa: E731
    differ = {
        operation: (typescript[operation], sorted(python.get(operation, ())))
        for operation in typescript
        if snake(typescript[operation]) not in python.get(operation, set())
    }
    assert differ == {}, "operation: (TypeScript name, Python methods calling it)"


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
