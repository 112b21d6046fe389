import shardplan.torch
from tinylm import TinyLM  # your own model

model = TinyLM(device="meta")  # shapes only: nothing is allocated
doc = shardplan.torch.export(model, "dp=2,tp=4")  # the shardplan.v1 document, a dict
print(len(doc["modules"]), "modules,", len(doc["parameters"]), "parameters:", list(doc["parameters"])[:3])
tp = {"axis": "tp", "rules": {"embed": "embedding_rowwise", "layers.*.up": "colwise", "layers.*.down": "rowwise"}}
print(shardplan.torch.report(shardplan.torch.plan(model, "dp=2,tp=4", templates=[tp])), end="")
