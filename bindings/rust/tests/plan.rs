//! Planning (`Document::plan`, planner-v1): plan entries with provenance,
//! memory per device and communication records, against the result JSON.

mod common;

use common::Json;
use shardplan::{CheckOptions, Communication, Document, ErrorCode, ParseOptions, PlanEntry};

/// An embedding owned by the model adapter plus two linear layers planned by
/// a tensor-parallel template, on a dp=2 x tp=4 mesh.
const MODEL: &str = r#"{"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
 "parameters": {"emb": {"shape": [64, 8], "dtype": "bfloat16"}, "up": {"shape": [32, 8]}, "down": {"shape": [8, 32]}},
 "root": "model",
 "modules": {"model": {"children": {"embed": "embed", "up_proj": "up", "down_proj": "down"}},
             "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
             "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up"}},
             "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}},
 "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
 "templates": [{"axis": "tp", "rules": {"up_proj": "colwise", "down_proj": "rowwise"}}]}"#;

fn document(text: &str) -> Document {
    let doc = Document::parse(text, &ParseOptions::default()).expect("parse");
    assert!(doc.is_valid().unwrap());
    doc
}

fn number(json: &Json) -> &str {
    match json {
        Json::Number(text) => text,
        other => panic!("not a number: {other:?}"),
    }
}

fn entry(fqn: &str, provenance: &str) -> PlanEntry {
    PlanEntry {
        fqn: fqn.into(),
        provenance: provenance.into(),
    }
}

#[test]
fn plan_entries_in_plan_order_with_provenance() {
    let result = document(MODEL).plan(&CheckOptions::default()).unwrap();
    assert!(result.ok(), "{:?}", result.diagnostics().unwrap());
    assert_eq!(result.diagnostic_count(), 0);
    assert_eq!(result.plan_entry_count(), 3);
    let entries = result.plan_entries().unwrap();
    assert_eq!(
        entries,
        vec![
            entry("embed", "owned:model"),
            entry("up_proj", "template:tp:up_proj"),
            entry("down_proj", "template:tp:down_proj"),
        ]
    );
    for (index, want) in entries.iter().enumerate() {
        assert_eq!(&result.plan_entry(index).unwrap(), want);
    }
    assert_eq!(entries[1].to_string(), "up_proj (template:tp:up_proj)");
}

#[test]
fn memory_per_device() {
    let result = document(MODEL).plan(&CheckOptions::default()).unwrap();
    let memory = result
        .memory()
        .unwrap()
        .expect("a planned result has memory");
    assert_eq!(memory.devices, 8);
    // 64*8 bfloat16 + 32*8 float32 + 8*32 float32.
    assert_eq!(memory.unsharded_bytes, 64 * 8 * 2 + 32 * 8 * 4 + 8 * 32 * 4);
    assert_eq!(memory.unsharded_bytes, 3072);
    let per_device = memory
        .per_device_bytes
        .clone()
        .expect("8 devices are listed");
    assert_eq!(per_device.len(), 8);
    assert_eq!(memory.max_bytes, *per_device.iter().max().unwrap());
    assert_eq!(memory.min_bytes, *per_device.iter().min().unwrap());
    // Every weight is split 4 ways over tp and replicated over dp.
    assert_eq!(per_device, vec![3072 / 4; 8]);
    assert_eq!(memory.mean_bytes, 768.0);
    assert_eq!(memory.max_device, 0);
}

#[test]
fn uneven_memory_keeps_mean_and_max_device() {
    // tp=3 over 4 rows: torch.chunk gives 2, 2, 0 rows of 4 float32.
    let text = r#"{"schema": "shardplan.v1", "mesh": {"tp": 3},
        "parameters": {"w": {"shape": [4, 4]}}, "root": "m",
        "modules": {"m": {"children": {"lin": "lin"}},
                    "lin": {"type": "Linear", "forward": ["x"], "params": {"weight": "w"}}},
        "templates": [{"axis": "tp", "rules": {"lin": "colwise"}}]}"#;
    let result = document(text).plan(&CheckOptions::default()).unwrap();
    let memory = result.memory().unwrap().unwrap();
    assert_eq!(memory.devices, 3);
    assert_eq!(memory.unsharded_bytes, 64);
    assert_eq!(memory.per_device_bytes.as_deref(), Some(&[32, 32, 0][..]));
    assert_eq!((memory.max_bytes, memory.min_bytes), (32, 0));
    assert_eq!(memory.max_device, 0);
    assert!((memory.mean_bytes - 64.0 / 3.0).abs() < 1e-9, "{memory:?}");
}

#[test]
fn communication_records() {
    let result = document(MODEL).plan(&CheckOptions::default()).unwrap();
    let records = result.communications().unwrap();
    assert_eq!(records.len(), result.communication_count());
    let all_reduce = Communication {
        fqn: "down_proj".into(),
        port: "out:output".into(),
        axis: "tp".into(),
        from: "P".into(),
        to: "R".into(),
        collective: "all_reduce".into(),
    };
    assert!(records.contains(&all_reduce), "{records:?}");
    for (index, record) in records.iter().enumerate() {
        assert_eq!(&result.communication(index).unwrap(), record);
    }
    assert_eq!(
        all_reduce.to_string(),
        "down_proj out:output tp: P -> R (all_reduce)"
    );
}

#[test]
fn accessors_agree_with_the_result_json() {
    let result = document(MODEL).plan(&CheckOptions::default()).unwrap();
    let text = result.json().unwrap();
    for key in [
        "\"plan\"",
        "\"provenance\"",
        "\"memory\"",
        "\"communication\"",
        "\"collectives\"",
    ] {
        assert!(text.contains(key), "{key} missing from {text}");
    }
    let json = Json::parse(&text).unwrap();
    assert_eq!(json.get("schema").as_str(), "shardplan.result.v1");
    assert!(json.get("ok").as_bool());

    // provenance: FQN -> [sources], in plan order.
    let Json::Object(provenance) = json.get("provenance") else {
        panic!("provenance is not an object");
    };
    let from_json: Vec<PlanEntry> = provenance
        .iter()
        .map(|(fqn, sources)| {
            let sources: Vec<&str> = sources.as_array().iter().map(Json::as_str).collect();
            entry(fqn, &sources.join(", "))
        })
        .collect();
    assert_eq!(from_json, result.plan_entries().unwrap());

    let memory = result.memory().unwrap().unwrap();
    let m = json.get("memory");
    assert_eq!(
        number(m.get("unsharded_bytes")),
        memory.unsharded_bytes.to_string()
    );
    assert_eq!(number(m.get("max_bytes")), memory.max_bytes.to_string());
    assert_eq!(number(m.get("min_bytes")), memory.min_bytes.to_string());
    assert_eq!(number(m.get("max_device")), memory.max_device.to_string());
    let mean: f64 = number(m.get("mean_bytes")).parse().unwrap();
    assert_eq!(mean, memory.mean_bytes);
    let per_device: Vec<String> = m
        .get("per_device_bytes")
        .as_array()
        .iter()
        .map(|v| number(v).to_string())
        .collect();
    let want: Vec<String> = memory
        .per_device_bytes
        .unwrap()
        .iter()
        .map(u64::to_string)
        .collect();
    assert_eq!(per_device, want);

    let records = json.get("communication").as_array();
    let accessed = result.communications().unwrap();
    assert_eq!(records.len(), accessed.len());
    for (record, want) in records.iter().zip(&accessed) {
        assert_eq!(record.get("fqn").as_str(), want.fqn);
        assert_eq!(record.get("port").as_str(), want.port);
        assert_eq!(record.get("axis").as_str(), want.axis);
        assert_eq!(record.get("from").as_str(), want.from);
        assert_eq!(record.get("to").as_str(), want.to);
        assert_eq!(record.get("collective").as_str(), want.collective);
    }
    assert_eq!(
        number(json.get("collectives").get("all_reduce").get("tp")),
        "1"
    );
}

#[test]
fn a_checked_result_has_no_plan() {
    let result = document(MODEL).check(&CheckOptions::default()).unwrap();
    assert!(result.ok());
    assert_eq!(result.memory().unwrap(), None);
    assert_eq!(result.plan_entry_count(), 0);
    assert!(result.plan_entries().unwrap().is_empty());
    assert_eq!(result.communication_count(), 0);
    assert!(result.communications().unwrap().is_empty());
    let text = result.json().unwrap();
    assert!(!text.contains("\"memory\""), "{text}");
}

#[test]
fn indices_out_of_range() {
    let result = document(MODEL).plan(&CheckOptions::default()).unwrap();
    let entries = result.plan_entry_count();
    let records = result.communication_count();
    for index in [entries, usize::MAX] {
        assert_eq!(
            result.plan_entry(index).unwrap_err().code,
            ErrorCode::OutOfRange
        );
    }
    for index in [records, usize::MAX] {
        assert_eq!(
            result.communication(index).unwrap_err().code,
            ErrorCode::OutOfRange
        );
    }
    let checked = document(MODEL).check(&CheckOptions::default()).unwrap();
    assert_eq!(
        checked.plan_entry(0).unwrap_err().code,
        ErrorCode::OutOfRange
    );
    assert_eq!(
        checked.communication(0).unwrap_err().code,
        ErrorCode::OutOfRange
    );
}

#[test]
fn planning_malformed_json_gives_the_invalid_document_diagnostic() {
    let doc = Document::parse("{", &ParseOptions::default()).unwrap();
    let result = doc.plan(&CheckOptions::default()).unwrap();
    assert!(!result.ok());
    let all = result.diagnostics().unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].code, "invalid-document");
    assert_eq!(result.memory().unwrap(), None);
    assert_eq!(result.plan_entry_count(), 0);
    assert_eq!(result.communication_count(), 0);
}

#[test]
fn thread_count_does_not_change_the_plan() {
    let doc = document(MODEL);
    let reference = doc
        .plan(&CheckOptions { threads: 1 })
        .unwrap()
        .json()
        .unwrap();
    for threads in [0, 2, 4] {
        assert_eq!(
            doc.plan(&CheckOptions { threads }).unwrap().json().unwrap(),
            reference,
            "threads={threads}"
        );
    }
}

#[test]
fn a_planned_result_outlives_its_document_and_is_shared_between_threads() {
    let result = document(MODEL).plan(&CheckOptions::default()).unwrap();
    let want = result.plan_entries().unwrap();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                assert_eq!(result.plan_entries().unwrap(), want);
                assert_eq!(result.memory().unwrap().unwrap().devices, 8);
                assert_eq!(result.communication_count(), 1);
            });
        }
    });
}

#[test]
fn a_document_with_its_own_plan_is_checked_not_planned() {
    use shardplan::{Builder, Layout, Port};
    let mut layout = Layout::new().unwrap();
    layout
        .set_placement(Port::Params, "weight", "tp", "S(0)")
        .unwrap()
        .add_entry(Port::InSrc, "x")
        .unwrap()
        .add_entry(Port::InDst, "x")
        .unwrap();
    let mut b = Builder::new().unwrap();
    b.add_axis("tp", 2)
        .unwrap()
        .add_parameter("w", Some(&[4, 4]), "")
        .unwrap()
        .add_module("root", "")
        .unwrap()
        .add_child("root", "lin", "lin")
        .unwrap()
        .add_module("lin", "Linear")
        .unwrap()
        .add_forward_arg("lin", "x")
        .unwrap()
        .add_module_param("lin", "weight", "w")
        .unwrap()
        .set_root("root")
        .unwrap()
        .add_plan_entry("lin", &layout)
        .unwrap();
    let doc = b.build(&ParseOptions::default()).unwrap();
    let planned = doc.plan(&CheckOptions::default()).unwrap();
    let checked = doc.check(&CheckOptions::default()).unwrap();
    assert_eq!(planned.json().unwrap(), checked.json().unwrap());
    assert_eq!(planned.ok(), checked.ok());
    assert_eq!(planned.memory().unwrap(), None);
    assert_eq!(planned.plan_entry_count(), 0);
    assert_eq!(planned.communication_count(), 0);
}
