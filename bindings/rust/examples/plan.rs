//! Plans a small model (an embedding owned by the model adapter, two linear
//! layers planned by a tensor-parallel template) and prints the plan, the
//! memory per device and the communication it implies.

use shardplan::{CheckOptions, Document, ParseOptions};

const MODEL: &str = r#"{"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
 "parameters": {"emb": {"shape": [64, 8], "dtype": "bfloat16"}, "up": {"shape": [32, 8]}, "down": {"shape": [8, 32]}},
 "root": "model",
 "modules": {"model": {"children": {"embed": "embed", "up_proj": "up", "down_proj": "down"}},
             "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
             "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up"}},
             "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}},
 "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
 "templates": [{"axis": "tp", "rules": {"up_proj": "colwise", "down_proj": "rowwise"}}]}"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let result = Document::parse(MODEL, &ParseOptions::default())?.plan(&CheckOptions::default())?;
    println!(
        "ok={} diagnostics={}",
        result.ok(),
        result.diagnostic_count()
    );
    for entry in result.plan_entries()? {
        println!("plan  {entry}");
    }
    let memory = result.memory()?.ok_or("no memory")?;
    println!(
        "memory: {} devices, unsharded {} B, max {} B (device {}), min {} B, mean {} B",
        memory.devices,
        memory.unsharded_bytes,
        memory.max_bytes,
        memory.max_device,
        memory.min_bytes,
        memory.mean_bytes
    );
    println!(
        "per device: {:?}",
        memory.per_device_bytes.unwrap_or_default()
    );
    for record in result.communications()? {
        println!("comm  {record}");
    }
    Ok(())
}
