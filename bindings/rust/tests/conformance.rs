//! The three conformance cases shared by every binding, read at run time from
//! ../../tests/conformance/{cases,expected}.

mod common;

use common::{read_case, read_expected, Json};
use shardplan::{CheckOptions, Document, ParseOptions, Severity};

fn check(name: &str) -> shardplan::CheckResult {
    let doc = Document::parse(read_case(name), &ParseOptions::default()).expect("parse");
    assert!(doc.is_valid().unwrap(), "{name} should parse");
    doc.check(&CheckOptions::default()).expect("check")
}

fn assert_fails_like_expected(name: &str) {
    let expected = read_expected(name);
    assert!(!expected.get("ok").as_bool());
    let result = check(name);
    assert!(!result.ok(), "{name} should fail");
    assert!(result.diagnostic_count() >= 1);
    let first = result.diagnostic(0).unwrap();
    let error = expected.get("error");
    assert_eq!(first.code, error.get("code").as_str());
    assert_eq!(first.message, error.get("message").as_str());
    assert_eq!(first.severity, Severity::Error);
    // diagnostics() agrees with diagnostic(i), and the JSON with both.
    let all = result.diagnostics().unwrap();
    assert_eq!(all.len(), result.diagnostic_count());
    assert_eq!(all[0], first);
    let json = Json::parse(&result.json().unwrap()).unwrap();
    assert_eq!(json.get("schema").as_str(), "shardplan.result.v1");
    assert!(!json.get("ok").as_bool());
    let diagnostics = json.get("diagnostics").as_array();
    assert_eq!(diagnostics.len(), all.len());
    assert_eq!(diagnostics[0].get("code").as_str(), first.code);
    assert_eq!(diagnostics[0].get("message").as_str(), first.message);
}

#[test]
fn case_000_tiny_llama_is_ok() {
    let name = "000-tiny-llama";
    let expected = read_expected(name);
    assert!(expected.get("ok").as_bool());
    let result = check(name);
    assert!(result.ok());
    assert_eq!(result.diagnostic_count(), 0);
    assert!(result.diagnostics().unwrap().is_empty());
    let json = Json::parse(&result.json().unwrap()).unwrap();
    assert_eq!(json.get("schema").as_str(), "shardplan.result.v1");
    assert!(json.get("ok").as_bool());
    assert!(json.get("diagnostics").as_array().is_empty());
    let owned = json.get("owned");
    let want = expected.get("owned");
    assert_eq!(owned.get("owned_names"), want.get("owned_names"));
    assert_eq!(owned.get("aliases"), want.get("aliases"));
}

#[test]
fn case_001_multiple_owners_fails() {
    assert_fails_like_expected("001-multiple-owners");
}

#[test]
fn case_005_native_overlaps_family_fails() {
    assert_fails_like_expected("005-native-overlaps-family");
}

#[test]
fn thread_count_does_not_change_the_result() {
    let doc = Document::parse(read_case("001-multiple-owners"), &ParseOptions::default()).unwrap();
    let reference = doc
        .check(&CheckOptions { threads: 1 })
        .unwrap()
        .json()
        .unwrap();
    for threads in [0, 2, 4] {
        assert_eq!(
            doc.check(&CheckOptions { threads })
                .unwrap()
                .json()
                .unwrap(),
            reference
        );
    }
}

#[test]
fn a_document_and_a_result_are_shared_between_threads() {
    let doc = Document::parse(read_case("000-tiny-llama"), &ParseOptions::default()).unwrap();
    let reference = doc.check(&CheckOptions::default()).unwrap();
    let want = reference.json().unwrap();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..5 {
                    let result = doc.check(&CheckOptions { threads: 1 }).unwrap();
                    assert_eq!(result.json().unwrap(), want);
                    assert_eq!(reference.json().unwrap(), want);
                }
            });
        }
    });
    // Results outlive their document.
    drop(doc);
    assert_eq!(reference.json().unwrap(), want);
}

#[test]
fn json_reader_reads_what_it_should() {
    let value = Json::parse(
        r#" {"a": [1, -2.5e3, true, false, null], "b": "x\u00e9\ud83d\ude00\n", "c": {}} "#,
    )
    .unwrap();
    assert_eq!(value.get("a").as_array().len(), 5);
    assert_eq!(value.get("b").as_str(), "xé😀\n");
    assert_eq!(value.get("c"), &Json::Object(vec![]));
    assert!(Json::parse("[1,]").is_err());
    assert!(Json::parse("{} x").is_err());
}
