"""adversarial.py's documents are what its families say: n rules, n
patterns, n modules deep, n paths, n devices, n FSDP units."""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import adversarial  # noqa: E402


def paths(doc):
    """Module paths of the document's tree, shared submodules repeated."""
    modules = doc["modules"]

    def count(module):
        return 1 + sum(count(child) for child in modules[module].get("children", {}).values())

    return count(doc["root"])


def test_every_family_makes_a_document_of_its_size():
    n = 16
    doc, command = adversarial.template_rules(n)
    assert command == "plan" and len(doc["templates"][0]["rules"]) == n
    doc, command = adversarial.native_globs(n)
    patterns = doc["providers"]["native"][0]["match"]
    assert command == "check" and len(patterns) == n and all(p.startswith("*") for p in patterns)
    doc, _ = adversarial.native_requests(n)
    assert len(doc["providers"]["native"]) == n
    doc, _ = adversarial.deep_tree(n)
    assert paths(doc) == n + 1
    doc, _ = adversarial.wide_module(n)
    assert len(doc["modules"]["r"]["params"]) == n == len(doc["providers"]["sharding"][""]["params"])
    doc, _ = adversarial.shared_paths(n)
    assert paths(doc) == 2 * n - 1
    doc, _ = adversarial.huge_mesh(n)
    assert math.prod(doc["mesh"].values()) == n
    doc, command = adversarial.fsdp_units(n)
    assert command == "plan" and doc["training"] == {"zero": 3, "fsdp_units": ["layers.*"]}
    assert len(doc["modules"]["layers"]["children"]) == n and math.prod(doc["mesh"].values()) == 1 << 20


def test_every_family_is_listed():
    assert set(adversarial.FAMILIES) == {
        "template-rules", "native-globs", "native-requests", "deep-tree", "wide-module", "shared-paths", "huge-mesh",
        "fsdp-units"}
