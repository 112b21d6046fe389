import shardplan

result = shardplan.check(open("../../examples/tiny-llama-broken.json").read())
d = result.diagnostic(2)
print(d.code, "help:", d.help)
print([op.to_dict() for op in d.fix])
print([(g.code, g.count, g.listed) for g in result.groups])
glob = open("../../tests/golden/cases/overlapping-communication.glob.fail.json").read()
print([(g.code, g.count, g.listed) for g in shardplan.check(glob).groups[1:3]])
