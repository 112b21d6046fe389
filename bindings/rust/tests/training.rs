//! Training memory (`CheckResult::training`, training-v1, since 0.9) against
//! the result JSON's `memory.training`, and the builder's training section
//! (`Builder::set_training`).

mod common;

use common::{read_golden_case, Json};
use shardplan::{Builder, CheckOptions, Document, ErrorCode, ParseOptions, Training};

/// A dp=2 x tp=4 mesh, zero 0 with a float32 master copy and selective
/// recompute: 423,624,704 bytes on every device, over its 384 MiB of
/// device_memory.
const EXCEEDS: &str = "exceeds-device-memory.fail.json";

fn planned(text: &str) -> shardplan::CheckResult {
    Document::parse(text, &ParseOptions::default())
        .unwrap()
        .plan(&CheckOptions::default())
        .unwrap()
}

fn number(json: &Json) -> u64 {
    match json {
        Json::Number(text) => text.parse().unwrap_or_else(|e| panic!("{text}: {e}")),
        other => panic!("not a number: {other:?}"),
    }
}

/// Asserts that `training` is what `json` (a `memory.training` object) says,
/// and that the coordinates are keyed by `axes`, in mesh order.
fn assert_matches(training: &Training, json: &Json, axes: &[&str]) {
    let worst = json.get("worst");
    assert_eq!(training.worst_device, number(worst.get("device")));
    let Json::Object(coordinates) = worst.get("coordinates") else {
        panic!("coordinates is not an object");
    };
    let keys: Vec<&str> = coordinates.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, axes);
    let values: Vec<u64> = coordinates.iter().map(|(_, v)| number(v)).collect();
    assert_eq!(training.worst_coordinates, values);
    for (key, value) in [
        ("params", training.params),
        ("grads", training.grads),
        ("master", training.master),
        ("optimizer", training.optimizer),
        ("gathered", training.gathered),
        ("activations", training.activations),
        ("total", training.total),
    ] {
        assert_eq!(value, number(worst.get(key)), "{key}");
    }
    assert_eq!(
        training.max_total_bytes,
        number(json.get("max_total_bytes"))
    );
    assert_eq!(
        training.min_total_bytes,
        number(json.get("min_total_bytes"))
    );
    let Json::Number(mean) = json.get("mean_total_bytes") else {
        panic!("mean_total_bytes is not a number");
    };
    assert_eq!(training.mean_total_bytes, mean.parse::<f64>().unwrap());
    match json.get("per_device_total_bytes") {
        Json::Null => assert_eq!(training.per_device_total_bytes, None),
        list => {
            let want: Vec<u64> = list.as_array().iter().map(number).collect();
            assert_eq!(training.per_device_total_bytes.as_ref(), Some(&want));
        }
    }
}

#[test]
fn training_memory_equals_the_result_json() {
    let result = planned(&read_golden_case(EXCEEDS));
    assert!(!result.ok());
    let diagnostics = result.diagnostics().unwrap();
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].code, "exceeds-device-memory");
    assert_eq!(
        diagnostics[0].pointer.as_deref(),
        Some("/training/device_memory")
    );

    let training = result.training().unwrap().expect("a training section");
    let json = Json::parse(&result.json().unwrap()).unwrap();
    assert_matches(&training, json.get("memory").get("training"), &["dp", "tp"]);
    assert_eq!(training.worst_device, 0);
    assert_eq!(training.worst_coordinates, vec![0, 0]);
    assert_eq!(training.total, 423_624_704);
    assert!(training.total > 384 << 20);
    assert_eq!(
        training.total,
        training.params
            + training.grads
            + training.master
            + training.optimizer
            + training.gathered
            + training.activations
    );
    let per_device = training.per_device_total_bytes.clone().unwrap();
    assert_eq!(per_device.len(), 8);
    assert_eq!(
        per_device[training.worst_device as usize],
        training.max_total_bytes
    );
    // The same values on every read.
    assert_eq!(result.training().unwrap(), Some(training));
}

#[test]
fn the_pass_twin_fits() {
    let result = planned(&read_golden_case("exceeds-device-memory.pass.json"));
    assert!(result.ok(), "{:?}", result.diagnostics().unwrap());
    let training = result.training().unwrap().unwrap();
    let json = Json::parse(&result.json().unwrap()).unwrap();
    assert_matches(&training, json.get("memory").get("training"), &["dp", "tp"]);
    assert!(training.max_total_bytes <= 512 << 20);
}

#[test]
fn a_result_without_a_training_section_has_none() {
    // Planned, with memory, but no training section.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tiny-plan.json");
    let result = planned(&std::fs::read_to_string(path).unwrap());
    assert!(result.memory().unwrap().is_some());
    assert_eq!(result.training().unwrap(), None);
    assert!(!result.json().unwrap().contains("\"training\""));
    // A training section, but no plan made: checked, or not a valid document.
    let doc = Document::parse(read_golden_case(EXCEEDS), &ParseOptions::default()).unwrap();
    let checked = doc.check(&CheckOptions::default()).unwrap();
    assert_eq!(checked.training().unwrap(), None);
    assert_eq!(planned("{not json").training().unwrap(), None);
}

#[test]
fn per_device_totals_are_listed_up_to_65536_devices() {
    let text = read_golden_case(EXCEEDS);
    assert!(text.contains("\"dp\": 2,"));
    for (dp, listed) in [(16384u64, true), (16385, false)] {
        let result = planned(&text.replace("\"dp\": 2,", &format!("\"dp\": {dp},")));
        let training = result.training().unwrap().unwrap();
        let json = Json::parse(&result.json().unwrap()).unwrap();
        assert_matches(&training, json.get("memory").get("training"), &["dp", "tp"]);
        assert_eq!(training.max_total_bytes, 423_624_704);
        match training.per_device_total_bytes {
            Some(list) => {
                assert!(listed);
                assert_eq!(list, vec![423_624_704; dp as usize * 4]);
            }
            None => assert!(!listed, "dp={dp}"),
        }
    }
}

#[test]
fn builder_sets_the_training_section_once() {
    let mut b = Builder::new().unwrap();
    b.add_axis("dp", 4)
        .unwrap()
        .add_module("root", "Model")
        .unwrap()
        .set_root("root")
        .unwrap();
    // Refused at the call, leaving nothing.
    let err = b.set_training(r#"{"zero": 4}"#).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert_eq!(
        err.message,
        "'zero' must be an integer from 0 to 3 (at /training/zero)"
    );
    let err = b.set_training("[]").unwrap_err();
    assert_eq!(
        err.message,
        "expected an object, got an array (at /training)"
    );
    assert!(!b.to_json().unwrap().contains("\"training\""));
    // Once.
    b.set_training(r#"{"zero": 3, "shard_axes": ["dp"]}"#)
        .unwrap();
    let err = b.set_training("{}").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert_eq!(err.message, "the document already has a training section");
    let text = b.to_json().unwrap();
    let section = Json::parse(&text).unwrap().get("training").clone();
    assert_eq!(number(section.get("zero")), 3);
    let result = b
        .build(&ParseOptions::default())
        .unwrap()
        .check(&CheckOptions::default())
        .unwrap();
    assert!(result.ok(), "{:?}", result.diagnostics().unwrap());
}

#[test]
fn builder_checks_shard_axes_against_the_mesh_at_build() {
    let mut b = Builder::new().unwrap();
    b.add_module("root", "")
        .unwrap()
        .set_root("root")
        .unwrap()
        .set_training(r#"{"shard_axes": ["dp"]}"#)
        .unwrap();
    let result = b
        .build(&ParseOptions::default())
        .unwrap()
        .check(&CheckOptions::default())
        .unwrap();
    let diagnostics = result.diagnostics().unwrap();
    assert_eq!(diagnostics[0].code, "invalid-document");
    assert!(
        diagnostics[0]
            .message
            .contains("shard axis 'dp' is not a mesh axis"),
        "{}",
        diagnostics[0].message
    );
}

#[test]
fn a_built_document_with_training_plans_as_its_json_twin() {
    let section = r#"{"zero": 1, "master_dtype": "float32", "device_memory": 256}"#;
    let twin = format!(
        r#"{{"schema": "shardplan.v1", "mesh": {{"dp": 2}},
        "parameters": {{"w": {{"shape": [4, 4], "dtype": "bfloat16"}}}}, "root": "root",
        "modules": {{"root": {{"children": {{"lin": "lin"}}}},
                    "lin": {{"type": "Linear", "forward": ["x"], "params": {{"weight": "w"}}}}}},
        "training": {section}}}"#
    );
    let mut b = Builder::new().unwrap();
    b.add_axis("dp", 2)
        .unwrap()
        .add_parameter("w", Some(&[4, 4]), "bfloat16")
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
        .set_training(section)
        .unwrap();
    let built = b
        .build(&ParseOptions::default())
        .unwrap()
        .plan(&CheckOptions::default())
        .unwrap();
    let want = planned(&twin);
    assert_eq!(built.json().unwrap(), want.json().unwrap());
    assert_eq!(
        built.json().unwrap(),
        planned(&b.to_json().unwrap()).json().unwrap()
    );
    let training = built.training().unwrap().expect("a training section");
    assert_eq!(Some(training.clone()), want.training().unwrap());
    assert_eq!(training.worst_coordinates.len(), 1);
    // 32 bytes of bfloat16 weights, their gradients, and (zero 1 over dp=2)
    // half of the float32 master copy and of the two AdamW states.
    assert_eq!((training.params, training.grads), (32, 32));
    assert_eq!((training.master, training.optimizer), (32, 64));
}
