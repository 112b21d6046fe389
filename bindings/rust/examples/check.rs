//! Checks a shardplan.v1 document: `cargo run --example check -- FILE`.
//! Prints the verdict and each diagnostic with its help and fix, where the
//! engine knows them; exits with 1 when the document fails.
use shardplan::{CheckOptions, Document, ParseOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: check FILE")?;
    let doc = Document::parse(std::fs::read(&path)?, &ParseOptions::default())?;
    let result = doc.check(&CheckOptions::default())?;
    println!(
        "{path}: ok={} diagnostics={} groups={}",
        result.ok(),
        result.diagnostic_count(),
        result.group_count()
    );
    for d in result.diagnostics()? {
        println!("  {d}");
        if let Some(help) = &d.help {
            println!("    help: {help}");
        }
        for op in &d.fix {
            println!("    fix: {op}");
        }
    }
    std::process::exit(if result.ok() { 0 } else { 1 });
}
