//! Error paths: sp_error codes surface as `shardplan::Error`, malformed input
//! as a diagnostic, and the ABI check refuses a mismatch.

use shardplan::{
    check_abi, Builder, CheckOptions, Document, ErrorCode, Layout, ParseOptions, Port, Severity,
    EXPECTED_ABI_VERSION,
};

#[test]
fn bad_placement_is_invalid_argument() {
    let mut layout = Layout::new().unwrap();
    let err = layout
        .set_placement(Port::Params, "weight", "tp", "Shard(0)")
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert!(!err.message.is_empty());
    assert!(
        err.to_string().starts_with("shardplan: INVALID_ARGUMENT: "),
        "{err}"
    );
    // The layout is still usable.
    layout
        .set_placement(Port::Params, "weight", "tp", "S(0)")
        .unwrap();
}

#[test]
fn axis_placed_twice_is_invalid_argument() {
    let mut layout = Layout::new().unwrap();
    layout.set_placement(Port::InSrc, "x", "tp", "R").unwrap();
    let err = layout
        .set_placement(Port::InSrc, "x", "tp", "R")
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
}

#[test]
fn duplicate_mesh_axis_is_invalid_argument() {
    let mut b = Builder::new().unwrap();
    b.add_axis("tp", 2).unwrap();
    let err = b.add_axis("tp", 4).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    let err = b.add_axis("dp", 0).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
}

#[test]
fn duplicate_ids_are_invalid_argument() {
    let mut b = Builder::new().unwrap();
    b.add_module("m", "").unwrap();
    assert_eq!(
        b.add_module("m", "").unwrap_err().code,
        ErrorCode::InvalidArgument
    );
    b.add_parameter("w", Some(&[]), "").unwrap();
    assert_eq!(
        b.add_parameter("w", None, "").unwrap_err().code,
        ErrorCode::InvalidArgument
    );
}

#[test]
fn diagnostic_index_out_of_range() {
    let doc = Document::parse("{", &ParseOptions::default()).unwrap();
    let result = doc.check(&CheckOptions::default()).unwrap();
    assert_eq!(result.diagnostic_count(), 1);
    let err = result.diagnostic(1).unwrap_err();
    assert_eq!(err.code, ErrorCode::OutOfRange);
    assert_eq!(
        result.diagnostic(usize::MAX).unwrap_err().code,
        ErrorCode::OutOfRange
    );
}

#[test]
fn malformed_json_gives_one_invalid_document_diagnostic() {
    for text in ["{", "", "[1, 2]", "{\"schema\": \"shardplan.v2\"}"] {
        let doc = Document::parse(text, &ParseOptions::default()).unwrap();
        assert!(!doc.is_valid().unwrap(), "{text:?}");
        let result = doc.check(&CheckOptions::default()).unwrap();
        assert!(!result.ok());
        let all = result.diagnostics().unwrap();
        assert_eq!(all.len(), 1, "{text:?}: {all:?}");
        assert_eq!(all[0].code, "invalid-document");
        assert_eq!(all[0].severity, Severity::Error);
        assert!(!all[0].message.is_empty());
        assert!(result.json().unwrap().contains("\"invalid-document\""));
    }
}

#[test]
fn bytes_are_accepted_and_invalid_utf8_is_a_diagnostic() {
    let doc = Document::parse(
        b"{\"schema\": \"\xff\"}".as_slice(),
        &ParseOptions::default(),
    )
    .unwrap();
    assert!(!doc.is_valid().unwrap());
    let doc = Document::parse(String::from("{}").into_bytes(), &ParseOptions::default()).unwrap();
    assert!(!doc.is_valid().unwrap());
}

#[test]
fn parse_limits_are_passed_through() {
    // Nesting depth 3 (document, "modules", "m"); 2 module paths ("" and "c").
    let text = r#"{"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "m",
                   "modules": {"m": {"children": {"c": "c"}}, "c": {}}}"#;
    let parse = |options: ParseOptions| {
        let doc = Document::parse(text, &options).unwrap();
        let valid = doc.is_valid().unwrap();
        let result = doc.check(&CheckOptions::default()).unwrap();
        (valid, result.diagnostics().unwrap())
    };
    assert_eq!(parse(ParseOptions::default()), (true, vec![]));
    assert!(
        parse(ParseOptions {
            max_json_depth: 4,
            ..Default::default()
        })
        .0
    );
    for limited in [
        ParseOptions {
            max_json_depth: 2,
            ..Default::default()
        },
        ParseOptions {
            max_paths: 1,
            ..Default::default()
        },
    ] {
        let (valid, diagnostics) = parse(limited);
        assert!(!valid, "{limited:?}");
        assert_eq!(diagnostics.len(), 1, "{limited:?}");
        assert_eq!(diagnostics[0].code, "invalid-document", "{limited:?}");
    }
}

#[test]
fn abi_check_refuses_a_fake_version() {
    assert_eq!(shardplan::abi_version(), EXPECTED_ABI_VERSION);
    assert!(check_abi(EXPECTED_ABI_VERSION).is_ok());
    let err = check_abi(EXPECTED_ABI_VERSION + 1).unwrap_err();
    assert_eq!(err.code, ErrorCode::AbiMismatch);
    assert!(err.message.contains("ABI version 2"), "{}", err.message);
    assert!(
        err.message.contains("expects ABI version 1"),
        "{}",
        err.message
    );
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(boxed.to_string().contains("ABI_MISMATCH"));
}

#[test]
fn version_is_major_minor_patch() {
    let version = shardplan::version();
    assert_eq!(version.split('.').count(), 3, "{version}");
}
