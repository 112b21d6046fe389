import shardplan

with shardplan.plan(open("../../tests/golden/cases/exceeds-device-memory.fail.json").read()) as result:
    t = result.training
    print(t.worst_device, t.worst_coordinates, [t.params, t.grads, t.master, t.optimizer, t.gathered, t.activations], t.total)
    print(t.max_total_bytes, t.min_total_bytes, t.mean_total_bytes, t.per_device_total_bytes[:2])
    print(result.diagnostics[0].code, shardplan.plan(open("../../examples/tiny-plan.json").read()).training)
try: shardplan.Builder().set_training({"zero": 4})
except shardplan.ShardplanError as e: print(e)
