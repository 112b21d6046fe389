//! Help, fixes (RFC 6902 JSON Patch operations) and diagnostic groups (since
//! 0.7), on golden cases read at run time from ../../tests/golden/cases:
//! every value against what `shardplan check --format json` prints for the
//! same document (the expected values below were taken from it) and against
//! the result's own JSON, which is those bytes.

mod common;

use common::{read_golden_case, Json};
use shardplan::{
    CheckOptions, CheckResult, DiagnosticGroup, Document, ErrorCode, FixOperation, ParseOptions,
    Severity,
};

fn check(name: &str) -> CheckResult {
    let doc = Document::parse(read_golden_case(name), &ParseOptions::default()).expect("parse");
    assert!(doc.is_valid().unwrap(), "{name} should parse");
    doc.check(&CheckOptions::default()).expect("check")
}

fn fix_move(from: &str, path: &str) -> FixOperation {
    FixOperation {
        op: "move".into(),
        path: path.into(),
        from: Some(from.into()),
        value: None,
    }
}

fn fix_replace(path: &str, value: &str) -> FixOperation {
    FixOperation {
        op: "replace".into(),
        path: path.into(),
        from: None,
        value: Some(value.into()),
    }
}

fn group(code: &str, pointer: &str, listed: &[usize]) -> DiagnosticGroup {
    DiagnosticGroup {
        code: code.into(),
        severity: Severity::Error,
        pointer: Some(pointer.into()),
        count: listed.len(),
        listed: listed.to_vec(),
    }
}

fn number(json: &Json) -> usize {
    match json {
        Json::Number(text) => text.parse().unwrap(),
        other => panic!("not a number: {other:?}"),
    }
}

fn optional_str(json: Option<&Json>) -> Option<&str> {
    match json {
        None | Some(Json::Null) => None,
        Some(value) => Some(value.as_str()),
    }
}

/// Every diagnostic's help and fix, and every group, equal the result JSON's
/// `"help"`, `"fix"` and `"groups"`; each fix operation prints as the bytes
/// of its JSON object there.
fn assert_agrees_with_the_json(result: &CheckResult) {
    let text = result.json().unwrap();
    let json = Json::parse(&text).unwrap();
    let diagnostics = result.diagnostics().unwrap();
    let want = json.get("diagnostics").as_array();
    assert_eq!(diagnostics.len(), want.len());
    for (d, want) in diagnostics.iter().zip(want) {
        assert_eq!(d.help.as_deref(), optional_str(want.find("help")), "{d}");
        let want_fix = want.find("fix").map_or(&[][..], Json::as_array);
        assert_eq!(d.fix.len(), want_fix.len(), "{d}");
        for (op, want_op) in d.fix.iter().zip(want_fix) {
            assert_eq!(op.op, want_op.get("op").as_str());
            assert_eq!(op.path, want_op.get("path").as_str());
            assert_eq!(op.from.as_deref(), optional_str(want_op.find("from")));
            let value = op.value.as_deref().map(|v| Json::parse(v).unwrap());
            assert_eq!(value.as_ref(), want_op.find("value"));
            assert!(text.contains(&op.to_string()), "{op} not in {text}");
        }
    }
    let groups = result.groups().unwrap();
    assert_eq!(groups.len(), result.group_count());
    let want = json.get("groups").as_array();
    assert_eq!(groups.len(), want.len());
    for (g, want) in groups.iter().zip(want) {
        assert_eq!(g.code, want.get("code").as_str());
        assert_eq!(g.severity.to_string(), want.get("severity").as_str());
        assert_eq!(g.pointer.as_deref(), optional_str(want.find("pointer")));
        assert_eq!(g.count, number(want.get("count")));
        let listed: Vec<usize> = want.get("listed").as_array().iter().map(number).collect();
        assert_eq!(g.listed, listed);
    }
    // Every diagnostic is in exactly one group, whose code and pointer it has.
    let mut seen = vec![0; diagnostics.len()];
    for g in &groups {
        assert_eq!(g.listed.len(), g.count);
        for &index in &g.listed {
            seen[index] += 1;
            assert_eq!(diagnostics[index].code, g.code);
            assert_eq!(diagnostics[index].pointer, g.pointer);
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
}

#[test]
fn a_misspelt_axis_has_help_and_a_move_fix() {
    let result = check("unknown-axis.typo.fail.json");
    assert_eq!(result.diagnostic_count(), 1);
    let d = result.diagnostic(0).unwrap();
    assert_eq!(d.code, "unknown-axis");
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean 'dp'? (the mesh's axes are 'dp', 'tp')")
    );
    assert_eq!(
        d.fix,
        vec![fix_move(
            "/providers/sharding/proj/params/weight/pd",
            "/providers/sharding/proj/params/weight/dp"
        )]
    );
    assert_eq!(
        d.fix[0].to_string(),
        r#"{"op":"move","from":"/providers/sharding/proj/params/weight/pd","path":"/providers/sharding/proj/params/weight/dp"}"#
    );
    // Display stays one line, without help or fix.
    assert_eq!(
        d.to_string(),
        "error[unknown-axis]: module layouts cannot declare storage/unknown axis 'pd' \
         (at /providers/sharding/proj/params/weight/pd)"
    );
    assert_eq!(
        result.groups().unwrap(),
        vec![group(
            "unknown-axis",
            "/providers/sharding/proj/params/weight/pd",
            &[0]
        )]
    );
    assert_agrees_with_the_json(&result);
}

#[test]
fn a_misspelt_parallel_axis_has_a_replace_fix_with_a_json_value() {
    let result = check("parallel-unknown-axis.typo.fail.json");
    let d = result.diagnostic(0).unwrap();
    assert_eq!(d.code, "parallel-unknown-axis");
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean 'tp'? (the mesh's axes are 'tp')")
    );
    // The value is JSON text: the string "tp" with its quotes.
    assert_eq!(
        d.fix,
        vec![fix_replace("/modules/linear/parallel/axes/0", "\"tp\"")]
    );
    assert_eq!(
        d.fix[0].to_string(),
        r#"{"op":"replace","path":"/modules/linear/parallel/axes/0","value":"tp"}"#
    );
    assert_eq!(
        result.groups().unwrap(),
        vec![group(
            "parallel-unknown-axis",
            "/modules/linear/parallel/axes/0",
            &[0]
        )]
    );
    assert_agrees_with_the_json(&result);
}

#[test]
fn a_misspelt_module_has_help_and_a_move_fix() {
    let result = check("unknown-module.typo.fail.json");
    let d = result.diagnostic(0).unwrap();
    assert_eq!(d.code, "unknown-module");
    assert_eq!(d.help.as_deref(), Some("did you mean 'proj'?"));
    assert_eq!(
        d.fix,
        vec![fix_move(
            "/providers/sharding/porj",
            "/providers/sharding/proj"
        )]
    );
    assert_agrees_with_the_json(&result);
}

#[test]
fn a_diagnostic_without_help_has_none_and_no_fix() {
    let result = check("unknown-parameter.typo.fail.json");
    let diagnostics = result.diagnostics().unwrap();
    assert_eq!(diagnostics.len(), 2);
    assert_eq!(diagnostics[0].code, "unknown-parameter");
    assert_eq!(
        diagnostics[0].help.as_deref(),
        Some("did you mean 'proj.weight'?")
    );
    assert_eq!(
        diagnostics[0].fix,
        vec![fix_move(
            "/providers/sharding/proj/params/weigth",
            "/providers/sharding/proj/params/weight"
        )]
    );
    assert_eq!(diagnostics[1].code, "omitted-parameters");
    assert_eq!(diagnostics[1].help, None);
    assert!(diagnostics[1].fix.is_empty());
    // Two causes, two groups, in the order of their first diagnostic.
    assert_eq!(
        result.groups().unwrap(),
        vec![
            group(
                "unknown-parameter",
                "/providers/sharding/proj/params/weigth",
                &[0]
            ),
            group(
                "omitted-parameters",
                "/providers/sharding/proj/params",
                &[1]
            ),
        ]
    );
    assert_agrees_with_the_json(&result);
}

#[test]
fn an_over_wide_glob_gives_groups_of_several_diagnostics() {
    let result = check("overlapping-communication.glob.fail.json");
    assert_eq!(result.diagnostic_count(), 42);
    let groups = result.groups().unwrap();
    assert_eq!(result.group_count(), 9);
    assert_eq!(
        groups[0],
        group(
            "overlapping-communication",
            "/providers/native/0/parallel",
            &[0, 1, 2, 3, 4, 5]
        )
    );
    assert_eq!(
        groups[1],
        group(
            "unknown-forward-input",
            "/providers/native/0/sharding/in_src/x",
            &[6, 7, 8, 9, 10, 11]
        )
    );
    // Not adjacent: the same cause found again for the second expert.
    assert_eq!(
        groups[2],
        group(
            "nested-duplicate",
            "/providers/native/0/sharding/params/gate_proj.weight",
            &[12, 27]
        )
    );
    assert_eq!(
        groups[8],
        group(
            "omitted-parameters",
            "/providers/native/0/sharding/params",
            &[18, 22, 26, 33, 37, 41]
        )
    );
    let counts: Vec<usize> = groups.iter().map(|g| g.count).collect();
    assert_eq!(counts, [6, 6, 2, 2, 2, 6, 6, 6, 6]);
    assert_eq!(result.group(2).unwrap(), groups[2]);
    assert_eq!(
        groups[0].to_string(),
        "error[overlapping-communication] x6 (at /providers/native/0/parallel)"
    );
    // The group's diagnostics share one help and one fix: narrow the glob.
    let first = result.diagnostic(0).unwrap();
    assert_eq!(
        first.help.as_deref(),
        Some(
            "'layers.*.mlp.experts.*' also matches the modules nested in those it matches \
             (fnmatch's '*' crosses dots); \"match\": ['layers.*.mlp.experts.[0-9]'] matches \
             only the outer ones"
        )
    );
    assert_eq!(
        first.fix,
        vec![fix_replace(
            "/providers/native/0/match",
            r#"["layers.*.mlp.experts.[0-9]"]"#
        )]
    );
    for &index in &groups[0].listed {
        let d = result.diagnostic(index).unwrap();
        assert_eq!((&d.help, &d.fix), (&first.help, &first.fix));
    }
    assert_agrees_with_the_json(&result);
}

#[test]
fn an_ok_result_and_a_malformed_document_have_the_groups_they_should() {
    let doc = Document::parse(
        r#"{"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "m", "modules": {"m": {}}}"#,
        &ParseOptions::default(),
    )
    .unwrap();
    let result = doc.check(&CheckOptions::default()).unwrap();
    assert!(result.ok());
    assert_eq!(result.group_count(), 0);
    assert!(result.groups().unwrap().is_empty());

    let result = Document::parse("{not json", &ParseOptions::default())
        .unwrap()
        .check(&CheckOptions::default())
        .unwrap();
    let groups = result.groups().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].code, "invalid-document");
    assert_eq!(groups[0].listed, vec![0]);
    assert_agrees_with_the_json(&result);
}

#[test]
fn a_planned_result_has_help_fix_and_groups_too() {
    let doc = Document::parse(
        read_golden_case("unknown-axis.typo.fail.json"),
        &ParseOptions::default(),
    )
    .unwrap();
    let planned = doc.plan(&CheckOptions::default()).unwrap();
    assert!(!planned.ok());
    assert!(planned.group_count() >= 1);
    assert_agrees_with_the_json(&planned);
}

#[test]
fn a_group_index_past_the_end_is_out_of_range() {
    let result = check("unknown-axis.typo.fail.json");
    let err = result.group(1).unwrap_err();
    assert_eq!(err.code, ErrorCode::OutOfRange);
    assert!(err.message.contains("group index 1"), "{}", err.message);
    let err = result.group(usize::MAX).unwrap_err();
    assert_eq!(err.code, ErrorCode::OutOfRange);
}

#[test]
fn help_fix_and_groups_are_the_same_for_every_thread_count() {
    let doc = Document::parse(
        read_golden_case("overlapping-communication.glob.fail.json"),
        &ParseOptions::default(),
    )
    .unwrap();
    let reference = doc.check(&CheckOptions { threads: 1 }).unwrap();
    for threads in [0, 2, 4] {
        let result = doc.check(&CheckOptions { threads }).unwrap();
        assert_eq!(result.diagnostics(), reference.diagnostics());
        assert_eq!(result.groups(), reference.groups());
    }
}
