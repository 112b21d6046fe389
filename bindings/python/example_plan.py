import shardplan

with shardplan.plan(open("../../examples/tiny-plan.json").read()) as result:
    print(result.ok, [d.code for d in result.diagnostics])
    for entry in result.plan_entries[:3]:
        print(f"{entry.fqn}: {entry.provenance}")
    m = result.memory
    print(m.devices, m.unsharded_bytes, m.max_bytes, m.per_device_bytes[:4])
    print(result.communication[0])
    print(result.to_dict()["collectives"])
