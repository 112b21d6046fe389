import shardplan

result = shardplan.check(open("../../examples/tiny-llama-broken.json").read())
print(result.ok, [(d.code, d.fqn) for d in result.diagnostics[:2]])
b = shardplan.Builder().add_axis("tp", 2).add_parameter("w", [4, 4])
b.add_module("root").add_child("root", "lin", "lin").set_root("root")
b.add_module("lin").add_forward_arg("lin", "x").add_module_param("lin", "weight", "w")
b.add_provider("lin", {"params": {"weight": {"tp": "P"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}})
with b.build() as doc, doc.check() as checked:
    print(checked.diagnostics[0])
