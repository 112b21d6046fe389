#!/usr/bin/python3
"""Self-tests of training_reference.py on hand-made documents.

Run:  /usr/bin/python3 -m pytest tools/reference/training_reference_test.py
  or  python3 tools/reference/training_reference_test.py
"""

import copy
import json
import os
import sys
import unittest
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import planner_reference as planner  # noqa: E402
import training_reference as tr  # noqa: E402

GiB = 1 << 30


def doc(mesh, params, modules, root="m0", training=None, **extra):
    """A shardplan.v1 document; `params` {pid: (shape, dtype)}, `modules` {mid: dict}."""
    d = {"schema": "shardplan.v1", "mesh": mesh,
         "parameters": {pid: ({"shape": s, "dtype": t} if s is not None else {"dtype": t})
                        for pid, (s, t) in params.items()},
         "root": root, "modules": modules}
    if training is not None:
        d["training"] = training
    d.update(extra)
    return d


def linear_model(n_params, shape, dtype="bfloat16"):
    """Root m0 with children l0..l{n-1}, each a Linear with one weight of `shape`."""
    params = {f"p{i}": (shape, dtype) for i in range(n_params)}
    modules = {"m0": {"type": "Model", "children": {f"l{i}": f"m{i + 1}" for i in range(n_params)}}}
    for i in range(n_params):
        modules[f"m{i + 1}"] = {"type": "Linear", "forward": ["x"], "params": {"weight": f"p{i}"}}
    return params, modules


def override(fqn, placements):
    return {fqn: {"params": {"weight": placements}, "in_src": {}, "in_dst": {}}}


def run(d):
    return tr.run_document(copy.deepcopy(d))


class Base(unittest.TestCase):
    def training(self, d):
        res = run(d)
        self.assertTrue(res["complete"], res["diagnostics"])
        self.assertIn("training", res)
        return res


class ZeroPaper(Base):
    """Rajbhandari et al., ZeRO (2020), mixed-precision Adam: 2 + 2 + 12 bytes per parameter."""
    ND = 8
    PSI = 3 * 64 * 32       # three [64, 32] weights, dim 0 divisible by Nd

    def states(self, zero):
        params, modules = linear_model(3, [64, 32])
        d = doc({"dp": self.ND}, params, modules, training={
            "zero": zero, "shard_axes": ["dp"], "optimizer": "adamw",
            "optimizer_dtype": "float32", "master_dtype": "float32", "grad_dtype": "bfloat16"})
        res = self.training(d)
        w = res["training"]["worst"]
        return w, res

    def test_zero0(self):
        w, _ = self.states(0)
        self.assertEqual(w["params"] + w["grads"] + w["master"] + w["optimizer"], 16 * self.PSI)
        self.assertEqual((w["params"], w["grads"], w["master"], w["optimizer"]),
                         (2 * self.PSI, 2 * self.PSI, 4 * self.PSI, 8 * self.PSI))
        self.assertEqual(w["gathered"], 0)

    def test_zero1(self):
        w, _ = self.states(1)
        self.assertEqual(w["params"] + w["grads"] + w["master"] + w["optimizer"],
                         (2 + 2) * self.PSI + 12 * self.PSI // self.ND)
        self.assertEqual(w["gathered"], 0)

    def test_zero2(self):
        w, _ = self.states(2)
        self.assertEqual(w["params"] + w["grads"] + w["master"] + w["optimizer"],
                         2 * self.PSI + (2 + 12) * self.PSI // self.ND)

    def test_zero3(self):
        w, res = self.states(3)
        self.assertEqual(w["params"] + w["grads"] + w["master"] + w["optimizer"],
                         (2 + 2 + 12) * self.PSI // self.ND)
        # no fsdp_units: one root unit holding everything; prefetch 1 by default
        self.assertEqual(w["gathered"], 2 * (2 * self.PSI) + 2 * self.PSI)
        t = res["training"]
        self.assertEqual(t["per_device_total_bytes"], [w["total"]] * self.ND)
        self.assertEqual(t["max_total_bytes"], t["min_total_bytes"])
        self.assertEqual(t["mean_total_bytes"], float(w["total"]))

    def test_default_shard_axes_is_dp(self):
        params, modules = linear_model(1, [64, 32])
        d = doc({"tp": 2, "dp": 4}, params, modules, training={"zero": 1})
        w = self.training(d)["training"]["worst"]
        # adamw float32 states over dp=4, no master, grads bf16 (the parameter's dtype)
        self.assertEqual(w["optimizer"], 2 * 4 * 64 * 32 // 4)
        self.assertEqual(w["grads"], 2 * 64 * 32)
        self.assertEqual(w["coordinates"], {"tp": 0, "dp": 0})
        d = doc({"tp": 2}, params, modules, training={"zero": 1})
        w = self.training(d)["training"]["worst"]
        self.assertEqual(w["optimizer"], 2 * 4 * 64 * 32)   # no dp axis: shard_axes []


class Padding(Base):
    def test_fsdp2_padding(self):
        # dim 0 of 10 over W = 4: ceil(10 / 4) = 3 rows on every device (the last one padded)
        params, modules = linear_model(1, [10, 6], "float32")
        d = doc({"dp": 4}, params, modules,
                training={"zero": 3, "optimizer": "none"})
        t = self.training(d)["training"]
        self.assertEqual(t["worst"]["params"], 3 * 6 * 4)
        self.assertEqual(t["worst"]["grads"], 0)
        self.assertEqual(t["worst"]["gathered"], 2 * 10 * 6 * 4)
        self.assertEqual(t["per_device_total_bytes"], [72 + 480] * 4)

    def test_scalar_and_unknown_and_empty(self):
        params = {"s": ([], "float32"), "u": (None, "float32"), "e": ([0, 5], "float32"),
                  "w": ([3, 2], "float32")}
        modules = {"m0": {"type": "M", "params": {"s": "s", "u": "u", "e": "e", "w": "w"}}}
        d = doc({"dp": 4}, params, modules, training={"zero": 3, "optimizer": "sgd"})
        w = self.training(d)["training"]["worst"]
        # scalar: z = n = 1; unknown: 0; empty: 0; w: ceil(3/4) = 1 row of 2
        self.assertEqual(w["params"], (1 + 0 + 0 + 2) * 4)
        self.assertEqual(w["grads"], (1 + 2) * 4)
        self.assertEqual(w["optimizer"], 0)

    def test_axis_already_sharding_not_counted(self):
        params, modules = linear_model(1, [8, 4], "float32")
        d = doc({"dp": 2, "tp": 2}, params, modules,
                overrides=override("l0", {"tp": "S(0)"}),
                training={"zero": 3, "shard_axes": ["dp", "tp"], "optimizer": "none"})
        t = self.training(d)["training"]
        # local [4, 4] under tp; W = 2 (dp only, tp already shards it): ceil(4/2) * 4 = 8
        self.assertEqual(t["worst"]["params"], 8 * 4)
        # S(1) on tp: local [8, 2], W = 2 over dim 0: 4 rows of 2
        d["overrides"] = override("l0", {"tp": "S(1)"})
        self.assertEqual(self.training(d)["training"]["worst"]["params"], 4 * 2 * 4)
        # replicated: W = 4: 2 rows of 4
        d["overrides"] = override("l0", {"tp": "R"})
        self.assertEqual(self.training(d)["training"]["worst"]["params"], 2 * 4 * 4)

    def test_uneven_plan_shard_then_padding(self):
        # [10, 2] S(0) over tp=4: torch.chunk gives 3, 3, 3, 1 rows; dp=2 pads each to ceil(r/2)
        params, modules = linear_model(1, [10, 2], "float32")
        d = doc({"tp": 4, "dp": 2}, params, modules,
                overrides=override("l0", {"tp": "S(0)"}),
                training={"zero": 3, "optimizer": "none", "prefetch": 0})
        t = self.training(d)["training"]
        per = t["per_device_total_bytes"]
        # device = tp * 2 + dp; params ceil(r/2)*2*4, gathered r*2*4
        rows = [3, 3, 3, 1]
        want = []
        for r in rows:
            for _dp in range(2):
                want.append(-(-r // 2) * 2 * 4 + r * 2 * 4)
        self.assertEqual(per, want)
        self.assertEqual(t["min_total_bytes"], min(want))
        self.assertEqual(t["worst"]["device"], 0)

    def test_choice_partial_and_out_of_range_not_counted(self):
        # choice 3: only R or absent count in W
        params, modules = linear_model(1, [8, 4], "float32")
        d = doc({"dp": 2}, params, modules, overrides=override("l0", {"dp": "S(5)"}),
                training={"zero": 3, "optimizer": "none"})
        res = run(d)
        self.assertEqual(res["training"]["worst"]["params"], 8 * 4 * 4)   # W = 1


class Frozen(Base):
    def tied(self, training):
        params = {"emb": ([16, 4], "float32"), "n": ([4], "float32")}
        modules = {"m0": {"type": "LM", "children": {"embed": "m1", "norm": "m2", "head": "m3"}},
                   "m1": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
                   "m2": {"type": "Norm", "forward": ["x"], "params": {"weight": "n"}},
                   "m3": {"type": "Linear", "forward": ["x"], "params": {"weight": "emb"}}}
        return doc({"dp": 1}, params, modules, training=training)

    def test_tied_counted_once(self):
        w = self.training(self.tied({"optimizer": "sgd"}))["training"]["worst"]
        self.assertEqual(w["params"], (64 + 4) * 4)
        self.assertEqual(w["grads"], (64 + 4) * 4)

    def test_frozen_by_alias(self):
        res = self.training(self.tied({"frozen": ["head.weight", "nothing.here"],
                                       "master_dtype": "float32"}))
        w = res["training"]["worst"]
        self.assertEqual(w["params"], 68 * 4)
        self.assertEqual(w["grads"], 4 * 4)
        self.assertEqual(w["master"], 4 * 4)
        self.assertEqual(w["optimizer"], 2 * 4 * 4)
        self.assertEqual(res["training_diagnostics"], [
            ["training-pattern-no-match", "warning",
             "training.frozen pattern 'nothing.here' matches no parameter"]])

    def test_frozen_star(self):
        w = self.training(self.tied({"frozen": ["*.weight"]}))["training"]["worst"]
        self.assertEqual((w["grads"], w["optimizer"]), (0, 0))

    def test_optimizer_none(self):
        w = self.training(self.tied({"optimizer": "none", "master_dtype": "float32",
                                     "zero": 3}))["training"]["worst"]
        self.assertEqual((w["grads"], w["master"], w["optimizer"]), (0, 0, 0))
        self.assertEqual(w["params"], 68 * 4)
        self.assertEqual(w["gathered"], 2 * 68 * 4)   # G_g = 0: nothing trained

    def test_momentum_states(self):
        w = self.training(self.tied({"optimizer": "momentum",
                                     "optimizer_dtype": "bfloat16"}))["training"]["worst"]
        self.assertEqual(w["optimizer"], 68 * 2)


class Gathered(Base):
    def model(self, training):
        # root: layers (ModuleList) -> 0, 1 (Block: attn Linear [8, 4], mlp Linear [16, 4]);
        # head [6, 4] at root level; all bfloat16
        params = {"a0": ([8, 4], "bfloat16"), "f0": ([16, 4], "bfloat16"),
                  "a1": ([8, 4], "bfloat16"), "f1": ([16, 4], "bfloat16"),
                  "h": ([6, 4], "bfloat16")}
        modules = {"m0": {"type": "LM", "children": {"layers": "L", "head": "H"}},
                   "L": {"type": "ModuleList", "children": {"0": "B0", "1": "B1"}},
                   "B0": {"type": "Block", "children": {"attn": "A0", "mlp": "F0"}},
                   "B1": {"type": "Block", "children": {"attn": "A1", "mlp": "F1"}},
                   "A0": {"type": "Linear", "params": {"weight": "a0"}},
                   "F0": {"type": "Linear", "params": {"weight": "f0"}},
                   "A1": {"type": "Linear", "params": {"weight": "a1"}},
                   "F1": {"type": "Linear", "params": {"weight": "f1"}},
                   "H": {"type": "Linear", "params": {"weight": "h"}}}
        return doc({"dp": 2}, params, modules, training=training)

    def test_units_and_prefetch(self):
        for prefetch in (0, 1, 2):
            d = self.model({"zero": 3, "fsdp_units": ["layers.*"], "prefetch": prefetch,
                            "grad_dtype": "float32"})
            w = self.training(d)["training"]["worst"]
            # units: layers.0, layers.1 = (32 + 64) elements each; root = head 24
            self.assertEqual(w["gathered"], (1 + prefetch) * 96 * 2 + 96 * 4)

    def test_nested_longest_wins(self):
        d = self.model({"zero": 3, "fsdp_units": ["layers.*", "layers.*.mlp"], "prefetch": 1})
        w = self.training(d)["training"]["worst"]
        # units: layers.i (attn 32), layers.i.mlp (64), root (24): max 64 elements
        self.assertEqual(w["gathered"], 2 * 64 * 2 + 64 * 2)

    def test_root_unit_largest(self):
        d = self.model({"zero": 3, "fsdp_units": ["layers.*.attn", "layers.*.mlp", "zz.*", ""]})
        res = self.training(d)
        w = res["training"]["worst"]
        # root unit keeps the head only: 24 < 64
        self.assertEqual(w["gathered"], 2 * 64 * 2 + 64 * 2)
        self.assertEqual([m for _, _, m in res["training_diagnostics"]], [
            "training.fsdp_units pattern 'zz.*' matches no module",
            "training.fsdp_units pattern '' matches no module"])

    def test_frozen_not_in_grad_gather(self):
        d = self.model({"zero": 3, "fsdp_units": ["layers.*"], "frozen": ["layers.0.mlp.weight"]})
        w = self.training(d)["training"]["worst"]
        # G_p max 96 (either layer); G_g: layers.0 = 32, layers.1 = 96
        self.assertEqual(w["gathered"], 2 * 96 * 2 + 96 * 2)

    def test_no_gather_below_zero3(self):
        d = self.model({"zero": 2, "fsdp_units": ["layers.*"]})
        self.assertEqual(self.training(d)["training"]["worst"]["gathered"], 0)


def paper_layer(s, b, h, a, t, sp, recompute):
    """Korthikanti et al. 2022, Table 2: activation bytes per layer."""
    if recompute == "full":
        return Fraction(2 * s * b * h, t if sp else 1)
    if sp:
        x = Fraction(34, t)
    else:
        x = 10 + Fraction(24, t)
    if recompute == "none":
        x += Fraction(5 * a * s, h * t)
    return s * b * h * x


class Activations(Base):
    def act(self, model, activations, mesh=None):
        params, modules = linear_model(1, [4, 4])
        d = doc(mesh or {"tp": 8}, params, modules,
                training={"model": model, "activations": activations, "optimizer": "none"})
        return self.training(d)["training"]["worst"]["activations"]

    def test_paper_table2(self):
        # GPT-3 175B of the paper: a = 96, h = 12288, s = 2048, t = 8, L = 96
        s, b, h, a, L, v, t = 2048, 1, 12288, 96, 96, 51200, 8
        model = {"hidden_size": h, "num_attention_heads": a, "intermediate_size": 4 * h,
                 "gated_mlp": False, "num_hidden_layers": L, "vocab_size": v}
        for sp in (False, True):
            for rc in ("none", "selective", "full"):
                got = self.act(model, {"seq_len": s, "micro_batch": b, "recompute": rc,
                                       "sequence_parallel": sp})
                tsp = t if sp else 1
                extra = Fraction(s * b * h, tsp) + Fraction(4 * s * b * h, tsp) \
                    + Fraction(4 * s * b * v, t)
                want = L * paper_layer(s, b, h, a, t, sp, rc) + extra
                self.assertEqual(got, -(-want.numerator // want.denominator), (sp, rc))
                # the per-layer figure of the paper, on its own (1 layer, no embedding/output)
        one = {"hidden_size": h, "num_attention_heads": a, "intermediate_size": 4 * h,
               "gated_mlp": False, "num_hidden_layers": 1, "vocab_size": 1}
        got = self.act(one, {"seq_len": s, "recompute": "none"})
        self.assertEqual(got, -(-(paper_layer(s, b, h, a, t, False, "none") * t
                                  + 5 * s * b * h * t + 4 * s * b) // t))

    def test_gqa_moe_by_hand(self):
        # h 16, a 4, kv 2, d 8 (a*d = 32 != h), f 24 gated, E 8, k 2, fe 12, ns 1,
        # 3 layers, the first dense; v 50; s 6, b 2; tp 3 with sequence parallelism
        m = {"hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 2,
             "head_dim": 8, "intermediate_size": 24, "num_hidden_layers": 3, "vocab_size": 50,
             "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 12,
             "num_shared_experts": 1, "first_k_dense_replace": 1}
        s, b, h, a, kv, d, f, g, k, fe, ns, v, t = 6, 2, 16, 4, 2, 8, 24, 4, 2, 12, 1, 50, 3
        for sp in (False, True):
            tsp = t if sp else 1
            F = Fraction
            attn = F(3 * s * b * h, tsp) + F(2 * s * b * (2 * a * d + 2 * kv * d), t) \
                + F(4 * s * b * h, tsp)
            scores = F(5 * a * s * s * b, t)
            dense = F(3 * s * b * h, tsp) + F(2 * s * b * f * g, t)
            moe = F(3 * s * b * h, tsp) + F(2 * s * b * k * h, tsp) + F(2 * s * b * k * fe * g, t) \
                + F(2 * s * b * ns * fe * g, t)
            ends = F(s * b * h, tsp) + F(4 * s * b * h, tsp) + F(4 * s * b * v, t)
            for rc in ("none", "selective", "full"):
                if rc == "full":
                    layers = 3 * F(2 * s * b * h, tsp)
                else:
                    sc = scores if rc == "none" else 0
                    layers = (attn + sc + dense) + 2 * (attn + sc + moe)
                want = layers + ends
                got = self.act(m, {"seq_len": s, "micro_batch": b, "recompute": rc,
                                   "sequence_parallel": sp}, mesh={"dp": 2, "tp": 3})
                self.assertEqual(got, -(-want.numerator // want.denominator), (sp, rc))

    def test_tensor_axis(self):
        m = {"hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8,
             "num_hidden_layers": 1, "vocab_size": 3}
        base = {"seq_len": 5}
        t1 = self.act(m, dict(base, tensor_axis=None), mesh={"tp": 4, "ep": 2})
        t_default = self.act(m, base, mesh={"tp": 4, "ep": 2})
        t_ep = self.act(m, dict(base, tensor_axis="ep"), mesh={"tp": 4, "ep": 2})
        t_none = self.act(m, base, mesh={"ep": 2})      # no tp axis: t = 1
        self.assertEqual(t1, t_none)
        self.assertGreater(t1, t_ep)
        self.assertGreater(t_ep, t_default)

    def test_same_on_every_device_and_in_total(self):
        params, modules = linear_model(1, [4, 4], "float32")
        d = doc({"tp": 2, "dp": 2}, params, modules, overrides=override("l0", {"tp": "S(0)"}),
                training={"optimizer": "none", "activations": {"seq_len": 3},
                          "model": {"hidden_size": 4, "num_attention_heads": 1,
                                    "intermediate_size": 4, "num_hidden_layers": 1,
                                    "vocab_size": 2}})
        t = self.training(d)["training"]
        act = t["worst"]["activations"]
        self.assertEqual(t["per_device_total_bytes"], [act + 32] * 4)


class Consistency(unittest.TestCase):
    def test_params_equal_planner_memory(self):
        """optimizer none, zero 0, no activations: the total is the planner's memory."""
        import gen_plan_documents as gp
        checked = 0
        for i in range(60):
            d = gp.generate_doc(7, i)
            d["training"] = {"optimizer": "none", "zero": 0}
            res = tr.run_document(copy.deepcopy(d))
            if not res["complete"] or res.get("memory") is None:
                continue
            self.assertEqual(res["training"]["per_device_total_bytes"],
                             res["memory"]["per_device_bytes"], i)
            self.assertEqual(res["training"]["max_total_bytes"], res["memory"]["max_bytes"])
            checked += 1
        self.assertGreater(checked, 20)

    def test_no_training_unchanged(self):
        import gen_plan_documents as gp
        for i in range(20):
            d = gp.generate_doc(3, i)
            want = planner.run_document(copy.deepcopy(d))
            got = tr.run_document(copy.deepcopy(d))
            self.assertEqual(got.pop("training_diagnostics"), [])
            self.assertEqual(got, want)

    def test_zero_monotone(self):
        """More sharding never adds model states (zero 3's gathered bytes aside)."""
        import gen_plan_documents as gp
        for i in range(30):
            d = gp.generate_doc(11, i)
            states = []
            for z in range(4):
                d["training"] = {"zero": z, "shard_axes": list(d["mesh"]),
                                 "master_dtype": "float32"}
                res = tr.run_document(copy.deepcopy(d))
                if not res["complete"] or "training" not in res:
                    break
                w = res["training"]["worst"]
                states.append(w["total"] - w["gathered"])
            for a, b in zip(states, states[1:]):
                self.assertGreaterEqual(a, b, i)


class Verdict(Base):
    def model(self, training, mesh=None, **extra):
        # 4 float32 weights [16, 16] (1024 bytes each) on dp=4, tp=2
        params, modules = linear_model(4, [16, 16], "float32")
        return doc(mesh or {"dp": 4, "tp": 2}, params, modules, training=training, **extra)

    def totals(self, training, mesh=None):
        t = self.training(self.model(training, mesh))["training"]
        return t["max_total_bytes"]

    def test_exceeds_with_alternatives(self):
        base = {"zero": 0, "shard_axes": ["dp"], "optimizer": "adamw"}
        # zero 0: 4 x 256 elements x (4 + 4 + 8) = 16384
        self.assertEqual(self.totals(base), 16384)
        t1 = self.totals(dict(base, zero=1))          # 4 * 256 * 8 + 4*256*8/4 = 10240
        self.assertEqual(t1, 10240)
        t_axes = self.totals(dict(base, shard_axes=["dp", "tp"]))
        self.assertEqual(t_axes, 16384)               # zero 0: shard_axes changes nothing
        res = run(self.model(dict(base, device_memory=12000)))
        self.assertFalse(res["ok"])
        self.assertEqual(res["training_diagnostics"], [[
            "exceeds-device-memory", "error",
            "device 0 (dp=0, tp=0) needs 0.00 GiB (16384 bytes) for training, more than "
            "device_memory 0.00 GiB (12000 bytes); it would fit with: zero 1 (0.00 GiB)"]])
        self.assertEqual(res["diagnostics"][-1], res["training_diagnostics"][0])

    def test_lowest_fitting_stage_and_axis(self):
        base = {"zero": 1, "shard_axes": ["dp"], "device_memory": 9500}
        # zero 1 over dp: 4*256*(4 + 4 + 8/4) = 10240 > 9500; zero 2 over dp:
        # 4*256*(4 + 4/4 + 8/4) = 7168 <= 9500: named (zero 3 not); zero 1 over dp and tp:
        # 4*256*(4 + 4 + 8/8) = 9216 <= 9500
        self.assertEqual(self.totals(dict(base, zero=3)), 4 * 256 * 16 // 4 + 3 * 4 * 1024)
        res = run(self.model(base))
        msg = res["training_diagnostics"][0][2]
        self.assertTrue(msg.endswith("; it would fit with: zero 2 (0.00 GiB), shard_axes "
                                     "['dp', 'tp'] (0.00 GiB)"), msg)
        # at 9000 the extra axis does not fit
        res = run(self.model(dict(base, device_memory=9000)))
        self.assertEqual(res["training_diagnostics"][0][2].split("; ")[1],
                         "it would fit with: zero 2 (0.00 GiB)")
        # at 7000: zero 2 (7168), zero 3 (16384 with the gathered bytes) and dp+tp (9216) do not fit
        res = run(self.model(dict(base, device_memory=7000)))
        self.assertTrue(res["training_diagnostics"][0][2].endswith(
            "; no higher zero stage, added shard axis or full recompute makes it fit"))

    def test_none_fits(self):
        res = run(self.model({"zero": 3, "shard_axes": ["dp", "tp"], "device_memory": "1KB"}))
        self.assertEqual(res["training_diagnostics"][0][2],
                         "device 0 (dp=0, tp=0) needs 0.00 GiB (14336 bytes) for training, more "
                         "than device_memory 0.00 GiB (1000 bytes); no higher zero stage, added "
                         "shard axis or full recompute makes it fit")

    def test_near(self):
        res = run(self.model({"device_memory": 17000}))   # 16384 > 0.8 * 17000
        self.assertTrue(res["ok"])
        self.assertEqual(res["training_diagnostics"], [[
            "near-device-memory", "warning",
            "device 0 (dp=0, tp=0) needs 0.00 GiB (16384 bytes) for training, more than "
            "headroom 0.8 x device_memory 0.00 GiB (17000 bytes); it would fit with: zero 1 "
            "(0.00 GiB)"]])
        # near: a change fits when it is within the headroom (zero 1: 10240 <= 13600; adding tp
        # at zero 0 changes nothing and is not named)
        res = run(self.model({"device_memory": 17000, "headroom": 1}))
        self.assertEqual(res["training_diagnostics"], [])
        res = run(self.model({"device_memory": 16384, "headroom": 1}))   # not more than
        self.assertEqual(res["training_diagnostics"], [])
        res = run(self.model({"device_memory": 16385, "headroom": 0.9999}))
        self.assertIn("headroom 0.9999 x device_memory", res["training_diagnostics"][0][2])

    def test_near_exact_boundary(self):
        # 0.8 x 20480 = 16384: not more than
        res = run(self.model({"device_memory": 20480}))
        self.assertEqual(res["training_diagnostics"], [])
        res = run(self.model({"device_memory": 20479}))
        self.assertEqual(res["training_diagnostics"][0][0], "near-device-memory")
        # choice 2: the product of two doubles, compared exactly with the integer total
        self.assertTrue(tr.more_than_headroom(10 ** 17 + 1, 0.5, 2 * 10 ** 17))
        self.assertFalse(tr.more_than_headroom(10 ** 17, 0.5, 2 * 10 ** 17))
        self.assertEqual(tr.number_text(0.8), "0.8")
        self.assertEqual(tr.number_text(1), "1")
        self.assertTrue(tr.more_than_headroom(19, 0.9499, 20))
        self.assertFalse(tr.more_than_headroom(8, 0.8, 10))
        self.assertTrue(tr.more_than_headroom(9, 0.8, 10))
        self.assertFalse(tr.more_than_headroom(10, 1, 10))

    def test_gib_and_recompute(self):
        params, modules = linear_model(1, [1024, 1024], "bfloat16")
        act = {"seq_len": 4096, "micro_batch": 2, "recompute": "selective"}
        model = {"hidden_size": 4096, "num_attention_heads": 32, "intermediate_size": 11008,
                 "num_hidden_layers": 32, "vocab_size": 32000}
        d = doc({"dp": 8}, params, modules, training={
            "zero": 3, "activations": act, "model": model, "device_memory": "80GiB"})
        res = self.training(d)
        w = res["training"]["worst"]
        d["training"]["device_memory"] = w["total"] - 1
        res = run(d)
        full = res["training"]["worst"]["total"] - w["activations"] + \
            tr.activation_bytes(tr.parse_model(model, ""), tr.parse_activations(act, "", {"dp": 8}),
                                1, "full")
        msg = res["training_diagnostics"][0][2]
        self.assertEqual(msg, f"device 0 (dp=0) needs {w['total'] / GiB:.2f} GiB ({w['total']} "
                              f"bytes) for training, more than device_memory "
                              f"{(w['total'] - 1) / GiB:.2f} GiB ({w['total'] - 1} bytes); it "
                              f"would "
                              f"fit with: recompute 'full' ({full / GiB:.2f} GiB)")
        self.assertGreater(w["activations"], 10 * GiB)

    def test_check_severity(self):
        params, modules = linear_model(2, [16, 16], "float32")
        d = doc({"dp": 2}, params, modules, plan={"modules": {
            "l0": {"params": {"weight": {"dp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
                training={"device_memory": 100})
        res = self.training(d)
        self.assertNotIn("memory", res)                   # the planner makes no plan here
        self.assertEqual(res["training_diagnostics"][0][:2], ["exceeds-device-memory", "warning"])
        self.assertTrue(res["ok"])
        # l0 S(0) over dp: 128 elements; l1 256: x (4 + 4 + 8)
        self.assertEqual(res["training"]["worst"]["total"], (128 + 256) * 16)

    def test_gib_rounding(self):
        self.assertEqual(tr.gib(93.41 * GiB), "93.41 GiB")
        self.assertEqual(tr.gib(85899345920), "80.00 GiB")
        self.assertEqual(tr.gib(0), "0.00 GiB")
        self.assertEqual(tr.number_text(0.8), "0.8")
        self.assertEqual(tr.number_text(1), "1")
        self.assertEqual(tr.number_text(1.0), "1")


class DeviceMemory(unittest.TestCase):
    def test_units(self):
        cases = {"80GiB": 80 * GiB, "141GB": 141 * 10 ** 9, "1.5KiB": 1536, "1B": 1,
                 "1.9B": 1, "0.001KB": 1, "2TiB": 2 << 40, "3MB": 3 * 10 ** 6, "7MiB": 7 << 20,
                 "1.25TB": 125 * 10 ** 10, "007KB": 7000, "0.0000000001TiB": 109, 5: 5,
                 (1 << 63) - 1: (1 << 63) - 1, "8388607.99TiB": 9223372025859659530}
        for text, want in cases.items():
            self.assertEqual(tr.parse_device_memory(text, "/x"), want, text)

    def test_invalid(self):
        for bad in ["80 GiB", "80gib", "80GIB", "0B", "0.4B", "1.GiB", ".5GiB", "GiB", "80",
                    "-1GiB", "1e3B", "80GiB ", "8388608TiB", "1PiB", 0, -1, 1 << 63, 80.5, 80.0,
                    True, None, [], "１GiB"]:
            with self.assertRaises(tr.InvalidDocument, msg=repr(bad)):
                tr.parse_device_memory(bad, "/x")


class Invalid(unittest.TestCase):
    MODEL = {"hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8,
             "num_hidden_layers": 2, "vocab_size": 4}

    def base(self, training):
        params, modules = linear_model(1, [4, 4])
        d = doc({"dp": 2, "tp": 2}, params, modules)
        d["training"] = training
        return d

    def test_valid_variants(self):
        for t in [{}, {"zero": 3}, {"shard_axes": []}, {"shard_axes": ["tp", "dp"]},
                  {"master_dtype": None}, {"grad_dtype": None}, {"activations": None},
                  {"model": self.MODEL}, {"frozen": []}, {"prefetch": 64}, {"headroom": 1},
                  {"headroom": 0.01}, {"optimizer_dtype": "int8"},
                  {"model": self.MODEL, "activations": {"seq_len": 1, "tensor_axis": None}},
                  {"model": dict(self.MODEL, num_experts=0, num_experts_per_tok=5),
                   "activations": {"seq_len": 1, "tensor_axis": "dp"}},
                  {"model": dict(self.MODEL, first_k_dense_replace=2)}]:
            res = run(self.base(t))
            self.assertTrue(res["complete"], (t, res["diagnostics"]))

    def test_invalid(self):
        M = self.MODEL
        bad = [None, [], {"zeros": 1},
               {"model": dict(M, num_key_value_heads=0)}, {"model": dict(M, head_dim=0)},
               {"model": dict(M, hidden_size=1)}, {"zero": 4}, {"zero": -1}, {"zero": "3"}, {"zero": 1.0},
               {"zero": True}, {"zero": None}, {"shard_axes": "dp"}, {"shard_axes": ["pp"]},
               {"shard_axes": ["dp", "dp"]}, {"shard_axes": [1]}, {"shard_axes": None},
               {"optimizer": "adafactor"}, {"optimizer": None}, {"optimizer": "AdamW"},
               {"optimizer_dtype": "fp32"}, {"optimizer_dtype": None},
               {"optimizer_dtype": "float64"}, {"master_dtype": "float64"},
               {"grad_dtype": "half"}, {"grad_dtype": 2}, {"frozen": "x"}, {"frozen": [1]},
               {"frozen": None}, {"fsdp_units": {}}, {"fsdp_units": [None]}, {"prefetch": -1},
               {"prefetch": 65}, {"prefetch": 1.5}, {"prefetch": None},
               {"activations": {"seq_len": 8}},
               {"model": M, "activations": {}}, {"model": M, "activations": {"seq_len": 0}},
               {"model": M, "activations": {"seq_len": 8, "micro_batch": 0}},
               {"model": M, "activations": {"seq_len": 8, "recompute": "partial"}},
               {"model": M, "activations": {"seq_len": 8, "recompute": None}},
               {"model": M, "activations": {"seq_len": 8, "tensor_axis": "pp"}},
               {"model": M, "activations": {"seq_len": 8, "tensor_axis": 1}},
               {"model": M, "activations": {"seq_len": 8, "sequence_parallel": "yes"}},
               {"model": M, "activations": {"seq_len": 8, "extra": 1}},
               {"model": M, "activations": []},
               {"model": None}, {"model": {}}, {"model": dict(M, hidden_size=0)},
               {"model": dict(M, vocab_size=1 << 31)}, {"model": dict(M, num_experts=-1)},
               {"model": dict(M, num_experts=2, num_experts_per_tok=3)},
               {"model": dict(M, first_k_dense_replace=3)}, {"model": dict(M, gated_mlp=1)},
               {"model": dict(M, rope_theta=10000)}, {"model": dict(M, head_dim=2.0)},
               {"device_memory": "80 GiB"}, {"device_memory": 0}, {"device_memory": None},
               {"device_memory": 1.5}, {"headroom": 0}, {"headroom": 1.5}, {"headroom": "0.8"},
               {"headroom": -0.1}, {"headroom": None}, {"headroom": True}]
        for t in bad:
            res = run(self.base(t))
            self.assertFalse(res["complete"], t)
            self.assertEqual(res["diagnostics"][0][0], "invalid-document", t)
            self.assertTrue(res["diagnostics"][0][2].startswith("/training"), (t, res))
            self.assertNotIn("training", res)

    def test_base_document_invalid_first(self):
        d = self.base({"zero": 9})
        d["mesh"] = {"dp": 0}
        res = run(d)
        self.assertEqual(res["diagnostics"][0][0], "invalid-document")
        self.assertFalse(res["diagnostics"][0][2].startswith("/training"))

    def test_invalid_training_before_ownership(self):
        d = self.base({"zero": 9})
        d["providers"] = {"sharding": {"nope": {"params": {}, "in_src": {}, "in_dst": {}}}}
        self.assertEqual(run(d)["diagnostics"][0][0], "invalid-document")
        d["training"] = {"zero": 1}
        res = run(d)
        self.assertFalse(res["complete"])
        self.assertEqual(res["diagnostics"][0][0], "unknown-module")
        self.assertNotIn("training", res)


class Cli(unittest.TestCase):
    def test_main(self):
        import subprocess
        import tempfile
        params, modules = linear_model(1, [4, 4])
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc({"dp": 2}, params, modules, training={"zero": 2}), f)
        try:
            out = subprocess.run([sys.executable, os.path.join(HERE, "training_reference.py"),
                                  f.name], capture_output=True, check=True).stdout
        finally:
            os.unlink(f.name)
        res = json.loads(out)
        self.assertEqual(list(res["training"]), ["worst", "max_total_bytes", "min_total_bytes",
                                                 "mean_total_bytes", "per_device_total_bytes"])
        self.assertEqual(list(res["training"]["worst"]),
                         ["device", "coordinates", "params", "grads", "master", "optimizer",
                          "gathered", "activations", "total"])


if __name__ == "__main__":
    unittest.main()
